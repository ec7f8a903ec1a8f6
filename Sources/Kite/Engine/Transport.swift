import Foundation
import HTTPTypes
import NIOCore

/// The engine under the pipeline: sends one request head and body, returns the response head and a
/// body stream. ``AHCTransport`` is the only implementation that talks to the network.
///
/// Transports report failures as ``KiteError`` (without the request summary, which the pipeline
/// adds); cancellation of the calling task cancels the exchange.
///
/// `send`, the sinks' `receive` and the body iterator are `nonisolated(nonsending)`: they run on the
/// pipeline task's executor instead of hopping to the global one and back around every call (five executor
/// switches fewer per request; the pipeline runs in a task of its own, so nothing else changes).
protocol Transport: Sendable {
    nonisolated(nonsending) func send(_ request: TransportRequest) async throws(KiteError) -> TransportResponse
    func shutdown() async throws(KiteError)
    /// Starts shutting down without waiting, for sessions released without `shutdown()`.
    func shutdownInBackground()
    /// What tells requests which connection served them, when the engine collects connection metrics.
    var connectionProbe: ConnectionProbe? { get }
}

extension Transport {
    var connectionProbe: ConnectionProbe? { nil }
}

/// What the pipeline hands the engine.
struct TransportRequest: Sendable {
    var head: HTTPRequest
    var body: TransportRequestBody?
    /// When the whole exchange must be over.
    var deadline: NIODeadline?
    /// How the engine hands the response body over.
    var bodyDelivery = BodyDelivery.asRead
    /// Told what the engine does that the pipeline does not see.
    var events: (any TransportEvents)?
}

/// What the engine tells the pipeline about an exchange while it runs. An object the pipeline already has (the
/// request), so that a request pays no allocation for it.
protocol TransportEvents: AnyObject, Sendable {
    /// The exchange failed on a pooled connection before any of the request was written (the server had closed
    /// it), and the engine sends it once more on a new connection, as curl and Go do.
    func transportWillResend(after error: KiteError)
}

/// How the engine hands a response body to the pipeline.
enum BodyDelivery: Sendable, Equatable {
    /// As the engine reads it, one socket read at a time: a body read once and whole (data requests).
    case asRead
    /// Gathered on the engine's event loop, which stops reading while the reader holds back; the idle-read
    /// timeout does not count that pause (see `BatchedBody`). `batched`: a waiting reader gets what gathered at
    /// 512 KiB, at the end, or 1 ms after the first part (a body bound for a file); otherwise each part at once
    /// (a stream, whose consumer sees every part as soon as it arrives).
    case gathered(batched: Bool)
}

/// A request body as the engine pulls it.
enum TransportRequestBody: Sendable {
    /// A body already in memory.
    case bytes(ByteBuffer)
    /// A body produced chunk by chunk; `makeChunks` is called again for every attempt, unless the
    /// body is not `replayable` (a caller's one-shot stream).
    case stream(length: Int64?, replayable: Bool = true, makeChunks: @Sendable () -> ByteChunks)

    var length: Int64? {
        switch self {
        case .bytes(let buffer): Int64(buffer.readableBytes)
        case .stream(let length, _, _): length
        }
    }

    var isReplayable: Bool {
        switch self {
        case .bytes: true
        case .stream(_, let replayable, _): replayable
        }
    }
}

/// What the engine returns once the response head has arrived.
struct TransportResponse: Sendable {
    var head: HTTPResponse
    var body: ByteChunks
}

/// A one-pass stream of byte chunks behind a closure: the type-erased form of a request or
/// response body.
struct ByteChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer

    private let makeNext: @Sendable () -> (() async throws -> ByteBuffer?)
    /// Whether the next chunk, the end or the failure is already there, so the next `next()` returns without
    /// waiting for the server; `nil` when the source cannot tell.
    let isReady: (@Sendable () -> Bool)?

    init(makeNext: @escaping @Sendable () -> (() async throws -> ByteBuffer?), isReady: (@Sendable () -> Bool)? = nil) {
        self.makeNext = makeNext
        self.isReady = isReady
    }

    /// Wraps any sendable sequence of byte buffers.
    init<Base: AsyncSequence & Sendable>(_ base: Base) where Base.Element == ByteBuffer {
        self.makeNext = {
            var iterator = base.makeAsyncIterator()
            return { try await iterator.next() }
        }
        self.isReady = nil
    }

    /// A stream of the given chunks, for bodies already in memory.
    init(chunks: [ByteBuffer]) {
        self.makeNext = {
            var iterator = chunks.makeIterator()
            return { iterator.next() }
        }
        self.isReady = { true }
    }

    /// `buffer` in slices of at most `size` bytes, sharing its storage.
    init(slicing buffer: ByteBuffer, size: Int) {
        var remaining = buffer
        var slices: [ByteBuffer] = []
        slices.reserveCapacity(buffer.readableBytes / size + 1)
        while let slice = remaining.readSlice(length: Swift.min(size, remaining.readableBytes)), slice.readableBytes > 0
        {
            slices.append(slice)
        }
        self.init(chunks: slices)
    }

    /// `data` in chunks of at most `size` bytes, each copied into a buffer of its own as it is pulled: a chunk
    /// kept by the engine keeps only itself, never the whole body (async-http-client 1.37 can keep the last chunk
    /// it was given forever: RELIABILITY.md).
    init(copying data: Data, size: Int) {
        self.makeNext = {
            var offset = data.startIndex
            return { () -> ByteBuffer? in
                guard offset < data.endIndex else { return nil }
                let end = data.index(offset, offsetBy: Swift.min(size, data.endIndex - offset))
                defer { offset = end }
                return ByteBuffer(bytes: data[offset..<end])
            }
        }
        self.isReady = nil
    }

    /// `file`'s bytes in chunks of `chunkSize`, read on NIO's blocking-I/O thread pool as they are pulled,
    /// from the start again for each iteration; a failure is reported as `failure` makes it.
    static func reading(
        _ file: MultipartFormData.FileSource,
        chunkSize: Int,
        failure: @escaping @Sendable (KiteError) -> KiteError
    ) -> ByteChunks {
        ByteChunks(makeNext: {
            let reader = MultipartBodyReader(segments: [.file(file, label: "")], chunkSize: chunkSize)
            return { () async throws -> ByteBuffer? in
                do throws(KiteError) {
                    return try await reader.next()
                } catch {
                    throw failure(error)
                }
            }
        })
    }

    /// Reads and drops up to `limit` bytes (a redirect's, a challenge's or a `304`'s body), so the connection can
    /// be reused; a longer body is abandoned.
    func discard(upTo limit: Int = 64 * 1024) async {
        var iterator = self.makeAsyncIterator()
        var discarded = 0
        while discarded < limit, let chunk = try? await iterator.next() {
            discarded += chunk.readableBytes
        }
    }

    struct AsyncIterator: AsyncIteratorProtocol {
        let nextChunk: () async throws -> ByteBuffer?

        nonisolated(nonsending) mutating func next() async throws -> ByteBuffer? {
            try await self.nextChunk()
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(nextChunk: self.makeNext())
    }
}
