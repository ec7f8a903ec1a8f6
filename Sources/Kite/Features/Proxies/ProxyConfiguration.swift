import Foundation

/// Which proxy a session's requests go through: the environment's (the default), none, or one server.
///
/// ```swift
/// var configuration = Session.Configuration()
/// configuration.proxy = .http(host: "proxy.corp", port: 3128, authorization: Credential(user: "me", password: "pw"))
/// let session = Session(configuration: configuration)
/// ```
///
/// With ``environment``, each request's proxy is chosen by curl's rules from `http_proxy`, `https_proxy`,
/// `all_proxy` and `no_proxy`, read once when the session is created; see the "Proxies" article.
/// Credentials in a proxy URL are sent to the proxy as `Proxy-Authorization`, never to the server.
public struct ProxyConfiguration: Sendable, Hashable, CustomStringConvertible {
    enum Kind: Sendable, Hashable {
        /// The process environment (when `nil`), or the given variables.
        case environment([String: String]?)
        case none
        case server(ProxyServer)
    }

    let kind: Kind

    /// The process environment's proxies (`http_proxy`, `https_proxy`, `all_proxy`, `no_proxy` and their
    /// upper-case forms), read when a session is created. The default.
    public static let environment = ProxyConfiguration(kind: .environment(nil))

    /// Proxies chosen by the environment's rules from `variables` instead of the process environment.
    ///
    /// - Parameter variables: Environment variables, say `["https_proxy": "http://proxy:3128"]`.
    /// - Returns: The configuration.
    public static func environment(variables: [String: String]) -> ProxyConfiguration {
        ProxyConfiguration(kind: .environment(variables))
    }

    /// No proxy, whatever the environment says.
    public static let none = ProxyConfiguration(kind: .none)

    /// Every request through an HTTP proxy: `https` requests through a `CONNECT` tunnel, plain `http` requests
    /// handed to the proxy whole, in absolute form (`GET http://host/path HTTP/1.1`, RFC 9112 §3.2.2), as curl,
    /// python-requests, Go and OkHttp send them.
    ///
    /// A host or port a request URL could not have (a port outside 1...65535, a percent-encoded or over-long host)
    /// fails each request with ``KiteError/Code-swift.struct/proxyFailed`` naming the proxy and the reason.
    ///
    /// - Parameters:
    ///   - host: The proxy's host name or IP address (an IPv6 address without brackets).
    ///   - port: The proxy's port.
    ///   - authorization: The credential sent to the proxy as `Proxy-Authorization: Basic`, if it needs one: on
    ///     each `CONNECT` and on each plain `http` request, never to a server.
    ///   - tunnelsPlainHTTP: Whether plain `http` requests go through a `CONNECT` tunnel too (curl's
    ///     `--proxytunnel`). Most proxies allow `CONNECT` to port 443 only, so leave it `false` unless the proxy
    ///     must not see the requests.
    /// - Returns: The configuration.
    public static func http(
        host: String,
        port: Int,
        authorization: Credential? = nil,
        tunnelsPlainHTTP: Bool = false
    ) -> ProxyConfiguration {
        ProxyConfiguration(
            kind: .server(
                ProxyServer(
                    kind: .http,
                    host: host,
                    port: port,
                    credential: authorization,
                    tunnelsPlainHTTP: tunnelsPlainHTTP
                )
            )
        )
    }

    /// Every request through a SOCKS5 proxy (without authentication: the engine has no SOCKS authentication).
    ///
    /// A host or port a request URL could not have fails each request with
    /// ``KiteError/Code-swift.struct/proxyFailed``, as with ``http(host:port:authorization:tunnelsPlainHTTP:)``.
    ///
    /// - Parameters:
    ///   - host: The proxy's host name or IP address (an IPv6 address without brackets).
    ///   - port: The proxy's port.
    /// - Returns: The configuration.
    public static func socks(host: String, port: Int = 1080) -> ProxyConfiguration {
        ProxyConfiguration(kind: .server(ProxyServer(kind: .socks, host: host, port: port, credential: nil)))
    }

    /// The proxy a request to `url` would go through, without its credential, or `nil` when it goes direct.
    ///
    /// ```swift
    /// let proxies = ProxyConfiguration.environment(variables: ["https_proxy": "http://proxy:3128", "no_proxy": ".internal"])
    /// try proxies.proxy(for: URL(string: "https://api.example.com")!)  // http://proxy:3128
    /// try proxies.proxy(for: URL(string: "https://db.internal")!)      // nil
    /// ```
    ///
    /// - Parameter url: An `http` or `https` URL.
    /// - Returns: The proxy's URL (`http://host:port` or `socks5://host:port`), or `nil`.
    /// - Throws: ``KiteError`` with code `proxyFailed` when the variable or server that applies cannot be used.
    public func proxy(for url: URL) throws(KiteError) -> URL? {
        let scheme = url.scheme?.lowercased() ?? "http"
        guard var host = url.host, !host.isEmpty else { return nil }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        return try ProxyRoute(self).proxy(scheme: scheme, host: host, port: port).flatMap {
            URL(string: $0.description)
        }
    }

    public var description: String {
        switch self.kind {
        case .environment(nil): "the environment's proxies"
        case .environment(.some): "proxies from the given variables"
        case .none: "no proxy"
        case .server(let server): server.description
        }
    }
}

extension ProxyServer {
    /// A proxy server whose credential, if any, is sent with Basic authentication.
    init(kind: Kind, host: String, port: Int, credential: Credential?, tunnelsPlainHTTP: Bool = false) {
        self.init(
            kind: kind,
            host: host,
            port: port,
            basicCredentials: credential?.basicCredentials(),
            tunnelsPlainHTTP: tunnelsPlainHTTP
        )
    }
}
