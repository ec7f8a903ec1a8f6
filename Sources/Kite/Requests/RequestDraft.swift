import Foundation
import HTTPTypes

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
    /// - Throws: ``KiteError`` with code `invalidURL` when the URL is not `http`/`https` or has no host.
    func makeHTTPRequest() throws(KiteError) -> HTTPRequest {
        let absolute = self.url.absoluteString
        func invalid(_ reason: String) -> KiteError {
            KiteError(code: .invalidURL, message: "URL \"\(self.summary.url)\" \(reason)", request: self.summary)
        }
        if absolute.containsControlCharacter {
            throw invalid("contains a control character")
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
        var fields = self.headerFields
        if let user = url.user(percentEncoded: false), fields[.authorization] == nil {
            fields[.authorization] = Credential(user: user, password: url.password(percentEncoded: false) ?? "")
                .basicAuthorization()
        }
        return HTTPRequest(method: self.method, scheme: scheme, authority: authority, path: path, headerFields: fields)
    }
}

/// A closure that changes a request's draft before it is sent, for example to set a timeout.
public typealias RequestModifier = @Sendable (inout RequestDraft) throws -> Void
