import CompressNIO
import HTTPTypes
import NIOCore

/// Decodes a gzip or deflate response body as it is read, in bounded memory.
///
/// Kite decodes bodies itself rather than in the engine, so that:
/// - multi-member gzip (RFC 1952 §2.2) decodes to all its members, as `gzip -d` does;
/// - the response size limit and progress count decoded bytes, chunk by chunk (at most
///   ``outputChunkSize`` bytes are produced per step, however much one input chunk inflates);
/// - the inflation ratio is checked only after ``Session/Configuration/Decompression`` `ratioCheckedAfter`
///   decoded bytes, so legitimate repetitive bodies (JSON arrays of similar objects inflate 100–400×)
///   pass and a bomb still stops early.
///
/// zlib comes through CompressNIO's `ZlibDecompressor` (the test server already depends on it);
/// NIOHTTPCompression's decompressor is the engine's own and rejects multi-member gzip.
final class BodyDecoder {
    enum Format: Equatable {
        case gzip
        /// HTTP's `deflate`: zlib-wrapped (RFC 1950), or raw deflate as some servers send it.
        case deflate
    }

    static let outputChunkSize = 64 * 1024

    private var source: ByteChunks.AsyncIterator
    private let format: Format
    private let maximumRatio: Int64
    private let ratioCheckedAfter: Int64
    private var decompressor: ZlibDecompressor?
    private var pending: ByteBuffer?
    /// Bytes kept until the next chunk decides what they are: a lone 0x1F after a gzip member ended (does a member
    /// start?), or a `deflate` body's first byte (is it zlib-wrapped?).
    private var carried: ByteBuffer?
    private var compressedBytes: Int64 = 0
    /// The compressed bytes inflated so far: the ratio's base. (Counting whole chunks as they arrive would let a
    /// large chunk, such as a 256 KiB read, hide the ratio until far more than the floor was decoded.)
    private var inflatedBytes: Int64 = 0
    private var decodedBytes: Int64 = 0
    /// The last member ended and what followed was not another gzip member: the rest is ignored.
    private var ignoringTrailer = false
    private let allocator = ByteBufferAllocator()

    init(_ source: ByteChunks, format: Format, maximumRatio: Int, ratioCheckedAfter: Int64) {
        self.source = source.makeAsyncIterator()
        self.format = format
        self.maximumRatio = Int64(max(1, maximumRatio))
        self.ratioCheckedAfter = max(0, ratioCheckedAfter)
    }

    /// The coding of a response body Kite decodes, or `nil` to deliver it as sent (no body, no
    /// coding, `identity`, or codings Kite does not decode such as `br` or stacked codings).
    static func format(of response: HTTPResponse, method: HTTPRequest.Method) -> Format? {
        if BodyCounter.hasNoBody(response, method: method) { return nil }
        guard let value = response.headerFields[.contentEncoding] else { return nil }
        switch value.trimmingCharacters(in: .whitespaces).lowercased() {
        case "gzip", "x-gzip": return .gzip
        case "deflate": return .deflate
        default: return nil
        }
    }

    /// `body` decoded; each call of the result's iterator yields at most ``outputChunkSize`` bytes.
    static func decoding(
        _ body: ByteChunks,
        format: Format,
        maximumRatio: Int,
        ratioCheckedAfter: Int64
    ) -> ByteChunks {
        ByteChunks(makeNext: {
            BodyDecoder(body, format: format, maximumRatio: maximumRatio, ratioCheckedAfter: ratioCheckedAfter).next
        })
    }

    func next() async throws -> ByteBuffer? {
        while true {
            if !self.ignoringTrailer, var input = self.pending, input.readableBytes > 0 {
                self.pending = nil
                let output = try self.inflate(&input)
                self.pending = input
                if let output { return output }
                continue
            }
            self.pending = nil
            guard let chunk = try await self.source.next() else {
                try self.checkComplete()
                return nil
            }
            self.compressedBytes += Int64(chunk.readableBytes)
            if !self.ignoringTrailer, chunk.readableBytes > 0 {
                if var carried = self.carried {
                    // The previous chunk ended in bytes that decide nothing alone (a gzip magic number's first byte, a
                    // deflate body's first byte).
                    self.carried = nil
                    var chunk = chunk
                    carried.writeBuffer(&chunk)
                    self.pending = carried
                } else {
                    self.pending = chunk
                }
            }
        }
    }

    /// Inflates from `input` into one output chunk; `nil` when this step produced nothing (input used
    /// up, or a member ended and the next one starts).
    private func inflate(_ input: inout ByteBuffer) throws -> ByteBuffer? {
        if self.decompressor == nil, self.format == .deflate, input.readableBytes < 2 {
            // Whether `deflate` is zlib-wrapped shows in its first two bytes: decide with the next chunk.
            self.carried = input
            input.moveReaderIndex(to: input.writerIndex)
            return nil
        }
        let decompressor = try self.currentDecompressor(startingWith: input)
        var output = self.allocator.buffer(capacity: Self.outputChunkSize)
        let before = input.readableBytes
        do {
            try decompressor.inflate(from: &input, to: &output)
        } catch let error as CompressNIOError where error == .bufferOverflow || error == .inputBufferOverflow {
            // The output chunk is full, or the input is used up: both are progress, not failures.
        } catch {
            throw self.failure("the body is not valid \(self.codingName) data", underlying: error)
        }
        if output.readableBytes == 0, input.readableBytes == before {
            // No progress with input left: the member ended. Another gzip member may follow.
            if self.format == .gzip, input.readableBytes == 1,
                input.getInteger(at: input.readerIndex, as: UInt8.self) == 0x1F
            {
                // Maybe the start of another member's magic number: decide with the next chunk.
                self.carried = input
                input.moveReaderIndex(to: input.writerIndex)
                return nil
            }
            if self.format == .gzip, input.readableBytes >= 2,
                input.getInteger(at: input.readerIndex, as: UInt16.self) == 0x1F8B
            {
                do {
                    try decompressor.reset()
                } catch {
                    throw self.failure("the body's next gzip member could not be started", underlying: error)
                }
                return nil
            }
            // Bytes after the last member (padding some servers add) are ignored, as gzip(1) and browsers do.
            self.ignoringTrailer = true
            input.moveReaderIndex(to: input.writerIndex)
            return nil
        }
        self.inflatedBytes += Int64(before - input.readableBytes)
        guard output.readableBytes > 0 else { return nil }
        self.decodedBytes += Int64(output.readableBytes)
        if self.decodedBytes > self.ratioCheckedAfter,
            self.decodedBytes / max(1, self.inflatedBytes) > self.maximumRatio
        {
            throw KiteError(
                code: .decompressionFailed,
                message: "the \(self.codingName) body inflated more than \(self.maximumRatio) times "
                    + "(\(self.decodedBytes) bytes from \(self.inflatedBytes)) past its first "
                    + "\(self.ratioCheckedAfter) decoded bytes, like a decompression bomb; raise "
                    + "Session.Configuration.decompression's maximumRatio if such bodies are expected"
            )
        }
        return output
    }

    private func currentDecompressor(startingWith input: ByteBuffer) throws -> ZlibDecompressor {
        if let decompressor = self.decompressor { return decompressor }
        let algorithm: ZlibAlgorithm
        switch self.format {
        case .gzip:
            algorithm = .gzip
        case .deflate:
            // A zlib header: CM = 8 and the 16-bit header a multiple of 31 (RFC 1950 §2.2).
            let header = input.getInteger(at: input.readerIndex, as: UInt16.self) ?? 0
            algorithm = (header >> 8) & 0x0F == 8 && header % 31 == 0 ? .zlib : .deflate
        }
        do {
            let decompressor = try ZlibDecompressor(algorithm: algorithm)
            self.decompressor = decompressor
            return decompressor
        } catch {
            throw self.failure("the \(self.codingName) decoder could not be started", underlying: error)
        }
    }

    /// At the end of the body: a body that stopped inside a compressed stream is truncated.
    private func checkComplete() throws {
        guard self.compressedBytes > 0, !self.ignoringTrailer else { return }
        // Every non-empty chunk went through `inflate`, which made the decompressor.
        guard let decompressor = self.decompressor else {
            throw self.failure("the \(self.codingName) body ended before its data was complete", underlying: nil)
        }
        // A finished stream takes no more input; one that is still open takes (or rejects) a byte.
        var probe = self.allocator.buffer(capacity: 1)
        probe.writeInteger(UInt8(0))
        var output = self.allocator.buffer(capacity: 64)
        var complete = true
        do {
            try decompressor.inflate(from: &probe, to: &output)
            complete = probe.readableBytes == 1 && output.readableBytes == 0
        } catch {
            complete = false
        }
        if !complete {
            throw self.failure("the \(self.codingName) body ended before its data was complete", underlying: nil)
        }
    }

    private var codingName: String {
        self.format == .gzip ? "gzip" : "deflate"
    }

    private func failure(_ message: String, underlying: (any Error)?) -> KiteError {
        KiteError(code: .decompressionFailed, message: message, underlyingError: underlying)
    }
}
