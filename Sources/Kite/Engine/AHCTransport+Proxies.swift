import AsyncHTTPClient
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// One set of engine clients with the same settings: one for direct requests, and one per proxy server the
/// session chooses (``ProxyClients``, made on first use).
struct EngineClients: Sendable {
    let direct: HTTPClient
    /// `nil` when no request can go through a proxy.
    private let proxies: ProxyClients?

    init(
        configuration: HTTPClient.Configuration,
        proxies selection: (any ProxySelecting)?,
        eventLoopGroup: any EventLoopGroup
    ) {
        self.direct = HTTPClient(eventLoopGroup: eventLoopGroup, configuration: configuration)
        self.proxies = selection.map {
            ProxyClients(selection: $0, configuration: configuration, eventLoopGroup: eventLoopGroup)
        }
    }

    /// The proxy and its client for a request to `scheme://authority`, or `nil` when it goes direct.
    func proxied(scheme: String, authority: String) throws(KiteError) -> ProxyClients.Proxied? {
        try self.proxies?.client(scheme: scheme, authority: authority)
    }

    /// Shuts the proxy clients down, then the direct one.
    func shutdown() async throws {
        try await self.proxies?.shutdown()
        try await self.direct.shutdown()
    }

    func shutdownInBackground() {
        self.proxies?.shutdownInBackground()
        self.direct.shutdown(queue: .global()) { _ in }
    }
}

/// The engine's clients for proxied requests. async-http-client takes its proxy per client, not per request, and
/// always tunnels: so each proxy server that tunnels gets a client of its own, made on first use with the session's
/// settings and the same event loops. Plain `http` requests that a proxy takes in absolute form go through one
/// forwarding client, whose connections go to the proxies themselves (pooled per proxy, whatever the origin) and
/// write each request line in absolute form (``AbsoluteFormWriter``). An engine whose requests never go through a
/// proxy has none of this.
final class ProxyClients: Sendable {
    let selection: any ProxySelecting
    private let configuration: HTTPClient.Configuration
    private let eventLoopGroup: any EventLoopGroup
    private let clients = NIOLockedValueBox(Clients())

    private struct Clients {
        var tunnelling: [ProxyServer: Proxied] = [:]
        var forwarded: [ProxyServer: Proxied] = [:]
        /// Made with the first forwarded request.
        var forwarding: HTTPClient?

        var all: [HTTPClient] { self.tunnelling.values.map(\.client) + (self.forwarding.map { [$0] } ?? []) }
    }

    init(selection: any ProxySelecting, configuration: HTTPClient.Configuration, eventLoopGroup: any EventLoopGroup) {
        self.selection = selection
        self.configuration = configuration
        self.eventLoopGroup = eventLoopGroup
    }

    /// A proxy and the engine client that goes through it. A class, so the send path carries one optional
    /// reference, not an optional struct of strings.
    final class Proxied: Sendable {
        let server: ProxyServer
        let client: HTTPClient
        /// Whether requests go to the proxy in absolute form (``Outgoing``'s URL and fields name the proxy), not
        /// through a tunnel.
        let forwards: Bool

        init(server: ProxyServer, client: HTTPClient, forwards: Bool) {
            self.server = server
            self.client = client
            self.forwards = forwards
        }

        /// A forwarded request's response head when it is the proxy's refusal: a `407` comes from the proxy,
        /// never from a server, and fails the request as a refused `CONNECT` does.
        func check(status: HTTPResponseStatus) throws(KiteError) {
            guard self.forwards, status == .proxyAuthenticationRequired else { return }
            throw ProxyClients.credentialsRefused(by: self.server, underlyingError: nil)
        }
    }

    /// The proxy and its client for a request to `scheme://authority`, or `nil` when it goes direct.
    func client(scheme: String, authority: String) throws(KiteError) -> Proxied? {
        let (host, port) = TrustGate.Check.hostAndPort(
            ofAuthority: authority,
            defaultPort: scheme == "https" ? 443 : 80
        )
        guard let proxy = try self.selection.proxy(scheme: scheme, host: host, port: port) else { return nil }
        if proxy.forwards(scheme: scheme) {
            return self.clients.withLockedValue { clients in
                if let proxied = clients.forwarded[proxy] { return proxied }
                let client = clients.forwarding ?? self.makeForwardingClient()
                clients.forwarding = client
                let proxied = Proxied(server: proxy, client: client, forwards: true)
                clients.forwarded[proxy] = proxied
                return proxied
            }
        }
        return self.clients.withLockedValue { clients in
            if let proxied = clients.tunnelling[proxy] { return proxied }
            var configuration = self.configuration
            switch proxy.kind {
            case .http:
                configuration.proxy = .server(
                    host: proxy.host,
                    port: proxy.port,
                    authorization: proxy.basicCredentials.map { .basic(credentials: $0) }
                )
            case .socks:
                configuration.proxy = .socksServer(host: proxy.host, port: proxy.port)
            }
            let proxied = Proxied(
                server: proxy,
                client: HTTPClient(eventLoopGroup: self.eventLoopGroup, configuration: configuration),
                forwards: false
            )
            clients.tunnelling[proxy] = proxied
            return proxied
        }
    }

    /// The client whose connections go to proxies and write absolute-form request lines: the session's settings
    /// over HTTP/1.1 (a plain-text proxy speaks nothing else).
    private func makeForwardingClient() -> HTTPClient {
        var configuration = self.configuration
        configuration.httpVersion = .http1Only
        let initializer = configuration.http1_1ConnectionDebugInitializer
        configuration.http1_1ConnectionDebugInitializer = { channel in
            let installed = initializer?(channel) ?? channel.eventLoop.makeSucceededVoidFuture()
            return installed.flatMapThrowing {
                let operations = channel.pipeline.syncOperations
                let encoder = try operations.handler(type: HTTPRequestEncoder.self)
                try operations.addHandler(AbsoluteFormWriter(), position: .after(encoder))
            }
        }
        return HTTPClient(eventLoopGroup: self.eventLoopGroup, configuration: configuration)
    }

    /// Shuts every proxy client down; later requests fail as the session's do.
    func shutdown() async throws {
        for client in self.clients.withLockedValue({ $0.all }) {
            do {
                try await client.shutdown()
            } catch let error as HTTPClientError where error == .alreadyShutdown {
                continue
            }
        }
    }

    func shutdownInBackground() {
        for client in self.clients.withLockedValue({ $0.all }) {
            client.shutdown(queue: .global()) { _ in }
        }
    }

    /// The proxy's `407`: it wants credentials, or other ones.
    static func credentialsRefused(by proxy: ProxyServer, underlyingError: (any Error)?) -> KiteError {
        let why =
            proxy.basicCredentials == nil
            ? "asks for credentials (407): give them in the proxy URL or as its authorization"
            : "refused the credentials (407)"
        return KiteError(code: .proxyFailed, message: "the proxy \(proxy) \(why)", underlyingError: underlyingError)
    }

    /// A failure of a proxied request, said in terms of the proxy where the proxy caused it. A forwarded request's
    /// every exchange is with the proxy, so its timeouts name the proxy too.
    static func failure(
        _ failure: KiteError,
        engineError: any Error,
        through proxied: Proxied,
        target: String
    ) -> KiteError {
        let proxy = proxied.server
        if let error = engineError as? HTTPClientError {
            switch error {
            case .proxyAuthenticationRequired:
                return Self.credentialsRefused(by: proxy, underlyingError: error)
            case .invalidProxyResponse:
                return KiteError(
                    code: .proxyFailed,
                    message: "the proxy \(proxy) refused the tunnel to \(target) (its answer to CONNECT was not 2xx)",
                    underlyingError: error
                )
            case .httpProxyHandshakeTimeout, .socksHandshakeTimeout:
                return KiteError(
                    code: .timedOut,
                    message: "the proxy \(proxy) did not open the tunnel to \(target) within the connect timeout",
                    timeout: .connect,
                    underlyingError: error
                )
            default:
                break
            }
        }
        if EngineErrorCase.isProxyConnectHandlerRemoved(engineError) {
            // The engine's CONNECT handler was removed before the tunnel opened: the proxy closed the connection.
            return KiteError(
                code: .proxyFailed,
                message: "the proxy \(proxy) closed the connection before opening the tunnel to \(target)",
                underlyingError: engineError
            )
        }
        if EngineErrorCase.isSOCKSError(engineError) {
            return KiteError(
                code: .proxyFailed,
                message: "the SOCKS proxy \(proxy) refused the connection to \(target)",
                underlyingError: engineError
            )
        }
        let connectionLevel: Set<KiteError.Code> = [.connectionFailed, .connectionLost, .invalidResponse, .tlsFailed]
        let timedOut = failure.code == .timedOut && (failure.timeout == .connect || proxied.forwards)
        guard connectionLevel.contains(failure.code) || timedOut else {
            return failure
        }
        return KiteError(
            code: failure.code,
            message: "through the proxy \(proxy): \(failure.message)",
            timeout: failure.timeout,
            underlyingError: failure.underlyingError
        )
    }
}

/// Writes each request head in absolute form, `GET http://host:port/path HTTP/1.1` (RFC 9112 §3.2.2), the origin
/// taken from the head's `Host` field: on the forwarding client's connections, which go to proxies.
final class AbsoluteFormWriter: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = HTTPClientRequestPart
    typealias OutboundOut = HTTPClientRequestPart

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .head(var head) = self.unwrapOutboundIn(data) else {
            context.write(data, promise: promise)
            return
        }
        head.uri = "http://" + (head.headers.first(name: "host") ?? "") + head.uri
        context.write(self.wrapOutboundOut(.head(head)), promise: promise)
    }
}
