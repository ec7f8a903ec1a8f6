import Foundation
import HTTPTypes

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension HTTPSessionManager {
    /// Downloads to a file: AFNetworking's `downloadTaskWithRequest:progress:destination:completionHandler:`.
    ///
    /// `destination` says where the file goes once it is complete (a file already there makes the download
    /// fail, as a move onto an existing file fails in AFNetworking). Unlike AFNetworking, Kite asks it when the
    /// response head arrives and streams the body to a hidden partial file in the destination's folder, so the
    /// finished file is renamed into place, never copied across file systems (see ``DownloadRequest/Destination``:
    /// the URL it is given is not the body's file). The status is not validated: a `404` completes with its file and no error. The completion runs on
    /// ``completionQueue`` in ``completionGroup``, and the request is listed in ``downloadTasks`` until then.
    ///
    /// ```swift
    /// let request = URLRequest(url: URL(string: "http://127.0.0.1:8080/bytes/1024")!)
    /// manager.downloadTask(with: request, progress: nil,
    ///     destination: { _, _ in URL(fileURLWithPath: "/tmp/bytes.bin") },
    ///     completionHandler: { response, filePath, error in print(filePath as Any, error as Any) })
    /// ```
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - downloadProgress: Called as the body arrives.
    ///   - destination: Where the file goes, given a temporary URL and the response head; `nil` leaves it at a
    ///     temporary URL.
    ///   - completionHandler: Called with the response, the file's URL and the error.
    /// - Returns: The request, or `nil` when the session was invalidated (the completion gets the error).
    @discardableResult
    public func downloadTask(
        with request: URLRequest,
        progress downloadProgress: (@Sendable (TransferProgress) -> Void)?,
        destination: (@Sendable (_ targetPath: URL, _ response: HTTPResponse) -> URL)?,
        completionHandler: (@Sendable (_ response: HTTPResponse?, _ filePath: URL?, _ error: KiteError?) -> Void)?
    ) -> DownloadRequest? {
        let state: State
        let session: Session
        switch self.snapshot() {
        case .failure(let error):
            self.reportFailure(error) { (_: DownloadRequest?, error) in completionHandler?(nil, nil, error) }
            return nil
        case .success(let value): (state, session) = value
        }
        let queue = state.completionQueue ?? session.callbackQueue
        let group = state.completionGroup ?? self.privateGroup
        var placement: DownloadRequest.Destination?
        if let destination {
            placement = { temporary, response in (destination(temporary, response), []) }
        }
        let download = session.download(request, to: placement)
        if let downloadProgress { download.downloadProgress(downloadProgress) }
        let id = ObjectIdentifier(download)
        self.state.withLockedValue { $0.requests[id] = download }
        group.enter()
        download.response(queue: queue, responseSerializer: URLResponseSerializer()) {
            [self] (response: DownloadResponse<URL, KiteError>) in
            defer { group.leave() }
            self.state.withLockedValue { _ = $0.requests.removeValue(forKey: id) }
            completionHandler?(response.response, response.fileURL, response.error)
        }
        return download
    }
}
