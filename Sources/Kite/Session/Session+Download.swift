import Foundation
import HTTPTypes

extension Session {
    /// Downloads to a file: the body streams to a partial file (beside `destination`, so the move is a
    /// rename) and, once complete and valid, is moved to `destination` (or, without one, stays at a
    /// temporary URL the response reports).
    ///
    /// ```swift
    /// let fileURL = try await session.download(
    ///         "http://127.0.0.1:8080/bytes/1048576",
    ///         to: DownloadRequest.suggestedDownloadDestination(in: URL(fileURLWithPath: "/tmp/kite"))
    ///     )
    ///     .validate()
    ///     .serializingDownloadedFileURL()
    ///     .value
    /// ```
    ///
    /// - Parameters:
    ///   - convertible: The URL.
    ///   - method: The method; `GET` by default.
    ///   - parameters: Parameters to encode, or `nil`.
    ///   - encoding: How to encode them.
    ///   - headers: Header fields.
    ///   - interceptor: Adapts and retries this request, after the session's interceptor.
    ///   - requestModifier: A closure that can change the draft last.
    ///   - destination: Where the finished file goes; `nil` keeps it at a temporary URL.
    /// - Returns: The request.
    public func download(
        _ convertible: any URLConvertible,
        method: HTTPRequest.Method = .get,
        parameters: Parameters? = nil,
        encoding: any ParameterEncoding = URLEncoding.defaultAsParameterEncoding,
        headers: HTTPFields? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        requestModifier: RequestModifier? = nil,
        to destination: DownloadRequest.Destination? = nil
    ) -> DownloadRequest {
        let draft = Self.makeDraft(convertible, method: method, headers: headers, modifier: requestModifier) { draft in
            try encoding.encode(draft, with: parameters)
        }
        return DownloadRequest(session: self, draft: draft, destination: destination).intercepted(by: interceptor)
    }

    /// Downloads a `URLRequest` or your own router's request to a file.
    ///
    /// ```swift
    /// let request = URLRequest(url: URL(string: "http://127.0.0.1:8080/bytes/16")!)
    /// let fileURL = try await session.download(request).serializingDownloadedFileURL().value
    /// ```
    ///
    /// - Parameters:
    ///   - convertible: The request.
    ///   - interceptor: Adapts and retries this request, after the session's interceptor.
    ///   - requestModifier: A closure that can change the draft last.
    ///   - destination: Where the finished file goes; `nil` keeps it at a temporary URL.
    /// - Returns: The request.
    public func download(
        _ convertible: any URLRequestConvertible,
        interceptor: (any RequestInterceptor)? = nil,
        requestModifier: RequestModifier? = nil,
        to destination: DownloadRequest.Destination? = nil
    ) -> DownloadRequest {
        DownloadRequest(
            session: self,
            draft: Self.makeDraft(convertible, modifier: requestModifier),
            destination: destination
        ).intercepted(by: interceptor)
    }

    /// Resumes a cancelled or broken download from its resume data: asks for the remaining bytes with
    /// `Range` and `If-Range` and appends them to the partial file.
    ///
    /// What the server answers decides what happens (documented in the Downloads article):
    /// - 206 for the expected range: the rest is appended;
    /// - 200 (the file changed, so `If-Range` failed, or the server ignores ranges): the download
    ///   restarts cleanly from byte 0;
    /// - 416, a 206 for another range, or a 206 with a different `ETag`: `resumeFailed`, and the
    ///   partial file is removed;
    /// - no answer (the connection failed, or the request was cancelled with resume data, before the
    ///   response head): the partial file is kept and the response carries the same resume data again;
    ///   a plain `cancel()` removes it.
    /// If the partial file is gone or has another size, the download restarts from byte 0.
    /// Credentials are not stored in resume data: the session or a request modifier supplies them.
    ///
    /// ```swift
    /// let request = session.download("http://127.0.0.1:8080/range/1048576?duration=2")
    /// let task = request.serializingDownloadedFileURL()  // attaching a handler starts the download
    /// for await progress in request.downloadProgress() where progress.completedBytes > 0 {
    ///     request.cancel(producingResumeData: true)  // after the first bytes: there is something to resume
    ///     break
    /// }
    /// if let resumeData = await task.response.resumeData {
    ///     let fileURL = try await session.download(resumingWith: resumeData).serializingDownloadedFileURL().value
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - resumeData: The token from ``DownloadResponse/resumeData``.
    ///   - interceptor: Adapts and retries this request, after the session's interceptor.
    ///   - requestModifier: A closure that can change the draft last (for example to add credentials).
    ///   - destination: Where the finished file goes; `nil` keeps it at a temporary URL.
    /// - Returns: The request.
    public func download(
        resumingWith resumeData: Data,
        interceptor: (any RequestInterceptor)? = nil,
        requestModifier: RequestModifier? = nil,
        to destination: DownloadRequest.Destination? = nil
    ) -> DownloadRequest {
        let token: ResumeData
        do {
            token = try ResumeData.decode(resumeData)
        } catch {
            let summary = RequestSummary(method: .get, url: "(resume data)")
            return DownloadRequest(session: self, draft: .failure(error.naming(summary)), destination: destination)
                .intercepted(by: interceptor)
        }
        let partialSize = token.partialFileURL.flatMap(DownloadFiles.size(of:))
        let canContinue = partialSize == token.bytes && token.bytes > 0
        var draft: Result<RequestDraft, KiteError>
        do {
            var resumed = try token.makeDraft()
            if !canContinue {
                // Nothing usable on disk: ask for the whole file again.
                resumed.headerFields[.range] = nil
                resumed.headerFields[.ifRange] = nil
                token.partialFileURL.map(DownloadFiles.remove)
            }
            draft = .success(resumed)
        } catch {
            draft = .failure(error.naming(RequestSummary(method: .get, url: token.url)))
        }
        draft = draft.flatMap { Self.applying(requestModifier, to: $0) }
        return DownloadRequest(
            session: self,
            draft: draft,
            destination: destination,
            resuming: canContinue ? token : nil
        ).intercepted(by: interceptor)
    }
}
