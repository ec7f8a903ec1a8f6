import Foundation
import HTTPTypes

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Session {
    /// How a ``Session`` sends requests: timeouts, default headers, redirects, decompression.
    ///
    /// ```swift
    /// var configuration = Session.Configuration()
    /// configuration.timeouts.connect = .seconds(5)
    /// configuration.timeouts.total = .seconds(30)
    /// configuration.headers[.authorization] = "Bearer token"
    /// let session = Session(configuration: configuration)
    /// defer { Task { try await session.shutdown() } }
    /// ```
    public struct Configuration: Sendable {
        /// Connect, idle-read, idle-write and total timeouts.
        public var timeouts = Timeouts()

        /// Header fields sent on every request that does not set the same field. Starts with
        /// `Accept-Language` and `User-Agent` (see ``HTTPTypes/HTTPFields/kiteDefaults``); `Accept-Encoding` is
        /// added when decompression is on.
        public var headers: HTTPFields = .kiteDefaults

        /// Whether a request starts when its first response handler or `serializing…` call is
        /// attached. When `false`, call `resume()`.
        public var startRequestsImmediately = true

        /// Whether gzip and deflate response bodies are decoded, and the inflation ratio allowed once
        /// 10 MiB have been decoded. The response size limit counts decoded bytes.
        public var decompression = Decompression.enabled(maximumRatio: 100)

        /// How many redirects are followed before the request fails with `tooManyRedirects`;
        /// `0` does not follow redirects. Redirect cycles always fail.
        public var maximumRedirects = 10

        /// Whether a redirect from `https` to `http` is followed. Off by default: such a redirect fails
        /// with `redirectRefused` rather than sending the request (and its cookies or body) in clear text.
        public var allowsInsecureRedirects = false

        /// Which HTTP versions may be used. HTTP/2 is only negotiated over TLS.
        public var httpVersion = HTTPVersionPolicy.automatic

        /// The largest response body a data request holds in memory (100 MiB by default); a larger
        /// one fails with `responseTooLarge`. `nil` has no limit. Downloads write to disk and are not limited.
        public var maximumResponseSize: Int64? = 100 * 1024 * 1024

        /// The most request body bytes per second the session's requests send together; `nil` has no limit.
        public var maximumUploadRate: Int?

        /// The most response body bytes per second the session's requests receive together; `nil` has no limit.
        public var maximumDownloadRate: Int?

        /// How many HTTP/1.1 connections are kept per host, for every kind of request together (data, upload,
        /// download and stream requests share one pool; through an HTTP proxy, per proxy). A request that finds them
        /// all busy waits for one, for at most the connect timeout (``Timeouts/connect``): async-http-client starts a
        /// request's connect deadline when the request is queued.
        public var maximumConnectionsPerHost = 8

        /// How long an unused connection stays open for reuse.
        public var connectionIdleTimeout = Duration.seconds(60)

        /// Header fields whose values the session's logs (and the cURL commands they carry) show as `REDACTED`,
        /// and ``BaseRequest/cURLDescription(includingCredentials:)`` as `***`:
        /// `Authorization`, `Proxy-Authorization`, `Cookie`, `Set-Cookie` and `X-Api-Key` to start with; add
        /// your own (`configuration.redactedHeaderNames.insert(HTTPField.Name("X-Session")!)`).
        public var redactedHeaderNames: Set<HTTPField.Name> = Redaction.defaultHeaderNames

        /// Trust roots, a client certificate for mutual TLS and the lowest TLS version (``TLSOptions``).
        public var tls = TLSOptions()

        /// Whether each response's ``ResponseMetrics/connection`` tells which connection served it (reused or new,
        /// HTTP and TLS versions, addresses, time waited for a new one). Off by default: it costs a few
        /// allocations per request.
        public var collectsConnectionMetrics = false

        /// Which proxy requests go through: ``ProxyConfiguration/environment`` (the default: `http_proxy`,
        /// `https_proxy`, `all_proxy` and `no_proxy`, read when the session is created), ``ProxyConfiguration/none``,
        /// or one HTTP or SOCKS5 server. See the "Proxies" article.
        public var proxy: ProxyConfiguration = .environment

        /// Whether the session stores the cookies responses set and sends them back (`HTTPShouldHandleCookies`);
        /// on by default. A `Cookie` header a request sets itself is sent as it is, without the jar's cookies.
        public var httpShouldHandleCookies = true

        /// The jar the session keeps cookies in; `nil` (the default) gives each session an in-memory
        /// ``HTTPCookieJar`` of its own. Give several sessions one jar to share cookies, or a persisting one.
        public var cookieJar: (any CookieJar)?

        /// The response cache (RFC 9111), in memory and on disk; `nil` (the default): every request goes to the
        /// server, as with async-http-client. See ``ResponseCache``.
        public var cache: ResponseCache?

        /// How requests use ``cache`` unless they set their own (``BaseRequest/cachePolicy(_:)``,
        /// `URLRequest.cachePolicy`): URLSessionConfiguration's `requestCachePolicy`. By default the rules of
        /// RFC 9111 (`useProtocolCachePolicy`).
        public var requestCachePolicy: URLRequest.CachePolicy = .useProtocolCachePolicy

        /// Whether requests wait for the network while it is unreachable (URLSession's `waitsForConnectivity`),
        /// for at most ``connectivityTimeout``; off by default. See ``WaitForConnectivity``.
        public var waitsForConnectivity = false

        /// The longest a request waits for connectivity when ``waitsForConnectivity`` is on; 30 seconds.
        public var connectivityTimeout = Duration.seconds(30)

        /// Whether the session reports swift-metrics (request counter, duration timer, in-flight meter).
        /// Off by default; see ``MetricsReporting``.
        public var metrics = MetricsReporting.disabled

        /// Whether the session traces its requests with swift-distributed-tracing. By default it uses the
        /// bootstrapped tracer (`InstrumentationSystem.tracer`, read when the session is made), and traces
        /// nothing when none is bootstrapped; see ``TracingOptions``.
        public var tracing = TracingOptions.automatic

        /// The default configuration.
        public static var `default`: Configuration { Configuration() }

        /// Creates the default configuration.
        public init() {}
    }

    /// A request's timeouts; each failure says which one expired.
    public struct Timeouts: Sendable, Hashable {
        /// How long establishing a connection (TCP and TLS) may take. Default 10 s.
        public var connect: Duration

        /// How long the server may send nothing while a response is awaited or read. Default 60 s;
        /// `nil` waits forever. A request suspended for longer than this fails with this timeout.
        public var idleRead: Duration?

        /// How long the server may take no request body bytes while the body is being sent (a server or
        /// proxy that stopped reading the upload). Default 60 s; `nil` waits forever.
        public var idleWrite: Duration?

        /// How long the whole request may take, from start to the last body byte, including time
        /// spent suspended. Default `nil` (no limit); a request's ``RequestDraft/timeout`` overrides it.
        public var total: Duration?

        /// Creates timeouts.
        ///
        /// - Parameters:
        ///   - connect: The connect timeout.
        ///   - idleRead: The idle-read timeout, or `nil`.
        ///   - idleWrite: The idle-write timeout, or `nil`.
        ///   - total: The total timeout, or `nil`.
        public init(
            connect: Duration = .seconds(10),
            idleRead: Duration? = .seconds(60),
            idleWrite: Duration? = .seconds(60),
            total: Duration? = nil
        ) {
            self.connect = connect
            self.idleRead = idleRead
            self.idleWrite = idleWrite
            self.total = total
        }
    }

    /// Whether compressed response bodies are decoded.
    public enum Decompression: Sendable, Hashable {
        /// Bodies are delivered as sent, and no `Accept-Encoding` is added.
        case disabled
        /// gzip (also multi-member) and deflate bodies are decoded as they arrive. Once more than
        /// `ratioCheckedAfter` bytes (10 MiB by default) have been decoded, a body that has inflated more than
        /// `maximumRatio` times its compressed size fails with `decompressionFailed` (a defence against
        /// decompression bombs that lets legitimate repetitive bodies, such as large JSON arrays, through).
        /// A data request's ``Configuration/maximumResponseSize`` applies to the decoded bytes.
        case enabled(maximumRatio: Int, ratioCheckedAfter: Int64 = 10 * 1024 * 1024)
    }

    /// Which HTTP versions a session may use.
    public enum HTTPVersionPolicy: Sendable, Hashable {
        /// HTTP/2 where the server offers it over TLS, else HTTP/1.1.
        case automatic
        /// Always HTTP/1.1.
        case http1Only
    }
}
