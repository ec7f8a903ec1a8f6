import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Chooses each request's proxy from a ``ProxyConfiguration``; made once per session.
///
/// `.none` never proxies and an explicit server takes every request (`no_proxy` does not apply to it). The
/// environment's proxies follow curl's documented rules, read and parsed once, here:
///
/// - `http` requests use `http_proxy`, else `HTTP_PROXY`; `https` requests use `https_proxy`, else `HTTPS_PROXY`;
///   both fall back to `all_proxy`, else `ALL_PROXY`. Lower case wins; an empty value counts as unset.
///   `HTTP_PROXY` is ignored when `REQUEST_METHOD` is set: in a CGI script it comes from the request's `Proxy`
///   header ("httpoxy"), as python-requests and Go ignore it.
/// - Hosts in `no_proxy`, else `NO_PROXY`, go direct. Entries are separated by commas or white space and compared
///   without regard to case or trailing dots: `*` matches every host; a name, with or without a leading `.` (or
///   `*.`), matches itself and its subdomains; an IPv4 or IPv6 address (`[::1]` too) matches that address however
///   it is spelled; a CIDR range (`10.0.0.0/8`, `fd00::/8`) matches the IP hosts in it. An entry other than `*`
///   or a range may end in `:port` to match that port only. Entries that do not parse are ignored. Nothing goes
///   direct implicitly, not even `localhost`.
/// - A proxy is `[scheme://][user[:password]@]host[:port]`: the scheme `http` (the default), `socks5` or `socks5h`
///   (for both the engine sends the target's host name to the proxy), port 1080 when none is given, an IPv6 host
///   in brackets, a percent-encoded user and password (HTTP proxies only), and any path ignored. A value that
///   cannot be used fails the requests that would go through it with ``KiteError/Code-swift.struct/proxyFailed``.
/// - A proxy's host and port, from a variable or an explicit server, are checked as a request URL's are
///   (``problem(of:)``); one that fails the check fails the requests that would go through it in the same way.
struct ProxyRoute: ProxySelecting {
    /// What one scheme's requests do unless `no_proxy` sends them direct, decided once.
    private enum Choice: Sendable {
        case direct
        case proxy(ProxyServer)
        case failure(KiteError)
    }

    private let http: Choice
    private let https: Choice
    private let bypass: NoProxy

    /// True when no request can ever go through a proxy (`.none`, or an environment with no proxy variables
    /// set): the engine's fast path.
    let isDirect: Bool

    /// Creates the route, reading the process environment now for ``ProxyConfiguration/environment``.
    ///
    /// - Parameter configuration: The session's proxy configuration.
    init(_ configuration: ProxyConfiguration) {
        switch configuration.kind {
        case .none:
            (self.http, self.https, self.bypass) = (.direct, .direct, NoProxy(""))
        case .server(let server):
            var choice = Choice.proxy(server)
            if let reason = Self.problem(of: server) {
                choice = .failure(
                    KiteError(code: .proxyFailed, message: "the proxy \(server) cannot be used: \(reason)")
                )
            }
            (self.http, self.https, self.bypass) = (choice, choice, NoProxy(""))
        case .environment(let variables):
            let environment = variables ?? ProcessInfo.processInfo.environment
            func variable(_ name: String) -> (name: String, value: String)? {
                let value = environment[name]?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
                return value.isEmpty ? nil : (name, value)
            }
            let isCGI = environment["REQUEST_METHOD"] != nil
            let fallback = variable("all_proxy") ?? variable("ALL_PROXY")
            let http = variable("http_proxy") ?? (isCGI ? nil : variable("HTTP_PROXY")) ?? fallback
            let https = variable("https_proxy") ?? variable("HTTPS_PROXY") ?? fallback
            self.http = Self.choice(http)
            self.https = Self.choice(https)
            self.bypass = NoProxy(variable("no_proxy")?.value ?? variable("NO_PROXY")?.value ?? "")
        }
        if case .direct = self.http, case .direct = self.https {
            self.isDirect = true
        } else {
            self.isDirect = self.bypass.matchesEveryHost
        }
    }

    /// The proxy for a request to `scheme://host:port`, or `nil` for a direct connection.
    ///
    /// - Parameters:
    ///   - scheme: `http` or `https`, in lower case; any other scheme is treated as `http`.
    ///   - host: A name, an IPv4 address or an IPv6 address without brackets.
    ///   - port: The request's port.
    /// - Returns: The proxy, or `nil` to connect directly.
    /// - Throws: ``KiteError/Code-swift.struct/proxyFailed`` when the chosen proxy variable's value cannot be used.
    func proxy(scheme: String, host: String, port: Int) throws(KiteError) -> ProxyServer? {
        let choice = scheme == "https" ? self.https : self.http
        if case .direct = choice { return nil }
        if self.bypass.matches(host: host, port: port) { return nil }
        switch choice {
        case .direct: return nil
        case .proxy(let server): return server
        case .failure(let error): throw error
        }
    }

    private static func choice(_ variable: (name: String, value: String)?) -> Choice {
        guard let variable else { return .direct }
        do {
            return .proxy(try self.server(variable.value, variable: variable.name))
        } catch {
            return .failure(error)
        }
    }

    /// Parses a proxy URL, `[scheme://][user[:password]@]host[:port][/path]`.
    private static func server(_ value: String, variable: String) throws(KiteError) -> ProxyServer {
        func failure(_ reason: String) -> KiteError {
            KiteError(
                code: .proxyFailed,
                message: "the proxy variable \(variable)=\"\(self.redacted(value))\" cannot be used: \(reason)"
            )
        }
        var rest = Substring(value)
        var kind = ProxyServer.Kind.http
        if let separator = rest.range(of: "://") {
            let scheme = rest[..<separator.lowerBound].lowercased()
            rest = rest[separator.upperBound...]
            switch scheme {
            case "http": kind = .http
            case "socks5", "socks5h": kind = .socks
            case "https":
                throw failure(
                    "HTTPS proxies are not supported (the engine cannot speak TLS to a proxy); use an http:// proxy, "
                        + "which tunnels HTTPS requests with CONNECT"
                )
            default:
                throw failure("the proxy scheme \"\(scheme)\" is not supported; use http, socks5 or socks5h")
            }
        }
        if let end = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) {
            rest = rest[..<end]
        }
        var credential: Credential?
        if let at = rest.lastIndex(of: "@") {
            let userInfo = rest[..<at]
            rest = rest[rest.index(after: at)...]
            if !userInfo.isEmpty {
                let colon = userInfo.firstIndex(of: ":")
                let user = userInfo[..<(colon ?? userInfo.endIndex)].removingPercentEncoding
                let password = colon.map { userInfo[userInfo.index(after: $0)...].removingPercentEncoding } ?? ""
                guard let user, let password else {
                    throw failure("its user name or password is not valid percent-encoding")
                }
                credential = Credential(user: user, password: password)
            }
        }
        let host: Substring
        var portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]"),
                let address = IPAddress(rest[rest.index(after: rest.startIndex)..<close]), address.bitCount == 128
            else {
                throw failure("the host in brackets is not an IPv6 address")
            }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw failure("the host must be followed by :port or nothing") }
                portText = after.dropFirst()
            }
        } else if let colon = rest.firstIndex(of: ":") {
            host = rest[..<colon]
            portText = rest[rest.index(after: colon)...]
            if portText?.contains(":") == true {
                throw failure("an IPv6 proxy address must be in brackets, such as http://[::1]:3128")
            }
        } else {
            host = rest
        }
        guard !host.isEmpty else { throw failure("it names no host") }
        var port = 1080
        if let portText, !portText.isEmpty {
            guard let number = Self.port(portText) else {
                throw failure("its port is not a number in 1...65535")
            }
            port = number
        }
        if kind == .socks, credential != nil {
            throw failure("SOCKS proxies with credentials are not supported (the engine has no SOCKS authentication)")
        }
        let server = ProxyServer(kind: kind, host: String(host), port: port, credential: credential)
        if let reason = Self.problem(of: server) { throw failure(reason) }
        return server
    }

    /// Why the engine cannot be given `server`'s host and port, or `nil`. async-http-client connects to the proxy by
    /// them and, for a plain `http` request in absolute form, parses them as a URL's authority, so they must pass
    /// the checks every request's authority passes (``RequestHeadCheck``): a port outside 1...65535 or a host it
    /// would percent-decode (`%5D`) traps in async-http-client and NIO as a request URL's would. The one check for
    /// both a ``ProxyConfiguration/http(host:port:authorization:tunnelsPlainHTTP:)`` or
    /// ``ProxyConfiguration/socks(host:port:)`` server and an environment variable's.
    static func problem(of server: ProxyServer) -> String? {
        var host = server.host
        if host.contains(":") {
            // An IPv6 address, as a URL writes it: in brackets, with a zone's "%" encoded (RFC 6874).
            host = "[" + host.replacingOccurrences(of: "%", with: "%25") + "]"
        }
        return RequestHeadCheck.problem(authority: "\(host):\(server.port)").map { "it " + $0 }
    }

    /// `value` with any password replaced by `***`: whatever lies between the first `:` after the scheme and the
    /// last `@`, so that even a value that does not parse never shows its password.
    static func redacted(_ value: String) -> String {
        let start = value.range(of: "://")?.upperBound ?? value.startIndex
        guard let at = value[start...].lastIndex(of: "@"), let colon = value[start..<at].firstIndex(of: ":") else {
            return value
        }
        return String(value[...colon]) + "***" + String(value[at...])
    }

    /// A port number in 1...65535 written in decimal digits only.
    private static func port(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.count <= 5, text.allSatisfy({ $0.isASCII && $0.isNumber }),
            let port = Int(text), (1...65535).contains(port)
        else { return nil }
        return port
    }
}

extension ProxyRoute {
    /// The hosts of a `no_proxy` list, which go direct.
    private struct NoProxy: Sendable {
        private enum Pattern: Sendable {
            /// A name and its subdomains; `dotted` is the name with a leading dot.
            case name(String, dotted: String)
            case address(IPAddress)
            case range(IPAddress, prefixLength: Int)
        }

        private struct Entry: Sendable {
            var pattern: Pattern
            var port: Int?
        }

        private(set) var matchesEveryHost = false
        private var entries: [Entry] = []

        init(_ list: String) {
            let separators: (Character) -> Bool = { $0 == "," || $0.isWhitespace }
            for text in list.split(whereSeparator: separators) {
                if text == "*" {
                    self.matchesEveryHost = true
                } else if let entry = Self.entry(text.lowercased()) {
                    self.entries.append(entry)
                }
            }
        }

        /// Parses one entry, in lower case, or returns `nil` for a malformed one.
        private static func entry(_ text: String) -> Entry? {
            var text = Substring(text)
            while text.hasSuffix(".") { text = text.dropLast() }
            if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
                guard let address = IPAddress(text[text.index(after: text.startIndex)..<close]),
                    address.bitCount == 128
                else { return nil }
                let after = text[text.index(after: close)...]
                if after.isEmpty { return Entry(pattern: .address(address), port: nil) }
                if after.hasPrefix(":") {
                    return ProxyRoute.port(after.dropFirst()).map { Entry(pattern: .address(address), port: $0) }
                }
                if after.hasPrefix("/") { return Self.range(address, prefixLength: after.dropFirst()) }
                return nil
            }
            if let slash = text.firstIndex(of: "/") {
                guard let address = IPAddress(text[..<slash]) else { return nil }
                return Self.range(address, prefixLength: text[text.index(after: slash)...])
            }
            if let address = IPAddress(text) { return Entry(pattern: .address(address), port: nil) }
            var port: Int?
            if let colon = text.lastIndex(of: ":") {
                guard let number = ProxyRoute.port(text[text.index(after: colon)...]) else { return nil }
                port = number
                text = text[..<colon]
                while text.hasSuffix(".") { text = text.dropLast() }
            }
            if let address = IPAddress(text) { return Entry(pattern: .address(address), port: port) }
            if text.hasPrefix("*.") { text = text.dropFirst() }
            while text.hasPrefix(".") { text = text.dropFirst() }
            guard !text.isEmpty, !text.contains(where: { $0 == ":" || $0 == "*" || $0 == "[" || $0 == "]" }) else {
                return nil
            }
            return Entry(pattern: .name(String(text), dotted: "." + text), port: port)
        }

        private static func range(_ address: IPAddress, prefixLength text: Substring) -> Entry? {
            guard !text.isEmpty, text.count <= 3, text.allSatisfy({ $0.isASCII && $0.isNumber }),
                let length = Int(text), length <= address.bitCount
            else { return nil }
            return Entry(pattern: .range(address, prefixLength: length), port: nil)
        }

        /// Whether a request to `host:port` goes direct.
        func matches(host: String, port: Int) -> Bool {
            if self.matchesEveryHost { return true }
            if self.entries.isEmpty { return false }
            var host = Substring(host.lowercased())
            if host.hasPrefix("["), host.hasSuffix("]") { host = host.dropFirst().dropLast() }
            while host.hasSuffix(".") { host = host.dropLast() }
            let address = IPAddress(host)
            for entry in self.entries {
                if let entryPort = entry.port, entryPort != port { continue }
                switch entry.pattern {
                case .name(let name, let dotted):
                    if address == nil, host == name || host.hasSuffix(dotted) { return true }
                case .address(let entryAddress):
                    if address == entryAddress { return true }
                case .range(let network, let prefixLength):
                    if let address, address.isIn(network, prefixLength: prefixLength) { return true }
                }
            }
            return false
        }
    }
}

/// An IPv4 or IPv6 address as its bits, so that every spelling of one address compares equal.
private struct IPAddress: Sendable, Hashable {
    /// 32 for IPv4, 128 for IPv6.
    let bitCount: Int
    /// The bits, most significant first and left-aligned: an IPv4 address is the top 32 bits of `high`.
    let high: UInt64
    let low: UInt64

    /// Parses an address with `inet_pton`: dotted IPv4 when `text` has no `:`, else IPv6 without brackets.
    init?(_ text: Substring) {
        let text = String(text)
        if text.contains(":") {
            var address = in6_addr()
            guard inet_pton(AF_INET6, text, &address) == 1 else { return nil }
            let (high, low) = withUnsafeBytes(of: &address) { bytes in
                (
                    bytes[0..<8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) },
                    bytes[8..<16].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
                )
            }
            (self.bitCount, self.high, self.low) = (128, high, low)
        } else {
            var address = in_addr()
            guard inet_pton(AF_INET, text, &address) == 1 else { return nil }
            (self.bitCount, self.high, self.low) = (32, UInt64(UInt32(bigEndian: address.s_addr)) << 32, 0)
        }
    }

    /// Whether the first `prefixLength` bits equal `network`'s, for two addresses of the same family.
    func isIn(_ network: IPAddress, prefixLength: Int) -> Bool {
        guard self.bitCount == network.bitCount else { return false }
        // Swift's `<<` gives 0 for a shift by 64 or more.
        let highMask = prefixLength >= 64 ? UInt64.max : ~UInt64(0) << (64 - prefixLength)
        let lowMask = prefixLength <= 64 ? 0 : ~UInt64(0) << (128 - prefixLength)
        return self.high & highMask == network.high & highMask && self.low & lowMask == network.low & lowMask
    }
}
