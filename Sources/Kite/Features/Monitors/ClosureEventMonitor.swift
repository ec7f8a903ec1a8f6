import Dispatch
import HTTPTypes
import NIOConcurrencyHelpers

/// An ``EventMonitor`` made of closures, one optional closure per event: Alamofire 5's `ClosureEventMonitor`.
///
/// Set the closures before the session starts requests; each runs on the monitor's ``queue``.
///
/// ```swift
/// let monitor = ClosureEventMonitor()
/// monitor.requestDidFinish = { request in print(request.response?.status.code as Any) }
/// let session = Session(configuration: .default, eventMonitors: [monitor])
/// ```
///
/// A class whose closures are kept under a lock, so it is `Sendable` while still set after it is made.
/// The generic `didParseResponse` events arrive with the value type erased to `any Sendable`.
public final class ClosureEventMonitor: EventMonitor {
    private struct Closures {
        var requestDidCreate: (@Sendable (BaseRequest) -> Void)?
        var requestDidResume: (@Sendable (BaseRequest) -> Void)?
        var requestDidSuspend: (@Sendable (BaseRequest) -> Void)?
        var requestDidCancel: (@Sendable (BaseRequest) -> Void)?
        var requestDidAdaptInitialRequestToAdaptedRequest: (@Sendable (BaseRequest, HTTPRequest, HTTPRequest) -> Void)?
        var requestDidFailToAdaptRequestWithError: (@Sendable (BaseRequest, HTTPRequest, KiteError) -> Void)?
        var requestDidReceiveResponse: (@Sendable (BaseRequest, HTTPResponse) -> Void)?
        var requestDidUseCache: (@Sendable (BaseRequest, ResponseCacheStatus) -> Void)?
        var requestWillFollowRedirect: (@Sendable (BaseRequest, HTTPRequest, HTTPResponse) -> Void)?
        var requestDidDecideRetry: (@Sendable (BaseRequest, RetryResult, KiteError) -> Void)?
        var requestIsRetrying: (@Sendable (BaseRequest) -> Void)?
        var requestWillResendOnNewConnection: (@Sendable (BaseRequest, KiteError) -> Void)?
        var requestDidUpdateUploadProgress: (@Sendable (BaseRequest, TransferProgress) -> Void)?
        var requestDidUpdateDownloadProgress: (@Sendable (BaseRequest, TransferProgress) -> Void)?
        var requestDidFinish: (@Sendable (BaseRequest) -> Void)?
        var requestDidParseResponse: (@Sendable (DataRequest, DataResponse<any Sendable, KiteError>) -> Void)?
        var downloadRequestDidParseResponse:
            (@Sendable (DownloadRequest, DownloadResponse<any Sendable, KiteError>) -> Void)?
    }

    public let queue: DispatchQueue
    private let closures = NIOLockedValueBox(Closures())

    /// Creates a monitor whose closures run on `queue`.
    ///
    /// - Parameter queue: Where the closures run; by default a serial queue of the monitor's own.
    public init(queue: DispatchQueue = DispatchQueue(label: "dev.kite.closureEventMonitor")) {
        self.queue = queue
    }

    /// The request was made.
    public var requestDidCreate: (@Sendable (BaseRequest) -> Void)? {
        get { self.closures.withLockedValue { $0.requestDidCreate } }
        set { self.closures.withLockedValue { $0.requestDidCreate = newValue } }
    }

    /// The request started or continued.
    public var requestDidResume: (@Sendable (BaseRequest) -> Void)? {
        get { self.closures.withLockedValue { $0.requestDidResume } }
        set { self.closures.withLockedValue { $0.requestDidResume = newValue } }
    }

    /// The request was suspended.
    public var requestDidSuspend: (@Sendable (BaseRequest) -> Void)? {
        get { self.closures.withLockedValue { $0.requestDidSuspend } }
        set { self.closures.withLockedValue { $0.requestDidSuspend = newValue } }
    }

    /// The request was cancelled.
    public var requestDidCancel: (@Sendable (BaseRequest) -> Void)? {
        get { self.closures.withLockedValue { $0.requestDidCancel } }
        set { self.closures.withLockedValue { $0.requestDidCancel = newValue } }
    }

    /// The interceptors changed an attempt's head (initial, adapted).
    public var requestDidAdaptInitialRequestToAdaptedRequest:
        (@Sendable (BaseRequest, HTTPRequest, HTTPRequest) -> Void)?
    {
        get { self.closures.withLockedValue { $0.requestDidAdaptInitialRequestToAdaptedRequest } }
        set { self.closures.withLockedValue { $0.requestDidAdaptInitialRequestToAdaptedRequest = newValue } }
    }

    /// An adapter failed.
    public var requestDidFailToAdaptRequestWithError: (@Sendable (BaseRequest, HTTPRequest, KiteError) -> Void)? {
        get { self.closures.withLockedValue { $0.requestDidFailToAdaptRequestWithError } }
        set { self.closures.withLockedValue { $0.requestDidFailToAdaptRequestWithError = newValue } }
    }

    /// A response head arrived.
    public var requestDidReceiveResponse: (@Sendable (BaseRequest, HTTPResponse) -> Void)? {
        get { self.closures.withLockedValue { $0.requestDidReceiveResponse } }
        set { self.closures.withLockedValue { $0.requestDidReceiveResponse = newValue } }
    }

    /// The session's response cache handled an exchange, with where the response came from.
    public var requestDidUseCache: (@Sendable (BaseRequest, ResponseCacheStatus) -> Void)? {
        get { self.closures.withLockedValue { $0.requestDidUseCache } }
        set { self.closures.withLockedValue { $0.requestDidUseCache = newValue } }
    }

    /// A redirect is about to be followed (next request, redirect response).
    public var requestWillFollowRedirect: (@Sendable (BaseRequest, HTTPRequest, HTTPResponse) -> Void)? {
        get { self.closures.withLockedValue { $0.requestWillFollowRedirect } }
        set { self.closures.withLockedValue { $0.requestWillFollowRedirect = newValue } }
    }

    /// The retriers decided about a failed attempt.
    public var requestDidDecideRetry: (@Sendable (BaseRequest, RetryResult, KiteError) -> Void)? {
        get { self.closures.withLockedValue { $0.requestDidDecideRetry } }
        set { self.closures.withLockedValue { $0.requestDidDecideRetry = newValue } }
    }

    /// The request is being sent again.
    public var requestIsRetrying: (@Sendable (BaseRequest) -> Void)? {
        get { self.closures.withLockedValue { $0.requestIsRetrying } }
        set { self.closures.withLockedValue { $0.requestIsRetrying = newValue } }
    }

    /// The engine sends the attempt once more on a new connection (the pooled one was closed before any byte).
    public var requestWillResendOnNewConnection: (@Sendable (BaseRequest, KiteError) -> Void)? {
        get { self.closures.withLockedValue { $0.requestWillResendOnNewConnection } }
        set { self.closures.withLockedValue { $0.requestWillResendOnNewConnection = newValue } }
    }

    /// Upload progress.
    public var requestDidUpdateUploadProgress: (@Sendable (BaseRequest, TransferProgress) -> Void)? {
        get { self.closures.withLockedValue { $0.requestDidUpdateUploadProgress } }
        set { self.closures.withLockedValue { $0.requestDidUpdateUploadProgress = newValue } }
    }

    /// Download progress.
    public var requestDidUpdateDownloadProgress: (@Sendable (BaseRequest, TransferProgress) -> Void)? {
        get { self.closures.withLockedValue { $0.requestDidUpdateDownloadProgress } }
        set { self.closures.withLockedValue { $0.requestDidUpdateDownloadProgress = newValue } }
    }

    /// The request is over.
    public var requestDidFinish: (@Sendable (BaseRequest) -> Void)? {
        get { self.closures.withLockedValue { $0.requestDidFinish } }
        set { self.closures.withLockedValue { $0.requestDidFinish = newValue } }
    }

    /// A data request's handler made its value (the value type erased).
    public var requestDidParseResponse: (@Sendable (DataRequest, DataResponse<any Sendable, KiteError>) -> Void)? {
        get { self.closures.withLockedValue { $0.requestDidParseResponse } }
        set { self.closures.withLockedValue { $0.requestDidParseResponse = newValue } }
    }

    /// A download's handler made its value (the value type erased).
    public var downloadRequestDidParseResponse:
        (@Sendable (DownloadRequest, DownloadResponse<any Sendable, KiteError>) -> Void)?
    {
        get { self.closures.withLockedValue { $0.downloadRequestDidParseResponse } }
        set { self.closures.withLockedValue { $0.downloadRequestDidParseResponse = newValue } }
    }

    public func requestDidCreate(_ request: BaseRequest) {
        self.requestDidCreate?(request)
    }

    public func requestDidResume(_ request: BaseRequest) {
        self.requestDidResume?(request)
    }

    public func requestDidSuspend(_ request: BaseRequest) {
        self.requestDidSuspend?(request)
    }

    public func requestDidCancel(_ request: BaseRequest) {
        self.requestDidCancel?(request)
    }

    public func request(_ request: BaseRequest, didAdaptInitialRequest initial: HTTPRequest, to adapted: HTTPRequest) {
        self.requestDidAdaptInitialRequestToAdaptedRequest?(request, initial, adapted)
    }

    public func request(_ request: BaseRequest, didFailToAdaptRequest initial: HTTPRequest, withError error: KiteError)
    {
        self.requestDidFailToAdaptRequestWithError?(request, initial, error)
    }

    public func request(_ request: BaseRequest, didReceiveResponse response: HTTPResponse) {
        self.requestDidReceiveResponse?(request, response)
    }

    public func request(_ request: BaseRequest, didUseCache status: ResponseCacheStatus) {
        self.requestDidUseCache?(request, status)
    }

    public func request(_ request: BaseRequest, willFollowRedirectTo next: HTTPRequest, for response: HTTPResponse) {
        self.requestWillFollowRedirect?(request, next, response)
    }

    public func request(_ request: BaseRequest, didDecideRetry result: RetryResult, dueTo error: KiteError) {
        self.requestDidDecideRetry?(request, result, error)
    }

    public func requestIsRetrying(_ request: BaseRequest) {
        self.requestIsRetrying?(request)
    }

    public func request(_ request: BaseRequest, willResendOnNewConnectionAfter error: KiteError) {
        self.requestWillResendOnNewConnection?(request, error)
    }

    public func request(_ request: BaseRequest, didUpdateUploadProgress progress: TransferProgress) {
        self.requestDidUpdateUploadProgress?(request, progress)
    }

    public func request(_ request: BaseRequest, didUpdateDownloadProgress progress: TransferProgress) {
        self.requestDidUpdateDownloadProgress?(request, progress)
    }

    public func requestDidFinish(_ request: BaseRequest) {
        self.requestDidFinish?(request)
    }

    public func request<Value: Sendable>(
        _ request: DataRequest,
        didParseResponse response: DataResponse<Value, KiteError>
    ) {
        self.requestDidParseResponse?(request, response.map { $0 as any Sendable })
    }

    public func request<Value: Sendable>(
        _ request: DownloadRequest,
        didParseResponse response: DownloadResponse<Value, KiteError>
    ) {
        self.downloadRequestDidParseResponse?(request, response.map { $0 as any Sendable })
    }
}
