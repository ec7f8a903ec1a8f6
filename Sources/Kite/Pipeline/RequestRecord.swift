import Foundation
import HTTPTypes
import Tracing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A request's settings and records: what the caller set before it started, and what the pipeline wrote
/// as it ran. Part of the request's state machine (``RequestStateMachine/record``), under its one lock; the
/// machine owns these fields but makes no decision on them.
struct RequestRecord {
    // Settings, set before the request starts.

    /// The request's own interceptor, redirect handler and credential.
    var interceptor: (any RequestInterceptor)?
    var redirectHandler: (any RedirectHandler)?
    var credential: Credential?
    /// Per-request rate limits.
    var uploadLimiter: RateLimiter?
    var downloadLimiter: RateLimiter?
    /// The data request's own response size limit: `nil` uses the session's, `.some(nil)` has none.
    var maximumResponseSize: Int64?? = nil
    /// The request's own cache policy and cached-response handler (``BaseRequest/cachePolicy(_:)``,
    /// ``BaseRequest/cacheResponse(using:)``).
    var cachePolicy: URLRequest.CachePolicy?
    var cachedResponseHandler: (any CachedResponseHandler)?
    /// The generated client's operation, for log metadata and the span (``Session/transportRequest(_:)``).
    var operationID: String?
    /// A transport's reader of the response head, called at most once, before a stream request's body makes
    /// the pipeline wait (for the server or the reader) or fails. A body that is all there when the head arrives
    /// is buffered without it, and the request's end answers the head (``DataStreamRequest/responseHead()``
    /// also waits for the end), so the caller wakes once for a small response.
    var responseHeadHandler: (@Sendable (HTTPResponse) -> Void)?

    // Records, written as the request runs.

    /// ``BaseRequest/id``, made when first asked for.
    var id: UUID?
    var sentRequest: HTTPRequest?
    /// The latest attempt's response head, while the request runs (for retriers).
    var lastResponse: HTTPResponse?
    /// Request body bytes handed to the engine in the latest attempt.
    var bytesSent: Int64 = 0
    /// The current attempt's streamed upload body, which the engine holds only weakly.
    var uploadFeed: UploadFeed?
    /// Called once with the `curl` command when the head is first sent or its adapter fails
    /// (``BaseRequest/cURLDescription(on:calling:)``).
    var cURLHandler: (queue: DispatchQueue, handler: @Sendable (String) -> Void)?
    /// The state of the upload and download progress reporters.
    var progress = ProgressReporter.States()
    /// The request's span, when the session traces.
    var span: (any Tracing.Span)?
    /// The connection of the latest exchange, when the session collects connection metrics.
    var connection: ConnectionProbe.Record?
    /// How many retries the request made, once it is over.
    var finalRetryCount = 0
    /// A download's partial file and placement.
    var download = DownloadRecord()
    /// A stream request's readers.
    var streamReaders: [StreamSink.Reader] = []
}
