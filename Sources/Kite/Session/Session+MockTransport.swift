import Dispatch
import Logging

extension Session {
    /// Creates a session whose requests are answered by a ``MockTransport``'s stubs instead of the network.
    ///
    /// Everything above the engine runs as it does against a server: interceptors and retries, redirects,
    /// validation, serializers, progress, downloads to disk, the total timeout and cancellation. No
    /// connection is made. ``shutdown()`` stops this session's requests (they fail with `sessionShutDown`)
    /// and leaves the mock, which other sessions may share, as it is.
    ///
    /// ```swift
    /// let mock = MockTransport()
    /// mock.stub(.get, "https://api.example.com/status", times: 1, response: .status(503))
    /// mock.stub(.get, "https://api.example.com/status", response: .status(200, body: .string("up")))
    ///
    /// let session = Session(transport: mock, interceptor: RetryPolicy(exponentialBackoffScale: 0))
    /// let status = try await session.request("https://api.example.com/status").validate().serializingString().value
    /// print(status, mock.requests.count)  // up 2
    /// ```
    ///
    /// - Parameters:
    ///   - configuration: Timeouts, default headers, redirects, decompression, as for a session with connections.
    ///   - transport: The mock that answers the requests.
    ///   - callbackQueue: The default queue for completion handlers; `nil` makes a serial queue.
    ///   - logger: Where the session logs (swift-log); by default nothing is logged.
    ///   - interceptor: Adapts and retries every request; a request's own interceptor runs after it.
    ///   - redirectHandler: Decides about redirects (``Redirector``); `nil` follows them by Kite's rules.
    ///   - eventMonitors: Observe every request's lifecycle (``EventMonitor``).
    public convenience init(
        configuration: Configuration = .default,
        transport: MockTransport,
        callbackQueue: DispatchQueue? = nil,
        logger: Logger? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        redirectHandler: (any RedirectHandler)? = nil,
        eventMonitors: [any EventMonitor] = []
    ) {
        let engine: any Transport = MockSessionTransport(transport)
        self.init(
            configuration: configuration,
            transport: engine,
            callbackQueue: callbackQueue,
            logger: logger,
            interceptor: interceptor,
            redirectHandler: redirectHandler,
            eventMonitors: eventMonitors
        )
    }
}
