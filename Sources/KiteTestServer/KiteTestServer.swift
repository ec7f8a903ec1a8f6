import Hummingbird
import Logging
import NIOCore

/// An in-process HTTP server that answers like httpbin, for testing HTTP clients.
///
/// The server implements httpbin's endpoints (`/get`, `/post`, `/status/{code}`, `/bytes/{n}`,
/// `/redirect/{n}`, `/cookies`, `/gzip`, `/range/{n}`, …) with the same JSON shapes, so client
/// tests can run against loopback instead of the internet. Each server listens on its own port,
/// so many can run in one process, for example one per test. A server also stops (without
/// waiting) when its last reference goes away, but calling ``shutdown()`` is the clean way.
///
/// A server can also serve HTTPS, HTTP/2 and HTTP/1.1, with certificates made for the test by a
/// ``TestCertificateAuthority``, including broken ones (expired, for the wrong host, self-signed,
/// untrusted) and a client certificate for mutual TLS: see ``start(host:port:tls:)``.
///
/// ```swift
/// let server = try await KiteTestServer.start()
/// defer { Task { try await server.shutdown() } }
/// let url = server.baseURL + "/get?name=value"
/// // ... send requests to `url` ...
/// try await server.shutdown()
/// ```
public final class KiteTestServer: Sendable {
    /// The port the server is listening on.
    public let port: Int

    /// The host the server was bound to, such as `127.0.0.1`.
    public let host: String

    /// How the server serves TLS, or `nil` when it serves plain HTTP.
    public let tls: TLSOptions?

    /// The URL of the server without a trailing slash, such as `http://127.0.0.1:54321`, or
    /// `https://127.0.0.1:54321` when it serves TLS.
    public var baseURL: String {
        let hostPart = self.host.contains(":") ? "[\(self.host)]" : self.host
        let scheme = self.tls == nil ? "http" : "https"
        return "\(scheme)://\(hostPart):\(self.port)"
    }

    private let serverTask: Task<Void, any Error>

    private init(host: String, port: Int, tls: TLSOptions?, serverTask: Task<Void, any Error>) {
        self.host = host
        self.port = port
        self.tls = tls
        self.serverTask = serverTask
    }

    deinit {
        // A server that was never shut down must not keep listening forever.
        self.serverTask.cancel()
    }

    /// Starts a server in the background and returns once it is listening.
    ///
    /// Use port `0` (the default) to let the system pick a free port, then read ``port`` or
    /// ``baseURL``. Call ``shutdown()`` when you are done with the server.
    ///
    /// ```swift
    /// let server = try await KiteTestServer.start()
    /// print(server.baseURL)  // http://127.0.0.1:54321
    /// let fixed = try await KiteTestServer.start(host: "127.0.0.1", port: 8080)
    /// ```
    ///
    /// - Parameters:
    ///   - host: The address to bind to.
    ///   - port: The port to bind to, or `0` for an ephemeral port.
    /// - Returns: The running server.
    /// - Throws: The error from binding the socket, for example when the port is in use.
    public static func start(host: String = "127.0.0.1", port: Int = 0) async throws -> KiteTestServer {
        try await Self.start(host: host, port: port, tls: nil)
    }

    /// Starts a server in the background, serving TLS when `tls` is set, and returns once it is
    /// listening.
    ///
    /// Over TLS the server offers HTTP/2 and HTTP/1.1 through ALPN, presents the certificate
    /// `tls` chooses from its authority, and also answers `/tls` with what the connection
    /// negotiated. ``baseURL`` then starts with `https://`. Use port `0` to let the system pick a
    /// free port. Call ``shutdown()`` when you are done with the server.
    ///
    /// ```swift
    /// let authority = try TestCertificateAuthority()
    /// let server = try await KiteTestServer.start(
    ///     host: "127.0.0.1",
    ///     port: 0,
    ///     tls: KiteTestServer.TLSOptions(authority: authority, certificate: .expired)
    /// )
    /// print(server.baseURL)  // https://127.0.0.1:54321
    /// ```
    ///
    /// - Parameters:
    ///   - host: The address to bind to.
    ///   - port: The port to bind to, or `0` for an ephemeral port.
    ///   - tls: How to serve TLS, or `nil` for plain HTTP.
    /// - Returns: The running server.
    /// - Throws: The error from loading the certificate into the TLS library or from binding the
    ///   socket, for example when the port is in use.
    public static func start(
        host: String = "127.0.0.1",
        port: Int = 0,
        tls: TLSOptions?
    ) async throws -> KiteTestServer {
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let application = try Self.makeApplication(host: host, port: port, tls: tls) { boundPort in
            continuation.yield(boundPort)
            continuation.finish()
        }
        let serverTask = Task {
            defer { continuation.finish() }
            try await application.run()
        }
        return try await withTaskCancellationHandler {
            for await boundPort in ports {
                return KiteTestServer(host: host, port: boundPort, tls: tls, serverTask: serverTask)
            }
            // The server stopped before listening: report why.
            try await serverTask.value
            try Task.checkCancellation()
            throw KiteTestServerError.stoppedBeforeListening
        } onCancel: {
            serverTask.cancel()
        }
    }

    /// Runs a server in the current task until the task is cancelled.
    ///
    /// This suits a command-line `serve` command: the server runs in the foreground and
    /// `onStarted` reports the bound port once it is listening.
    ///
    /// ```swift
    /// try await KiteTestServer.run(host: "127.0.0.1", port: 8080) { port in
    ///     print("Listening on http://127.0.0.1:\(port)")
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - host: The address to bind to.
    ///   - port: The port to bind to, or `0` for an ephemeral port.
    ///   - onStarted: Called with the bound port once the server is listening.
    /// - Throws: The error from binding the socket, for example when the port is in use.
    public static func run(
        host: String = "127.0.0.1",
        port: Int = 0,
        onStarted: @escaping @Sendable (Int) -> Void = { _ in }
    ) async throws {
        try await Self.run(host: host, port: port, tls: nil, onStarted: onStarted)
    }

    /// Runs a server in the current task, serving TLS when `tls` is set, until the task is
    /// cancelled.
    ///
    /// This suits a command-line `serve` command: the server runs in the foreground and
    /// `onStarted` reports the bound port once it is listening.
    ///
    /// ```swift
    /// let authority = try TestCertificateAuthority()
    /// try await KiteTestServer.run(host: "127.0.0.1", port: 8443, tls: .init(authority: authority)) { port in
    ///     print("Listening on https://127.0.0.1:\(port)")
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - host: The address to bind to.
    ///   - port: The port to bind to, or `0` for an ephemeral port.
    ///   - tls: How to serve TLS, or `nil` for plain HTTP.
    ///   - onStarted: Called with the bound port once the server is listening.
    /// - Throws: The error from loading the certificate into the TLS library or from binding the
    ///   socket, for example when the port is in use.
    public static func run(
        host: String = "127.0.0.1",
        port: Int = 0,
        tls: TLSOptions?,
        onStarted: @escaping @Sendable (Int) -> Void = { _ in }
    ) async throws {
        let application = try Self.makeApplication(host: host, port: port, tls: tls, onStarted: onStarted)
        try await application.run()
    }

    /// Stops the server and waits until it has stopped listening and closed its connections.
    ///
    /// Calling it more than once is harmless.
    ///
    /// ```swift
    /// try await server.shutdown()
    /// ```
    ///
    /// - Throws: An error the server failed with while running, if any.
    public func shutdown() async throws {
        self.serverTask.cancel()
        do {
            try await self.serverTask.value
        } catch is CancellationError {
            // Cancellation is how the server is stopped.
        }
    }

    private static func makeApplication(
        host: String,
        port: Int,
        tls: TLSOptions?,
        onStarted: @escaping @Sendable (Int) -> Void
    ) throws -> some ApplicationProtocol {
        var logger = Logger(label: "KiteTestServer")
        logger.logLevel = .critical
        return Application(
            router: HTTPBinRouter.make(isSecure: tls != nil),
            server: try tls?.makeServerBuilder() ?? .http1(),
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: nil),
            onServerRunning: { channel in
                onStarted(channel.localAddress?.port ?? port)
            },
            logger: logger
        )
    }
}

/// Errors specific to ``KiteTestServer``.
public enum KiteTestServerError: Error, Sendable {
    /// The server stopped without an error before it started listening.
    case stoppedBeforeListening
}
