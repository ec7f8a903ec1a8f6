import Dispatch
import Foundation
import HTTPTypes

/// Observes requests as they go through their lifecycle and the pipeline's stages: Alamofire 5's
/// `EventMonitor`, for logging, metrics and debugging.
///
/// Every event has a default that does nothing, so a monitor implements only those it needs. Events are
/// delivered on the monitor's ``queue``, never on the pipeline's task: a slow monitor delays its own
/// queue, not requests. Events of one request arrive on a serial queue in the order they happened.
///
/// ```swift
/// final class Printer: EventMonitor {
///     let queue = DispatchQueue(label: "printer")
///     func requestDidFinish(_ request: BaseRequest) {
///         print(request.request?.path ?? "?", request.response?.status.code as Any)
///     }
/// }
/// let session = Session(configuration: .default, eventMonitors: [Printer()])
/// ```
public protocol EventMonitor: Sendable {
    /// Where the events are delivered; a serial queue keeps them in order.
    var queue: DispatchQueue { get }

    /// The request was made by its session (nothing is sent yet).
    func requestDidCreate(_ request: BaseRequest)
    /// The request started or continued.
    func requestDidResume(_ request: BaseRequest)
    /// The request was suspended.
    func requestDidSuspend(_ request: BaseRequest)
    /// The request was cancelled.
    func requestDidCancel(_ request: BaseRequest)
    /// The interceptors changed the head of an attempt.
    func request(_ request: BaseRequest, didAdaptInitialRequest initial: HTTPRequest, to adapted: HTTPRequest)
    /// An adapter failed; the error is `requestAdaptationFailed`.
    func request(_ request: BaseRequest, didFailToAdaptRequest initial: HTTPRequest, withError error: KiteError)
    /// A response head arrived (also a redirect's or a challenge's).
    func request(_ request: BaseRequest, didReceiveResponse response: HTTPResponse)
    /// The session's ``ResponseCache`` handled an exchange: `status` says whether it answered (a hit, a
    /// revalidation, a stale copy) or the response came from the network.
    func request(_ request: BaseRequest, didUseCache status: ResponseCacheStatus)
    /// Kite is about to follow a redirect to `next`.
    func request(_ request: BaseRequest, willFollowRedirectTo next: HTTPRequest, for response: HTTPResponse)
    /// The retriers decided about a failed attempt.
    func request(_ request: BaseRequest, didDecideRetry result: RetryResult, dueTo error: KiteError)
    /// The request is being sent again (``BaseRequest/retryCount`` has grown).
    func requestIsRetrying(_ request: BaseRequest)
    /// The engine sends the attempt once more on a new connection, without a retry: it failed with `error` on a
    /// pooled connection that the server had closed, before any byte of it was written (as curl and Go resend).
    func request(_ request: BaseRequest, willResendOnNewConnectionAfter error: KiteError)
    /// Request body bytes went to the engine: the same steps ``BaseRequest/uploadProgress(queue:_:)`` reports.
    func request(_ request: BaseRequest, didUpdateUploadProgress progress: TransferProgress)
    /// Response body bytes arrived: the same steps ``BaseRequest/downloadProgress(queue:_:)`` reports.
    func request(_ request: BaseRequest, didUpdateDownloadProgress progress: TransferProgress)
    /// The request is over: ``BaseRequest/response``, ``BaseRequest/error`` and ``BaseRequest/metrics`` are set.
    func requestDidFinish(_ request: BaseRequest)
    /// A response handler or `serializing…` task of a data request made its value (once per handler).
    func request<Value: Sendable>(_ request: DataRequest, didParseResponse response: DataResponse<Value, KiteError>)
    /// A response handler or `serializing…` task of a download made its value (once per handler).
    func request<Value: Sendable>(
        _ request: DownloadRequest,
        didParseResponse response: DownloadResponse<Value, KiteError>
    )
}

extension EventMonitor {
    public func requestDidCreate(_ request: BaseRequest) {}
    public func requestDidResume(_ request: BaseRequest) {}
    public func requestDidSuspend(_ request: BaseRequest) {}
    public func requestDidCancel(_ request: BaseRequest) {}
    public func request(_ request: BaseRequest, didAdaptInitialRequest initial: HTTPRequest, to adapted: HTTPRequest) {}
    public func request(
        _ request: BaseRequest,
        didFailToAdaptRequest initial: HTTPRequest,
        withError error: KiteError
    ) {}
    public func request(_ request: BaseRequest, didReceiveResponse response: HTTPResponse) {}
    public func request(_ request: BaseRequest, didUseCache status: ResponseCacheStatus) {}
    public func request(_ request: BaseRequest, willFollowRedirectTo next: HTTPRequest, for response: HTTPResponse) {}
    public func request(_ request: BaseRequest, didDecideRetry result: RetryResult, dueTo error: KiteError) {}
    public func requestIsRetrying(_ request: BaseRequest) {}
    public func request(_ request: BaseRequest, willResendOnNewConnectionAfter error: KiteError) {}
    public func request(_ request: BaseRequest, didUpdateUploadProgress progress: TransferProgress) {}
    public func request(_ request: BaseRequest, didUpdateDownloadProgress progress: TransferProgress) {}
    public func requestDidFinish(_ request: BaseRequest) {}
    public func request<Value: Sendable>(
        _ request: DataRequest,
        didParseResponse response: DataResponse<Value, KiteError>
    ) {}
    public func request<Value: Sendable>(
        _ request: DownloadRequest,
        didParseResponse response: DownloadResponse<Value, KiteError>
    ) {}
}

/// Several monitors as one: each gets every event on its own queue.
public struct CompositeEventMonitor: EventMonitor {
    /// Used only when this composite is itself one of a session's monitors: its events pass through this
    /// queue on their way to each monitor's own.
    public let queue = DispatchQueue(label: "dev.kite.compositeEventMonitor")

    /// The monitors, in the order events are dispatched to them.
    public let monitors: [any EventMonitor]

    /// Creates a monitor that forwards to `monitors`.
    public init(monitors: [any EventMonitor]) {
        self.monitors = monitors
    }

    /// Runs `event` for every monitor, asynchronously on its queue.
    func dispatch(_ event: @escaping @Sendable (any EventMonitor) -> Void) {
        for monitor in self.monitors {
            monitor.queue.async { event(monitor) }
        }
    }

    public func requestDidCreate(_ request: BaseRequest) { self.dispatch { $0.requestDidCreate(request) } }
    public func requestDidResume(_ request: BaseRequest) { self.dispatch { $0.requestDidResume(request) } }
    public func requestDidSuspend(_ request: BaseRequest) { self.dispatch { $0.requestDidSuspend(request) } }
    public func requestDidCancel(_ request: BaseRequest) { self.dispatch { $0.requestDidCancel(request) } }
    public func request(_ request: BaseRequest, didAdaptInitialRequest initial: HTTPRequest, to adapted: HTTPRequest) {
        self.dispatch { $0.request(request, didAdaptInitialRequest: initial, to: adapted) }
    }
    public func request(
        _ request: BaseRequest,
        didFailToAdaptRequest initial: HTTPRequest,
        withError error: KiteError
    ) {
        self.dispatch { $0.request(request, didFailToAdaptRequest: initial, withError: error) }
    }
    public func request(_ request: BaseRequest, didReceiveResponse response: HTTPResponse) {
        self.dispatch { $0.request(request, didReceiveResponse: response) }
    }
    public func request(_ request: BaseRequest, didUseCache status: ResponseCacheStatus) {
        self.dispatch { $0.request(request, didUseCache: status) }
    }
    public func request(_ request: BaseRequest, willFollowRedirectTo next: HTTPRequest, for response: HTTPResponse) {
        self.dispatch { $0.request(request, willFollowRedirectTo: next, for: response) }
    }
    public func request(_ request: BaseRequest, didDecideRetry result: RetryResult, dueTo error: KiteError) {
        self.dispatch { $0.request(request, didDecideRetry: result, dueTo: error) }
    }
    public func requestIsRetrying(_ request: BaseRequest) { self.dispatch { $0.requestIsRetrying(request) } }
    public func request(_ request: BaseRequest, willResendOnNewConnectionAfter error: KiteError) {
        self.dispatch { $0.request(request, willResendOnNewConnectionAfter: error) }
    }
    public func request(_ request: BaseRequest, didUpdateUploadProgress progress: TransferProgress) {
        self.dispatch { $0.request(request, didUpdateUploadProgress: progress) }
    }
    public func request(_ request: BaseRequest, didUpdateDownloadProgress progress: TransferProgress) {
        self.dispatch { $0.request(request, didUpdateDownloadProgress: progress) }
    }
    public func requestDidFinish(_ request: BaseRequest) { self.dispatch { $0.requestDidFinish(request) } }
    public func request<Value: Sendable>(
        _ request: DataRequest,
        didParseResponse response: DataResponse<Value, KiteError>
    ) {
        self.dispatch { $0.request(request, didParseResponse: response) }
    }
    public func request<Value: Sendable>(
        _ request: DownloadRequest,
        didParseResponse response: DownloadResponse<Value, KiteError>
    ) {
        self.dispatch { $0.request(request, didParseResponse: response) }
    }
}
