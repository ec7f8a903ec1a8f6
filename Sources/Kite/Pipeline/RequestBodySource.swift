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
    /// A caller's async sequence: sent once, unless it is replayable.
    case stream(OneShotBody)
    case file(URL)
    /// A form, encoded in memory when it is at most `threshold` bytes and has no stream parts.
    case multipart(MultipartFormData, threshold: UInt64)

    /// The body of one attempt of a request made from `draft`.
    ///
    /// The draft's body in memory is one write when it is at most one slice (``UploadRequest/chunkSize``) and
    /// `sliced` is `false`; otherwise it is handed over in slices, as an upload's data is, so suspension, rate
    /// limits (the caller sets `sliced` when the request has one) and progress steps apply to it as to a file.
    func makeBody(
        for draft: RequestDraft,
        sliced: @autoclosure () -> Bool,
        summary: @autoclosure () -> RequestSummary
    ) throws(KiteError) -> TransportRequestBody? {
        let chunkSize = UploadRequest.chunkSize
        switch self {
        case .draft:
            guard let body = draft.body else { return nil }
            guard body.count > chunkSize || sliced() else { return .bytes(ByteBuffer(data: body)) }
            return Self.chunks(of: body)
        case .data(let data):
            return Self.chunks(of: data)
        case .stream(let body):
            let summary = summary()
            return .stream(length: body.length, replayable: body.replayable) { body.makeChunks(summary: summary) }
        case .file(let fileURL):
            // The file checks and reads are shared with multipart file parts; their errors are this
            // upload's (`uploadFailed`), keeping the failure's reason as the underlying error.
            let file: MultipartFormData.FileSource
            switch MultipartFormData.checkFile(fileURL, role: "the upload body") {
            case .success(let checked): file = checked
            case .failure(let error): throw Self.uploadError(error)
            }
            return .stream(length: file.size) {
                ByteChunks.reading(file, chunkSize: chunkSize, failure: Self.uploadError)
            }
        case .multipart(let form, let threshold):
            if let error = form.appendError { throw error }
            if form.isReplayable, form.contentLength <= threshold {
                return Self.chunks(of: try form.encode())
            }
            let chunks = try form.makeBodyChunks(chunkSize: chunkSize)
            return .stream(length: form.contentLength, replayable: form.isReplayable) { chunks }
        }
    }

    /// `data` handed to the engine in chunks of ``UploadRequest/chunkSize``, each copied as it is pulled.
    private static func chunks(of data: Data) -> TransportRequestBody {
        .stream(length: Int64(data.count)) {
            ByteChunks(copying: data, size: UploadRequest.chunkSize)
        }
    }

    @Sendable
    private static func uploadError(_ error: KiteError) -> KiteError {
        KiteError(code: .uploadFailed, message: error.message, underlyingError: error.underlyingError)
    }
}
