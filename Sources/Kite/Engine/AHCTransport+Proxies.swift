import AsyncHTTPClient
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// One set of engine clients with the same settings: one for direct requests, and one per proxy server the
/// session's route uses (``ProxyClients``, made on first use).
struct EngineClients: Sendable {
    let direct: HTTPClient
    /// `nil` when the session's proxy configuration never proxies.
    private let proxies: ProxyClients?

    init(configuration: HTTPClient.Configuration, route: ProxyRoute, eventLoopGroup: any EventLoopGroup) {
        self.direct = HTTPClient(eventLoopGroup: eventLoopGroup, configuration: configuration)
        self.proxies =
            route.isDirect
            ? nil : ProxyClients(route: route, configuration: configuration, eventLoopGroup: eventLoopGroup)
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

/// The engine's clients for proxied requests: async-http-client takes its proxy per client, not per request,
/// so each proxy server a session uses gets a client of its own, made on first use with the session's settings
/// and the same event loops. A session whose ``ProxyRoute`` never proxies has none of this.
final class ProxyClients: Sendable {
    let route: ProxyRoute
    private let configuration: HTTPClient.Configuration
    private let eventLoopGroup: any EventLoopGroup
    private let clients = NIOLockedValueBox<[ProxyServer: Proxied]>([:])

    init(route: ProxyRoute, configuration: HTTPClient.Configuration, eventLoopGroup: any EventLoopGroup) {
        self.route = route
        self.configuration = configuration
        self.eventLoopGroup = eventLoopGroup
    }

    /// A proxy and the engine client that goes through it. A class, so the send path carries one optional
    /// reference, not an optional struct of strings.
    final class Proxied: Sendable {
        let server: ProxyServer
        let client: HTTPClient

        init(server: ProxyServer, client: HTTPClient) {
            self.server = server
            self.client = client
        }
    }

    /// The proxy and its client for a request to `scheme://authority`, or `nil` when it goes direct.
    func client(scheme: String, authority: String) throws(KiteError) -> Proxied? {
        let (host, port) = TrustGate.Check.hostAndPort(
            ofAuthority: authority,
            defaultPort: scheme == "https" ? 443 : 80
        )
        guard let proxy = try self.route.proxy(scheme: scheme, host: host, port: port) else { return nil }
        return self.clients.withLockedValue { clients in
            if let proxied = clients[proxy] { return proxied }
            var configuration = self.configuration
            switch proxy.kind {
            case .http:
                configuration.proxy = .server(
                    host: proxy.host,
                    port: proxy.port,
                    authorization: proxy.credential.map { .basic(username: $0.user, password: $0.password) }
                )
            case .socks:
                configuration.proxy = .socksServer(host: proxy.host, port: proxy.port)
            }
            let proxied = Proxied(
                server: proxy,
                client: HTTPClient(eventLoopGroup: self.eventLoopGroup, configuration: configuration)
            )
            clients[proxy] = proxied
            return proxied
        }
    }

    /// Shuts every proxy client down; later requests fail as the session's do.
    func shutdown() async throws {
        let clients = self.clients.withLockedValue { $0.values.map(\.client) }
        for client in clients {
            do {
                try await client.shutdown()
            } catch let error as HTTPClientError where error == .alreadyShutdown {
                continue
            }
        }
    }

    func shutdownInBackground() {
        for client in self.clients.withLockedValue({ $0.values.map(\.client) }) {
            client.shutdown(queue: .global()) { _ in }
        }
    }

    /// A failure of a proxied request, said in terms of the proxy where the proxy caused it.
    static func failure(_ failure: KiteError, engineError: any Error, proxy: ProxyServer, target: String) -> KiteError {
        if let error = engineError as? HTTPClientError {
            switch error {
            case .proxyAuthenticationRequired:
                let why =
                    proxy.credential == nil
                    ? "asks for credentials (407): give them in the proxy URL or as its authorization"
                    : "refused the credentials (407)"
                return KiteError(code: .proxyFailed, message: "the proxy \(proxy) \(why)", underlyingError: error)
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
        let engineType = String(reflecting: type(of: engineError))
        if engineType.contains("HTTP1ProxyConnectHandler") {
            // The engine's CONNECT handler was removed before the tunnel opened: the proxy closed the connection.
            return KiteError(
                code: .proxyFailed,
                message: "the proxy \(proxy) closed the connection before opening the tunnel to \(target)",
                underlyingError: engineError
            )
        }
        if engineType.contains("SOCKS") {
            return KiteError(
                code: .proxyFailed,
                message: "the SOCKS proxy \(proxy) refused the connection to \(target)",
                underlyingError: engineError
            )
        }
        let connectionLevel: Set<KiteError.Code> = [.connectionFailed, .connectionLost, .invalidResponse, .tlsFailed]
        guard connectionLevel.contains(failure.code) || failure.code == .timedOut && failure.timeout == .connect else {
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
