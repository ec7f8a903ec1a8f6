import HTTPTypes
import NIOSSL
import X509

/// Everything the engine is told, in its own terms: made once by the session that owns the engine, so that no file
/// of the engine reads a type of the layers above it. Proxy selection and trust decisions stay the session's; the
/// engine asks for them through the protocols below.
struct EngineConfiguration: Sendable {
    var connectTimeout = Duration.seconds(10)
    /// The longest wait for response bytes while the reader asks for them; `nil`: none.
    var idleReadTimeout: Duration?
    /// The longest wait for the server to take request body bytes; `nil`: none.
    var idleWriteTimeout: Duration?
    /// The HTTP/1.1 connections one host may have at once (AHC's soft limit).
    var maximumConnectionsPerHost = 8
    /// How long an idle pooled connection is kept.
    var connectionIdleTimeout = Duration.seconds(60)
    var http1Only = false
    /// Whether requests learn which connection served them (``ConnectionProbe``).
    var collectsConnectionMetrics = false
    /// The handshakes' TLS configuration; `nil` keeps async-http-client's own (the system's roots, full
    /// verification).
    var tls: TLSConfiguration?
    /// Why the session's TLS settings could not be made into a configuration: every request fails with it.
    var setupError: KiteError?
    /// The header fields most requests send, converted to the engine's once.
    var defaultHeaderFields = HTTPFields()
    /// Chooses each request's proxy; `nil` when no request can go through one.
    var proxies: (any ProxySelecting)?
    /// Accepts or refuses servers for their hosts; `nil` when only the handshake's verification decides.
    var trust: (any ServerTrustDecisions)?
    /// Says why a handshake's verification failed, from the chain the server presents (``PresentedChain``); `nil`
    /// turns that second connection off.
    var trustFailureDiagnosis: (any TrustFailureExplaining)?
}

/// Chooses the proxy of each request.
protocol ProxySelecting: Sendable {
    /// The proxy for a request to `scheme://host:port` (`host` without brackets), or `nil` to connect directly.
    func proxy(scheme: String, host: String, port: Int) throws(KiteError) -> ProxyServer?
}

/// The session's decisions about servers, as the engine asks for them.
protocol ServerTrustDecisions: Sendable {
    /// The TLS configuration of handshakes with `host` (lower case, no port), or `nil` for the engine's own. Called
    /// for every `https` request as it is sent: connections with another configuration are pooled apart.
    func tlsConfiguration(forHost host: String) throws(KiteError) -> TLSConfiguration?

    /// Accepts the server that presented `certificates` (the leaf first) for `host`, or throws the refusal
    /// (``KiteError/Code-swift.struct/serverTrustEvaluationFailed``). Called off the event loop, once per host on
    /// each connection, before any byte of a request for that host is written.
    func evaluate(_ certificates: [Certificate], forHost host: String) throws(KiteError)
}

/// Says why a server's certificate failed the handshake's verification.
protocol TrustFailureExplaining: Sendable {
    /// The reason `chain` (the leaf first, as the server presented it) is not trusted for `host`, in words a user
    /// can act on.
    func reason(for chain: [Certificate], host: String) async -> String
}

/// The proxy server one request goes through.
struct ProxyServer: Sendable, Hashable, CustomStringConvertible {
    enum Kind: Sendable, Hashable {
        case http
        case socks
    }

    var kind: Kind
    var host: String
    var port: Int
    /// The Base64 of `user:password` for Basic authentication to the proxy (RFC 7617); `nil` when it has none.
    var basicCredentials: String?
    /// Whether plain `http` requests go through a `CONNECT` tunnel instead of in absolute form.
    var tunnelsPlainHTTP = false

    /// The `Proxy-Authorization` value, when the proxy has credentials.
    var authorization: String? { self.basicCredentials.map { "Basic " + $0 } }

    /// Whether a request with `scheme` is handed to this proxy whole, in absolute form: plain `http` through an
    /// HTTP proxy, unless it tunnels it.
    func forwards(scheme: String) -> Bool {
        self.kind == .http && scheme != "https" && !self.tunnelsPlainHTTP
    }

    /// Names the proxy without its credential.
    var description: String {
        let scheme = self.kind == .http ? "http" : "socks5"
        let host = self.host.contains(":") ? "[\(self.host)]" : self.host
        return "\(scheme)://\(host):\(self.port)"
    }
}
