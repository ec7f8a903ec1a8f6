import Foundation
import HTTPTypes

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A request before Kite sends it: method, URL, header fields, an in-memory body and a timeout.
///
/// Parameter encoders and request modifiers change a draft; when the request is sent Kite turns it
/// into an `HTTPRequest` (swift-http-types) and checks it: the URL must be `http` or `https` with a
/// host, and user and password in the URL become a Basic `Authorization` header.
///
/// ```swift
/// let request = session.request("http://127.0.0.1:8080/get") { draft in
///     draft.headerFields[.accept] = "application/json"
///     draft.timeout = .seconds(5)
/// }
/// ```
public struct RequestDraft: Sendable, Hashable {
    /// The method.
    public var method: HTTPRequest.Method

    /// The URL, including its query.
    public var url: URL

    /// The header fields. Session defaults (`Accept-Encoding`, `Accept-Language`, `User-Agent`) are
    /// added when sent, unless set here.
    public var headerFields: HTTPFields

    /// The body, when it is in memory.
    public var body: Data?

    /// The total timeout for this request, from start to the last body byte. `nil` uses the session's.
    public var timeout: Duration?

    /// Whether this request takes part in the session's cookie handling (`URLRequest.httpShouldHandleCookies`):
    /// `false` sends no cookies from the jar and stores none of the cookies its responses set. It cannot turn
    /// cookies on in a session whose ``Session/Configuration-swift.struct/httpShouldHandleCookies`` is off.
    public var httpShouldHandleCookies = true

    /// How this request uses the session's ``ResponseCache`` (`URLRequest.cachePolicy`); `nil` uses the session's
    /// ``Session/Configuration-swift.struct/requestCachePolicy``.
    public var cachePolicy: URLRequest.CachePolicy?

    /// Creates a draft.
    ///
    /// - Parameters:
    ///   - method: The method.
    ///   - url: The URL.
    ///   - headerFields: The header fields.
    ///   - body: The body.
    ///   - timeout: The total timeout, or `nil` for the session's.
    public init(
        method: HTTPRequest.Method = .get,
        url: URL,
        headerFields: HTTPFields = [:],
        body: Data? = nil,
        timeout: Duration? = nil
    ) {
        self.method = method
        self.url = url
        self.headerFields = headerFields
        self.body = body
        self.timeout = timeout
    }

    /// The method and URL without credentials.
    public var summary: RequestSummary {
        RequestSummary(method: self.method, url: self.url.absoluteString)
    }
}

extension RequestDraft {
    /// The request head Kite sends for this draft.
    ///
    /// - Returns: The head, with `scheme`, `authority` and `path` (with query) taken from ``url``.
    /// - Throws: ``KiteError`` with code `invalidURL` when the URL is not `http`/`https`, has no host, or has a part
    ///   the engine cannot take (``RequestHeadCheck``), `invalidHeader` for too many header fields.
    func makeHTTPRequest() throws(KiteError) -> HTTPRequest {
        let absolute = self.url.absoluteString
        if absolute.containsControlCharacter {
            throw KiteError(
                code: .invalidURL,
                message: "URL \"\(self.summary.url)\" contains a control character",
                request: self.summary
            )
        }
        var fields = self.headerFields
        let target: (scheme: String, authority: String, path: String)
        if let parts = Self.requestTarget(ofAbsolute: absolute, hasBase: self.url.baseURL != nil) {
            target = parts
        } else {
            target = try self.requestTargetFromAccessors()
            if let user = self.url.absoluteURL.user(percentEncoded: false), fields[.authorization] == nil {
                fields[.authorization] = Credential(
                    user: user,
                    password: self.url.absoluteURL.password(percentEncoded: false) ?? ""
                ).basicAuthorization()
            }
        }
        let head = HTTPRequest(
            method: self.method,
            scheme: target.scheme,
            authority: target.authority,
            path: target.path,
            headerFields: fields
        )
        if let refusal = RequestHeadCheck.refusal(
            scheme: target.scheme,
            authority: target.authority,
            path: target.path,
            fields: fields
        ) {
            throw refusal.error(for: self.summary)
        }
        return head
    }

    /// The scheme, authority and path (with query) by `URL`'s accessors: any URL, or the error that says
    /// why it cannot be requested.
    func requestTargetFromAccessors() throws(KiteError) -> (scheme: String, authority: String, path: String) {
        func invalid(_ reason: String) -> KiteError {
            KiteError(code: .invalidURL, message: "URL \"\(self.summary.url)\" \(reason)", request: self.summary)
        }
        // URL's own accessors rather than URLComponents: they read the parse URL already made.
        let url = self.url.baseURL == nil ? self.url : self.url.absoluteURL
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            if let scheme = url.scheme {
                throw invalid("has the unsupported scheme \"\(scheme)\"; use http or https")
            }
            throw invalid("has no scheme; use http:// or https://")
        }
        guard var host = url.host(percentEncoded: true), !host.isEmpty else {
            throw invalid("has no host")
        }
        // The host as the string writes it: `URL`'s accessor gives an internationalized host, which the string
        // holds in its ASCII form (`xn--bcher-kva.example`), as percent-encoded Unicode, and it drops brackets,
        // which `URL` accepts around any name (`http://[Int]/`).
        if let written = Self.writtenHost(inAbsolute: url.absoluteString), !written.isEmpty {
            if written.hasPrefix("["), !Self.isIPv6Literal(written) {
                throw invalid("has the host \(written), which is not an IPv6 address")
            }
            host = String(written)
        }
        if host.utf8.contains(UInt8(ascii: ":")), !host.hasPrefix("[") {
            host = "[\(host)]"
        }
        var authority = host
        if let port = url.port {
            authority += ":\(port)"
        }
        var path = url.path(percentEncoded: true)
        if path.isEmpty {
            path = "/"
        }
        if let query = url.query(percentEncoded: true) {
            path += "?\(query)"
        }
        return (scheme, authority, path)
    }

    /// The scheme, authority and path (with query) of the common URL, read straight from its string:
    /// `http` or `https`, `//`, an authority without user info or an empty port, then the path.
    /// Foundation has parsed and checked the string, so its parts are where RFC 3986 puts them; each
    /// accessor of `URL` would search the string again and allocate a copy. `nil` for anything else
    /// (a base URL, user info, no host, another scheme), which the accessors handle and explain.
    static func requestTarget(
        ofAbsolute absolute: String,
        hasBase: Bool
    ) -> (scheme: String, authority: String, path: String)? {
        guard !hasBase else { return nil }
        var absolute = absolute
        return absolute.withUTF8 { bytes in
            let scheme: String
            var index: Int
            if Self.hasPrefix("http://", bytes) {
                (scheme, index) = ("http", 7)
            } else if Self.hasPrefix("https://", bytes) {
                (scheme, index) = ("https", 8)
            } else {
                return nil
            }
            let authorityStart = index
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "/") || byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#") { break }
                if byte == UInt8(ascii: "@") { return nil }
                index += 1
            }
            guard index > authorityStart, bytes[authorityStart] != UInt8(ascii: ":"),
                bytes[index - 1] != UInt8(ascii: ":")
            else { return nil }
            let authority = String(decoding: bytes[authorityStart..<index], as: UTF8.self)
            if bytes[authorityStart] == UInt8(ascii: "["), !Self.isIPv6Literal(Self.bracketedPrefix(of: authority)) {
                return nil
            }
            let pathStart = index
            while index < bytes.count, bytes[index] != UInt8(ascii: "#") {
                index += 1
            }
            let rest = bytes[pathStart..<index]
            let path: String
            switch rest.first {
            case nil: path = "/"
            case UInt8(ascii: "?"): path = "/" + String(decoding: rest, as: UTF8.self)
            default: path = String(decoding: rest, as: UTF8.self)
            }
            return (scheme, authority, path)
        }
    }

    /// The host of an absolute URL's authority as its string writes it, after any user info and before any
    /// port (`[::1]` in `http://u@[::1]:80/`), or `nil` when the string has no authority.
    static func writtenHost(inAbsolute absolute: String) -> Substring? {
        guard let schemeEnd = absolute.range(of: "://") else { return nil }
        let rest = absolute[schemeEnd.upperBound...]
        var authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if let at = authority.lastIndex(of: "@") {
            authority = authority[authority.index(after: at)...]
        }
        guard authority.hasPrefix("[") else { return authority.prefix { $0 != ":" } }
        return Self.bracketedPrefix(of: authority)
    }

    /// `authority` up to and with its first `]`, or all of it when it has none.
    private static func bracketedPrefix<Text: StringProtocol>(of authority: Text) -> Substring {
        let text = Substring(authority)
        guard let close = text.firstIndex(of: "]") else { return text }
        return text[...close]
    }

    /// Whether `literal` is `[` an IPv6 address (with an optional `%25` zone) `]`: RFC 3986's IP-literal
    /// without the IPvFuture form, which nothing resolves.
    static func isIPv6Literal(_ literal: Substring) -> Bool {
        guard literal.hasPrefix("["), literal.hasSuffix("]"), literal.count > 2 else { return false }
        var address = literal.dropFirst().dropLast()
        if let zone = address.range(of: "%25") {
            guard zone.upperBound < address.endIndex else { return false }
            address = address[..<zone.lowerBound]
        }
        var storage = in6_addr()
        return inet_pton(AF_INET6, String(address), &storage) == 1
    }

    /// Whether `bytes` starts with `prefix`, ASCII letters compared without case.
    private static func hasPrefix(_ prefix: StaticString, _ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard bytes.count >= prefix.utf8CodeUnitCount else { return false }
        for offset in 0..<prefix.utf8CodeUnitCount {
            var byte = bytes[offset]
            if byte >= UInt8(ascii: "A"), byte <= UInt8(ascii: "Z") { byte |= 0x20 }
            guard byte == prefix.utf8Start[offset] else { return false }
        }
        return true
    }
}

/// A closure that changes a request's draft before it is sent, for example to set a timeout.
public typealias RequestModifier = @Sendable (inout RequestDraft) throws -> Void
