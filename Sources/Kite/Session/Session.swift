import Dispatch
import Foundation
import HTTPTypes
import Logging

/// Creates and runs requests: the entry point of Kite.
///
/// ``Session/default`` uses a shared engine that is never shut down; use it for most work.
/// A session made with ``init(configuration:callbackQueue:logger:interceptor:serverTrustManager:redirectHandler:cachedResponseHandler:eventMonitors:)`` owns its connections and must
/// be shut down with ``shutdown()`` when no longer needed.
///
/// ```swift
/// let echo = try await Session.default
///     .request("http://127.0.0.1:8080/get", parameters: ["q": "swift nio"])
///     .validate()
///     .serializingDecodable(Echo.self)
///     .value
///
/// let session = Session(configuration: .default)
/// let data = try await session.request("http://127.0.0.1:8080/bytes/16").serializingData().value
/// try await session.shutdown()
/// ```
public final class Session: Sendable {
    /// The shared session. Its engine is never shut down; ``shutdown()`` on it does nothing.
    public static let `default` = Session(configuration: Configuration(), transport: AHCTransport.shared)

    /// The configuration the session was made with.
    public let configuration: Configuration

    /// What the pipeline's stages read from this session, made once: its defaults, limits, extensions and
    /// transport.
    let context: PipelineContext

    /// The queue completion handlers run on unless the caller passes one: a serial queue owned by
    /// the session. (Not `DispatchQueue.main`: on Linux the main queue only runs when the program
    /// drives it with `dispatchMain()` or a run loop.)
    public var callbackQueue: DispatchQueue { self.context.callbackQueue }

    /// The jar cookies are kept in, or `nil` when ``Configuration-swift.struct/httpShouldHandleCookies`` is off.
    public var cookieJar: (any CookieJar)? { self.context.cookieJar }

    /// Adapts and retries every request of the session, before a request's own interceptor. With
    /// ``Configuration-swift.struct/waitsForConnectivity`` it is an ``Interceptor`` whose first adapter is a
    /// ``WaitForConnectivity``, followed by the interceptor given to the initializer.
    public var interceptor: (any RequestInterceptor)? { self.context.interceptor }

    /// Decides about redirects for requests without their own handler; `nil` follows them by Kite's rules.
    public var redirectHandler: (any RedirectHandler)? { self.context.redirectHandler }

    /// The session's event monitors as one, or `nil` when it has none (then no event is made).
    var eventMonitor: CompositeEventMonitor? { self.context.eventMonitor }

    /// The engine requests are sent through.
    var transport: any Transport { self.context.transport }

    let logger: Logger

    /// Creates a session with its own connections.
    ///
    /// Shut it down with ``shutdown()`` when done; a session released without that is shut down in
    /// the background.
    ///
    /// - Parameters:
    ///   - configuration: Timeouts, default headers, redirects, decompression.
    ///   - callbackQueue: The default queue for completion handlers; `nil` makes a serial queue.
    ///   - logger: Where the session logs (swift-log): one line per finished request at `.info`, with headers
    ///     at `.debug` and the cURL command at `.trace`, sensitive values redacted; by default nothing is logged.
    ///   - interceptor: Adapts and retries every request (a ``RetryPolicy``, an ``AuthenticationInterceptor``,
    ///     an ``Interceptor`` of several); a request's own interceptor runs after it.
    ///   - serverTrustManager: Chooses the evaluator that decides whether each HTTPS host is trusted
    ///     (pinning, private CAs); `nil` verifies every server against the trust roots.
    ///   - redirectHandler: Decides about redirects (``Redirector``); `nil` follows them by Kite's rules.
    ///   - cachedResponseHandler: Decides what the session's ``Configuration-swift.struct/cache`` stores
    ///     (``ResponseCacher``); `nil` stores what RFC 9111 allows.
    ///   - eventMonitors: Observe every request's lifecycle (``EventMonitor``).
    ///
    /// The extensions come in Alamofire's order (`interceptor`, `serverTrustManager`, `redirectHandler`,
    /// `cachedResponseHandler`, `eventMonitors`), so Alamofire's call compiles once its `URLSessionConfiguration` is a
    /// ``Configuration-swift.struct``.
    public convenience init(
        configuration: Configuration = .default,
        callbackQueue: DispatchQueue? = nil,
        logger: Logger? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        serverTrustManager: ServerTrustManager? = nil,
        redirectHandler: (any RedirectHandler)? = nil,
        cachedResponseHandler: (any CachedResponseHandler)? = nil,
        eventMonitors: [any EventMonitor] = []
    ) {
        self.init(
            configuration: configuration,
            transport: AHCTransport(
                configuration: configuration,
                canShutDown: true,
                serverTrustManager: serverTrustManager
            ),
            callbackQueue: callbackQueue,
            logger: logger,
            interceptor: interceptor,
            redirectHandler: redirectHandler,
            cachedResponseHandler: cachedResponseHandler,
            eventMonitors: eventMonitors
        )
    }

    init(
        configuration: Configuration,
        transport: any Transport,
        callbackQueue: DispatchQueue? = nil,
        logger: Logger? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        redirectHandler: (any RedirectHandler)? = nil,
        cachedResponseHandler: (any CachedResponseHandler)? = nil,
        eventMonitors: [any EventMonitor] = []
    ) {
        self.configuration = configuration
        let sessionInterceptor: (any RequestInterceptor)?
        if configuration.waitsForConnectivity {
            let waiter = WaitForConnectivity(timeout: configuration.connectivityTimeout)
            sessionInterceptor = Interceptor(adapters: [waiter], interceptors: interceptor.map { [$0] } ?? [])
        } else {
            sessionInterceptor = interceptor
        }
        self.logger = logger ?? Logger(label: "dev.kite", factory: { _ in SwiftLogNoOpLogHandler() })
        self.context = PipelineContext(
            configuration: configuration,
            transport: transport,
            interceptor: sessionInterceptor,
            redirectHandler: redirectHandler,
            eventMonitor: eventMonitors.isEmpty ? nil : CompositeEventMonitor(monitors: eventMonitors),
            telemetry: RequestTelemetry.make(configuration: configuration, logger: self.logger),
            cookieJar: configuration.httpShouldHandleCookies ? configuration.cookieJar ?? HTTPCookieJar() : nil,
            cachedResponseHandler: cachedResponseHandler,
            callbackQueue: callbackQueue ?? DispatchQueue(label: "dev.kite.session.callbacks")
        )
    }

    deinit {
        self.transport.shutdownInBackground()
    }

    /// Closes the session's connections. Requests made afterwards fail with `sessionShutDown`.
    ///
    /// Calling it twice, or on ``Session/default``, does nothing.
    ///
    /// - Throws: ``KiteError`` with code `sessionShutDown` when connections could not be closed cleanly.
    public func shutdown() async throws(KiteError) {
        try await self.transport.shutdown()
    }

    /// Cancels every request of the session that has not finished, as Alamofire's `cancelAllRequests` does: the
    /// running ones now, and those made before this call but not yet started (no handler attached yet) when they
    /// start. Their handlers get ``KiteError`` with code `cancelled`. Requests made afterwards run as usual.
    ///
    /// ```swift
    /// session.cancelAllRequests {
    ///     print("every request was told to cancel")
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - queue: Where `completion` runs; the session's ``callbackQueue`` when `nil` (Alamofire's default,
    ///     `DispatchQueue.main`, runs nothing on Linux unless the program drives the main queue).
    ///   - completion: Runs once every running request was told to cancel (as in Alamofire, not once their
    ///     handlers ran).
    public func cancelAllRequests(
        completingOnQueue queue: DispatchQueue? = nil,
        completion: (@Sendable () -> Void)? = nil
    ) {
        for request in self.context.requests.cancelAll() {
            request.cancel()
        }
        if let completion {
            (queue ?? self.callbackQueue).async(execute: completion)
        }
    }

    /// Runs `action` with the session's running requests: those started (a handler attached, or ``BaseRequest/resume()``)
    /// and not yet finished, as Alamofire's `withAllRequests` gives its active requests. A request made but not
    /// started is not among them (Alamofire's set has it).
    ///
    /// ```swift
    /// session.withAllRequests { requests in
    ///     requests.forEach { $0.suspend() }
    /// }
    /// ```
    ///
    /// - Parameter action: Gets the requests; runs on the calling thread, with no lock held.
    /// - Returns: What `action` returns.
    public func withAllRequests<Result>(perform action: (Set<BaseRequest>) throws -> Result) rethrows -> Result {
        try action(Set(self.context.requests.all))
    }

    /// The default header fields a session with `configuration` sends: the configured ones, and
    /// `Accept-Encoding` when the engine decompresses.
    static func sentDefaultHeaders(for configuration: Configuration) -> HTTPFields {
        var defaults = configuration.headers
        if case .enabled = configuration.decompression, defaults[.acceptEncoding] == nil {
            defaults[.acceptEncoding] = DefaultHeaders.acceptEncoding
        }
        return defaults
    }
}
