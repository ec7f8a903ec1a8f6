import Dispatch
import Foundation
import HTTPTypes

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What the pipeline's stages need from the session that made a request, as one immutable value made once
/// per session: the stages read this, never ``Session`` itself.
///
/// It holds the session's default header fields, limits and policies, its extensions (interceptor, redirect
/// handler, event monitors, telemetry, cookie jar) and its transport. A class, so a request carries it as
/// one reference.
final class PipelineContext: Sendable {
    /// The engine requests are sent through.
    let transport: any Transport
    /// Adapts and retries every request, before a request's own interceptor.
    let interceptor: (any RequestInterceptor)?
    /// The retry policies ``interceptor`` retries with but never adapts with, whose budgets the pipeline pays
    /// into (``RetryPolicy/retryingOnly(in:)``).
    let retryingOnlyPolicies: [RetryPolicy]
    /// Decides about redirects for requests without their own handler.
    let redirectHandler: (any RedirectHandler)?
    /// The session's event monitors as one, or `nil` when it has none (then no event is made).
    let eventMonitor: CompositeEventMonitor?
    /// Logging, metrics and tracing, or `nil` when the session does none of them.
    let telemetry: RequestTelemetry?
    /// The cookie jar, or `nil` when the session does not handle cookies.
    let cookieJar: (any CookieJar)?
    /// ``cookieJar`` when it is an ``HTTPCookieJar``: asked whether it is empty without a dynamic cast.
    let httpCookieJar: HTTPCookieJar?
    /// The header fields every request carries unless it sets them (``Session/sentDefaultHeaders(for:)``).
    let defaultHeaderFields: HTTPFields
    /// The session-wide rate limits, shared by all its requests.
    let uploadLimiter: RateLimiter?
    let downloadLimiter: RateLimiter?
    /// Whether a request starts when its first handler is attached.
    let startRequestsImmediately: Bool
    /// How many redirects a request follows.
    let maximumRedirects: Int
    /// Whether https → http redirects are followed.
    let allowsInsecureRedirects: Bool
    /// How compressed bodies are decoded: `nil` when they are not.
    let decompression: (maximumRatio: Int, ratioCheckedAfter: Int64)?
    /// A data request's response size limit, unless it sets its own.
    let maximumResponseSize: Int64?
    /// The total timeout of requests that do not set their own.
    let totalTimeout: Duration?
    /// The default queue of completion handlers and progress closures.
    let callbackQueue: DispatchQueue
    /// Where handlers attached to finished requests serialize their responses.
    let serializationQueue: DispatchQueue
    /// The response cache, or `nil` when the session has none.
    let cache: ResponseCache?
    /// How requests use the cache unless they set their own policy.
    let requestCachePolicy: URLRequest.CachePolicy
    /// Decides what the cache stores for requests without their own handler.
    let cachedResponseHandler: (any CachedResponseHandler)?
    /// The session's running requests (``Session/cancelAllRequests(completingOnQueue:completion:)``).
    let requests = RequestRegistry()

    init(
        configuration: Session.Configuration,
        transport: any Transport,
        interceptor: (any RequestInterceptor)?,
        redirectHandler: (any RedirectHandler)?,
        eventMonitor: CompositeEventMonitor?,
        telemetry: RequestTelemetry?,
        cookieJar: (any CookieJar)?,
        cachedResponseHandler: (any CachedResponseHandler)? = nil,
        callbackQueue: DispatchQueue
    ) {
        self.transport = transport
        self.interceptor = interceptor
        self.retryingOnlyPolicies = RetryPolicy.retryingOnly(in: interceptor)
        self.redirectHandler = redirectHandler
        self.eventMonitor = eventMonitor
        self.telemetry = telemetry
        self.cookieJar = cookieJar
        self.httpCookieJar = cookieJar as? HTTPCookieJar
        self.defaultHeaderFields = Session.sentDefaultHeaders(for: configuration)
        self.uploadLimiter = configuration.maximumUploadRate.map { RateLimiter(bytesPerSecond: $0) }
        self.downloadLimiter = configuration.maximumDownloadRate.map { RateLimiter(bytesPerSecond: $0) }
        self.startRequestsImmediately = configuration.startRequestsImmediately
        self.maximumRedirects = configuration.maximumRedirects
        self.allowsInsecureRedirects = configuration.allowsInsecureRedirects
        switch configuration.decompression {
        case .disabled:
            self.decompression = nil
        case .enabled(let maximumRatio, let ratioCheckedAfter):
            self.decompression = (maximumRatio, ratioCheckedAfter)
        }
        self.maximumResponseSize = configuration.maximumResponseSize
        self.totalTimeout = configuration.timeouts.total
        self.callbackQueue = callbackQueue
        self.cache = configuration.cache
        self.requestCachePolicy = configuration.requestCachePolicy
        self.cachedResponseHandler = cachedResponseHandler
        self.serializationQueue = DispatchQueue(label: "dev.kite.session.serialization")
    }

    /// The header fields a request carries when sent: its own, then the session's defaults
    /// (``defaultHeaderFields``) for fields it does not set.
    func headerFields(for fields: HTTPFields) -> HTTPFields {
        if fields.isEmpty {
            return self.defaultHeaderFields  // shares the defaults' storage
        }
        var result = fields
        result.reserveCapacity(fields.count + self.defaultHeaderFields.count)
        for field in self.defaultHeaderFields where result[field.name] == nil {
            result.append(field)
        }
        return result
    }
}
