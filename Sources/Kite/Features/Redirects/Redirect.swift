import Foundation
import HTTPTypes

/// Where a redirect response sends a request, decided without I/O (RFC 9110 §15.4).
///
/// - 301 and 302 turn `POST` into `GET` without a body (as browsers and curl do); other methods keep
///   theirs. 303 turns everything but `HEAD` into `GET` without a body. 307 and 308 keep the method
///   and the body.
/// - A body that is dropped takes its `Content-Type`, `Content-Length` and `Transfer-Encoding` with it.
/// - A redirect to another origin (scheme, host or port) drops `Authorization`, `Cookie` and
///   `Proxy-Authorization`, so credentials never leak to a host they were not meant for.
struct Redirect: Equatable {
    /// The request to send next.
    var head: HTTPRequest
    /// The absolute URL it goes to.
    var url: URL
    /// Whether the request body must be sent again.
    var keepsBody: Bool

    /// The statuses that redirect.
    static let statuses: Set<Int> = [301, 302, 303, 307, 308]

    /// The fields that carry credentials.
    static let credentialFields: [HTTPField.Name] = [.authorization, .cookie, .proxyAuthorization]

    /// The redirect `response` asks for, or `nil` when it is not a redirect or its `Location` is
    /// missing, unparsable or not `http`/`https`.
    init?(following response: HTTPResponse, to request: HTTPRequest) {
        guard Self.statuses.contains(response.status.code),
            let location = response.headerFields[.location]?.trimmingCharacters(in: .whitespaces),
            !location.isEmpty,
            let from = Self.url(of: request),
            let target = URL(string: location, relativeTo: from)?.absoluteURL,
            let scheme = target.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let components = URLComponents(url: target, resolvingAgainstBaseURL: true),
            let host = components.percentEncodedHost, !host.isEmpty
        else { return nil }

        var head = request
        var keepsBody = true
        let code = response.status.code
        if ((code == 301 || code == 302) && request.method == .post) || (code == 303 && request.method != .head) {
            head.method = .get
            keepsBody = false
        }
        if !keepsBody {
            head.headerFields[.contentType] = nil
            head.headerFields[.contentLength] = nil
            head.headerFields[.transferEncoding] = nil
        }
        head.scheme = scheme
        var authority = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        if let port = components.port { authority += ":\(port)" }
        head.authority = authority
        var path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        if let query = components.percentEncodedQuery { path += "?\(query)" }
        head.path = path
        if Self.origin(of: request) != Self.origin(of: head) {
            for name in Self.credentialFields { head.headerFields[name] = nil }
        }
        // A fragment-free absolute URL, as the request line will carry it.
        guard let url = Self.url(of: head) else { return nil }
        self.head = head
        self.url = url
        self.keepsBody = keepsBody
    }

    /// The absolute URL of a request head.
    static func url(of request: HTTPRequest) -> URL? {
        guard let scheme = request.scheme, let authority = request.authority else { return nil }
        return URL(string: "\(scheme)://\(authority)\(request.path ?? "/")")
    }

    /// Scheme, host and port (the default port made explicit), lowercased.
    static func origin(of request: HTTPRequest) -> String {
        let scheme = (request.scheme ?? "http").lowercased()
        var authority = (request.authority ?? "").lowercased()
        let hasPort = authority.range(of: #":\d+$"#, options: .regularExpression) != nil
        if !hasPort {
            authority += scheme == "https" ? ":443" : ":80"
        }
        return "\(scheme)://\(authority)"
    }
}
