import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One cookie as a cookie jar stores it: RFC 6265bis's storage model, not the `Set-Cookie` text.
///
/// A cookie comes from a server's `Set-Cookie` header, parsed with ``init(setCookie:for:now:)``, or is made
/// by hand. Its ``domain`` is canonical: lower-case and without the leading dot some servers send. A
/// host-only cookie (one set without a `Domain` attribute) is sent to exactly its ``domain``; any other
/// is sent to the domain and every subdomain of it.
///
/// ```swift
/// let url = URL(string: "https://www.example.com/account/login")!
/// let cookie = Cookie(setCookie: "sid=31d4d96e; Path=/; Secure; HttpOnly; Max-Age=3600", for: url)
/// print(cookie?.domain as Any)  // Optional("www.example.com")
/// print(cookie?.isHostOnly as Any)  // Optional(true)
///
/// let handMade = Cookie(name: "theme", value: "dark", domain: "example.com", isHostOnly: false)
/// print(handMade.isPersistent)  // false: it has no expiry, so it lives as long as the jar
/// ```
///
/// Two cookies are equal when every property is, times included. A jar keeps one cookie for each
/// ``name``, ``domain``, ``isHostOnly`` and ``path``.
public struct Cookie: Sendable, Hashable, Codable {
    /// The `SameSite` attribute: whether a browser sends the cookie with requests from other sites.
    ///
    /// Kite parses and keeps it, and a ``HTTPCookieJar`` persists it, but it changes nothing Kite sends: a
    /// client has no "site for cookies", so each request is treated as a same-site one. An unknown
    /// value (`SameSite=Sometimes`) leaves ``Cookie/sameSite`` `nil`, as RFC 6265bis §5.6.7 says.
    ///
    /// ```swift
    /// let url = URL(string: "https://example.com/")!
    /// print(Cookie(setCookie: "a=1; SameSite=lax", for: url)?.sameSite as Any)  // Optional(Kite.Cookie.SameSite.lax)
    /// ```
    public enum SameSite: String, Sendable, Hashable, Codable, CaseIterable {
        /// `SameSite=Strict`: only with requests from the cookie's own site.
        case strict = "Strict"
        /// `SameSite=Lax`: also with top-level navigations from other sites.
        case lax = "Lax"
        /// `SameSite=None`: with every request.
        case none = "None"
    }

    /// The cookie's name; may be empty when the server sent only a value.
    public var name: String

    /// The cookie's value, exactly as the server sent it (double quotes included).
    public var value: String

    /// The host the cookie belongs to: lower-case, without a leading dot.
    public var domain: String

    /// The path the cookie is sent under; always starts with `/`.
    public var path: String

    /// Whether the cookie is sent to ``domain`` only (it was set without a `Domain` attribute), rather
    /// than to the domain and its subdomains.
    public var isHostOnly: Bool

    /// When the cookie expires; `nil` for a session cookie, which lives as long as the jar holding it.
    public var expires: Date?

    /// Whether the cookie is sent over secure connections only (`https`, or `http` to a loopback host).
    public var isSecure: Bool

    /// Whether the server marked the cookie `HttpOnly`. Kite is an HTTP client, so it sends these cookies
    /// like any other; the flag is kept so that it survives persistence and conversions.
    public var isHTTPOnly: Bool

    /// The `SameSite` attribute, or `nil` when the server sent none or an unknown value.
    public var sameSite: SameSite?

    /// When the cookie was first stored. A replacement keeps the first cookie's creation time.
    public var creationTime: Date

    /// When the cookie was last sent or stored.
    public var lastAccessTime: Date

    /// Creates a cookie.
    ///
    /// `domain` is made canonical: lower-cased, a leading dot dropped. A `path` that is empty or does not
    /// start with `/` becomes `/`.
    ///
    /// ```swift
    /// let cookie = Cookie(
    ///     name: "session",
    ///     value: "abc123",
    ///     domain: ".Example.com",
    ///     isHostOnly: false,
    ///     expires: Date(timeIntervalSinceNow: 3600),
    ///     isSecure: true
    /// )
    /// print(cookie.domain)  // example.com
    /// ```
    ///
    /// - Parameters:
    ///   - name: The cookie's name.
    ///   - value: The cookie's value.
    ///   - domain: The host the cookie belongs to.
    ///   - path: The path the cookie is sent under.
    ///   - isHostOnly: Whether the cookie is sent to `domain` only, rather than to its subdomains too.
    ///   - expires: When the cookie expires; `nil` for a session cookie.
    ///   - isSecure: Whether the cookie is sent over secure connections only.
    ///   - isHTTPOnly: Whether the server marked the cookie `HttpOnly`.
    ///   - sameSite: The `SameSite` attribute.
    ///   - creationTime: When the cookie was first stored.
    ///   - lastAccessTime: When the cookie was last sent or stored; `creationTime` when `nil`.
    public init(
        name: String,
        value: String,
        domain: String,
        path: String = "/",
        isHostOnly: Bool = true,
        expires: Date? = nil,
        isSecure: Bool = false,
        isHTTPOnly: Bool = false,
        sameSite: SameSite? = nil,
        creationTime: Date = Date(),
        lastAccessTime: Date? = nil
    ) {
        self.name = name
        self.value = value
        self.domain = Self.canonicalDomain(domain)
        self.path = path.hasPrefix("/") ? path : "/"
        self.isHostOnly = isHostOnly
        self.expires = expires
        self.isSecure = isSecure
        self.isHTTPOnly = isHTTPOnly
        self.sameSite = sameSite
        self.creationTime = creationTime
        self.lastAccessTime = lastAccessTime ?? creationTime
    }

    /// Whether the cookie has an expiry date, so that a persisting ``HTTPCookieJar`` writes it to its file.
    ///
    /// ```swift
    /// let session = Cookie(name: "a", value: "1", domain: "example.com")
    /// print(session.isPersistent)  // false
    /// ```
    public var isPersistent: Bool { self.expires != nil }

    /// Whether the cookie has expired at `now`: its expiry date is `now` or earlier.
    ///
    /// ```swift
    /// let cookie = Cookie(name: "a", value: "1", domain: "example.com", expires: Date(timeIntervalSince1970: 0))
    /// print(cookie.isExpired())  // true
    /// ```
    ///
    /// - Parameter now: The time to compare with.
    /// - Returns: `true` when the cookie has expired; always `false` for a session cookie.
    public func isExpired(at now: Date = Date()) -> Bool {
        guard let expires else { return false }
        return expires <= now
    }

    /// The fields that identify a cookie in a jar: a cookie with the same ones replaces it
    /// (RFC 6265bis §5.7).
    var key: Key {
        Key(name: self.name, domain: self.domain, isHostOnly: self.isHostOnly, path: self.path)
    }

    /// What identifies a stored cookie.
    struct Key: Hashable {
        var name: String
        var domain: String
        var isHostOnly: Bool
        var path: String
    }

    /// Whether the cookie is sent with a request to `target` (RFC 6265bis §5.8.3), expiry aside.
    func isSent(to target: Target) -> Bool {
        if self.isHostOnly {
            guard target.host == self.domain else { return false }
        } else {
            guard Self.domainMatches(target.host, self.domain, hostIsIPAddress: target.isIPAddress) else {
                return false
            }
        }
        guard Self.pathMatches(target.path, self.path) else { return false }
        return !self.isSecure || target.isSecure
    }

    /// `domain` lower-cased, without leading dots or the brackets of an IPv6 literal.
    static func canonicalDomain(_ domain: String) -> String {
        var domain = Substring(domain.lowercased())
        while domain.hasPrefix(".") { domain.removeFirst() }
        if domain.hasPrefix("["), domain.hasSuffix("]") {
            domain = domain.dropFirst().dropLast()
        }
        return String(domain)
    }

    /// RFC 6265bis §5.1.3: whether `string` (a canonical host) domain-matches `domain`: they are equal,
    /// or `string` is a host name (not an IP address) that ends with `.` followed by `domain`.
    static func domainMatches(_ string: String, _ domain: String, hostIsIPAddress: Bool) -> Bool {
        let string = string.utf8
        let domain = domain.utf8
        if string.elementsEqual(domain) { return true }
        guard !hostIsIPAddress, !domain.isEmpty, string.count > domain.count else { return false }
        let boundary = string.index(string.endIndex, offsetBy: -(domain.count + 1))
        return string[boundary] == UInt8(ascii: ".") && string[string.index(after: boundary)...].elementsEqual(domain)
    }

    /// RFC 6265bis §5.1.4: whether `requestPath` path-matches `cookiePath`: they are equal, or
    /// `cookiePath` is a prefix of it that ends with `/` or is followed by `/` in it.
    static func pathMatches(_ requestPath: String, _ cookiePath: String) -> Bool {
        let request = requestPath.utf8
        let cookie = cookiePath.utf8
        guard request.starts(with: cookie) else { return false }
        if request.count == cookie.count || cookie.last == UInt8(ascii: "/") { return true }
        return request[request.index(request.startIndex, offsetBy: cookie.count)] == UInt8(ascii: "/")
    }
}

extension Cookie {
    /// Creates a cookie from Foundation's `HTTPCookie`, for users who already have some.
    ///
    /// A domain that starts with a dot makes a cookie for the domain and its subdomains; one without
    /// makes a host-only cookie, as `HTTPCookieStorage` treats them. The creation and last access times
    /// are now, as `HTTPCookie` has no such fields. `SameSite` is carried on Apple platforms; Foundation
    /// on Linux has no such property, so there the result has none.
    ///
    /// ```swift
    /// let foundationCookie = HTTPCookie(properties: [
    ///     .name: "sid", .value: "abc", .domain: ".example.com", .path: "/",
    /// ])!
    /// let cookie = Cookie(foundationCookie)
    /// print(cookie.domain, cookie.isHostOnly)  // example.com false
    /// ```
    ///
    /// - Parameter cookie: The Foundation cookie.
    public init(_ cookie: HTTPCookie) {
        self.init(
            name: cookie.name,
            value: cookie.value,
            domain: cookie.domain,
            path: cookie.path,
            isHostOnly: !cookie.domain.hasPrefix("."),
            expires: cookie.expiresDate,
            isSecure: cookie.isSecure,
            isHTTPOnly: cookie.isHTTPOnly,
            sameSite: Self.sameSite(of: cookie)
        )
    }

    /// The cookie as Foundation's `HTTPCookie`, or `nil` when Foundation refuses its fields.
    ///
    /// A cookie for the domain and its subdomains gets a leading dot on its domain, a host-only one none.
    /// A session cookie is marked `Discard`. `HttpOnly` is carried; `SameSite` is carried on Apple platforms
    /// only (Foundation on Linux has no such property).
    ///
    /// ```swift
    /// let cookie = Cookie(name: "sid", value: "abc", domain: "example.com", isHostOnly: false, isSecure: true)
    /// print(cookie.httpCookie?.domain as Any)  // Optional(".example.com")
    /// ```
    public var httpCookie: HTTPCookie? {
        var properties: [HTTPCookiePropertyKey: Any] = [
            .name: self.name,
            .value: self.value,
            .domain: self.isHostOnly ? self.domain : "." + self.domain,
            .path: self.path,
            .version: "0",
        ]
        if let expires {
            properties[.expires] = expires
        } else {
            properties[.discard] = "TRUE"
        }
        if self.isSecure { properties[.secure] = "TRUE" }
        if self.isHTTPOnly { properties[HTTPCookiePropertyKey("HttpOnly")] = "TRUE" }
        #if !canImport(FoundationNetworking)
        switch self.sameSite {
        case .strict: properties[.sameSitePolicy] = HTTPCookieStringPolicy.sameSiteStrict.rawValue
        case .lax: properties[.sameSitePolicy] = HTTPCookieStringPolicy.sameSiteLax.rawValue
        case .some(.none), nil: break
        }
        #endif
        return HTTPCookie(properties: properties)
    }

    /// The `SameSite` policy of a Foundation cookie, where Foundation has one.
    private static func sameSite(of cookie: HTTPCookie) -> SameSite? {
        #if canImport(FoundationNetworking)
        return nil
        #else
        switch cookie.sameSitePolicy {
        case HTTPCookieStringPolicy.sameSiteStrict?: return .strict
        case HTTPCookieStringPolicy.sameSiteLax?: return .lax
        default: return nil
        }
        #endif
    }
}

extension Cookie {
    /// The cookie made again through the memberwise initialiser, so that a decoded or hand-made cookie has a
    /// canonical domain and a path starting with `/`.
    func normalized() -> Cookie {
        Cookie(
            name: self.name,
            value: self.value,
            domain: self.domain,
            path: self.path,
            isHostOnly: self.isHostOnly,
            expires: self.expires,
            isSecure: self.isSecure,
            isHTTPOnly: self.isHTTPOnly,
            sameSite: self.sameSite,
            creationTime: self.creationTime,
            lastAccessTime: self.lastAccessTime
        )
    }
}
