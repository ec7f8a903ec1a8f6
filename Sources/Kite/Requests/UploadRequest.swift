import Foundation
import HTTPTypes
import NIOConcurrencyHelpers
import NIOCore
import NIOFoundationCompat

/// A data request whose body comes from `Data`, a file, an async byte sequence or a multipart form,
/// streamed to the server as the engine pulls it, with upload progress.
///
/// ```swift
/// let receipt = try await session.upload(Data(repeating: 7, count: 1 << 20), to: "http://127.0.0.1:8080/upload")
///     .uploadProgress { print($0) }
///     .validate()
///     .serializingJSON()
///     .value
/// ```
// @unchecked: adds no stored state to DataRequest, whose mutable state is behind its lock.
public final class UploadRequest: DataRequest, @unchecked Sendable {
    /// The size of the slices an in-memory body is handed to the engine in, so progress moves smoothly.
    static let chunkSize = 64 * 1024

    init(session: Session, draft: Result<RequestDraft, KiteError>, source: RequestBodySource) {
        super.init(session: session, draft: draft, body: source)
    }
}

/// A caller's async byte sequence as a body, checked against its declared length. Read once and refused (with
/// `bodyNotReplayable`) if a redirect needs it again, unless it is `replayable`: a sequence that can be iterated
/// again from the start (a generated client's `HTTPBody` with `.multiple` iteration), read anew for each attempt.
final class OneShotBody: Sendable {
    let length: Int64?
    let replayable: Bool
    private let makeIterator: @Sendable () -> (() async throws -> ByteBuffer?)
    private let used = NIOLockedValueBox(false)

    /// The largest buffer one element of the sequence is handed to the engine in: a larger element is copied in
    /// pieces of this size, as it is pulled. A `ByteBuffer` holds less than 4 GiB (NIO traps on a larger capacity),
    /// and a piece the engine keeps keeps only itself.
    static let largestPiece = 1 << 20

    /// - Parameter pieceSize: The largest buffer an element is handed over in; ``largestPiece`` but in tests.
    init<Stream: AsyncSequence & Sendable>(
        _ stream: Stream,
        length: Int64?,
        replayable: Bool = false,
        pieceSize: Int = OneShotBody.largestPiece
    ) where Stream.Element: DataProtocol {
        self.length = length
        self.replayable = replayable
        self.makeIterator = {
            var iterator = stream.makeAsyncIterator()
            // The element being handed over in pieces, and where its next piece starts.
            var pending: (bytes: Stream.Element, start: Stream.Element.Index)?
            return {
                let (bytes, start): (Stream.Element, Stream.Element.Index)
                if let pending {
                    (bytes, start) = pending
                } else {
                    guard let next = try await iterator.next() else { return nil }
                    guard next.count > pieceSize else { return ByteBuffer(bytes: next) }
                    (bytes, start) = (next, next.startIndex)
                }
                let end = bytes.index(start, offsetBy: pieceSize, limitedBy: bytes.endIndex) ?? bytes.endIndex
                pending = end < bytes.endIndex ? (bytes, end) : nil
                return ByteBuffer(bytes: bytes[start..<end])
            }
        }
    }

    func makeChunks(summary: RequestSummary) -> ByteChunks {
        let first =
            self.replayable
            || self.used.withLockedValue { used in
                defer { used = true }
                return !used
            }
        guard first else {
            return ByteChunks(makeNext: {
                {
                    throw KiteError(
                        code: .bodyNotReplayable,
                        message: "the upload stream was already sent and cannot be sent again after a redirect; "
                            + "upload Data or a file to allow that",
                        request: summary
                    )
                }
            })
        }
        let length = self.length
        let makeIterator = self.makeIterator
        return ByteChunks(makeNext: {
            let next = makeIterator()
            var produced: Int64 = 0
            return { () async throws -> ByteBuffer? in
                let chunk: ByteBuffer?
                do {
                    chunk = try await next()
                } catch let error as KiteError {
                    throw error
                } catch {
                    throw KiteError(
                        code: .uploadFailed,
                        message: "the upload stream failed after \(produced) bytes: \(error)",
                        request: summary,
                        underlyingError: error
                    )
                }
                guard let chunk else {
                    if let length, produced != length {
                        throw Self.lengthMismatch(produced: produced, declared: length, summary: summary)
                    }
                    return nil
                }
                produced += Int64(chunk.readableBytes)
                if let length, produced > length {
                    throw Self.lengthMismatch(produced: produced, declared: length, summary: summary)
                }
                return chunk
            }
        })
    }

    private static func lengthMismatch(produced: Int64, declared: Int64, summary: RequestSummary) -> KiteError {
        let amount = produced > declared ? "more than \(declared)" : "\(produced)"
        return KiteError(
            code: .uploadFailed,
            message: "the upload stream produced \(amount) bytes, but its declared length is \(declared)",
            request: summary
        )
    }
}
