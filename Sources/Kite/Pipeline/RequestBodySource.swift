import Foundation
import NIOCore
import NIOFoundationCompat

/// Where a request's body comes from: the draft (parameters encoded in memory, or none), or what an upload
/// was given. The build stage makes the attempt's body from it, so an attempt that is retried or redirected
/// gets a fresh one.
enum RequestBodySource: Sendable {
    /// The draft's body, in memory (or none).
    case draft
    case data(Data)
    /// A caller's async sequence: sent once.
    case stream(OneShotBody)
    case file(URL)
    /// A form, encoded in memory when it is at most `threshold` bytes and has no stream parts.
    case multipart(MultipartFormData, threshold: UInt64)

    /// The body of one attempt of a request made from `draft`.
    func makeBody(
        for draft: RequestDraft,
        summary: @autoclosure () -> RequestSummary
    ) throws(KiteError) -> TransportRequestBody? {
        let chunkSize = UploadRequest.chunkSize
        switch self {
        case .draft:
            return draft.body.map { .bytes(ByteBuffer(data: $0)) }
        case .data(let data):
            let buffer = ByteBuffer(data: data)
            return .stream(length: Int64(buffer.readableBytes)) {
                ByteChunks(chunks: UploadRequest.slices(of: buffer, size: chunkSize))
            }
        case .stream(let body):
            let summary = summary()
            return .stream(length: body.length, replayable: false) { body.makeChunks(summary: summary) }
        case .file(let fileURL):
            // The file checks and reads are shared with multipart file parts; their errors are this
            // upload's (`uploadFailed`), keeping the failure's reason as the underlying error.
            let file: MultipartFormData.FileSource
            switch MultipartFormData.checkFile(fileURL, role: "the upload body") {
            case .success(let checked): file = checked
            case .failure(let error): throw Self.uploadError(error)
            }
            return .stream(length: file.size) {
                ByteChunks(makeNext: {
                    let reader = MultipartBodyReader(segments: [.file(file, label: "")], chunkSize: chunkSize)
                    return { () async throws -> ByteBuffer? in
                        do throws(KiteError) {
                            return try await reader.next()
                        } catch {
                            throw Self.uploadError(error)
                        }
                    }
                })
            }
        case .multipart(let form, let threshold):
            if let error = form.appendError { throw error }
            if form.isReplayable, form.contentLength <= threshold {
                let encoded = ByteBuffer(data: try form.encode())
                return .stream(length: Int64(encoded.readableBytes)) {
                    ByteChunks(chunks: UploadRequest.slices(of: encoded, size: chunkSize))
                }
            }
            let chunks = try form.makeBodyChunks(chunkSize: chunkSize)
            return .stream(length: form.contentLength, replayable: form.isReplayable) { chunks }
        }
    }

    private static func uploadError(_ error: KiteError) -> KiteError {
        KiteError(code: .uploadFailed, message: error.message, underlyingError: error.underlyingError)
    }
}
