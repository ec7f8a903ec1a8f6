import Foundation
import HTTPTypes

extension CacheRules {
    /// The URLs whose stored responses a response to an unsafe request invalidates (RFC 9111 §4.4).
    ///
    /// Only when the method is unsafe (anything but `GET`, `HEAD`, `OPTIONS` and `TRACE`, unknown methods included,
    /// RFC 9110 §9.2.1) and the status is not an error (2xx or 3xx): the request URL ("MUST invalidate the target
    /// URI"), then the URLs of `Location` and `Content-Location`, resolved against the request URL, that have its
    /// origin (scheme, host and port, the scheme's default port filled in, RFC 9110 §4.3.1): "a cache MUST NOT
    /// trigger an invalidation under these conditions if the origin … differs", which keeps one site from flushing
    /// another's entries. Fragments are removed, as no target URI has one (RFC 9110 §7.1), and each URL appears
    /// once. A value that is not a URL is skipped.
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - response: Its response.
    ///   - requestURL: The request's URL, as the cache keys it.
    /// - Returns: The URLs to invalidate, the request URL first; empty when nothing is invalidated.
    static func invalidatedURLs(request: HTTPRequest, response: HTTPResponse, requestURL: URL) -> [URL] {
        guard !Self.safeMethods.contains(request.method), (200..<400).contains(response.status.code) else { return [] }
        let target = Self.withoutFragment(requestURL)
        var result = [target]
        guard let origin = Self.origin(of: target) else { return result }
        let candidates = response.headerFields[values: .location] + response.headerFields[values: .contentLocation]
        for value in candidates {
            let text = String(CacheControl.trimmed(Substring(value)))
            guard !text.isEmpty, let resolved = URL(string: text, relativeTo: target)?.absoluteURL else { continue }
            let url = Self.withoutFragment(resolved)
            if Self.origin(of: url) == origin, !result.contains(where: { $0.absoluteString == url.absoluteString }) {
                result.append(url)
            }
        }
        return result
    }

    /// The methods RFC 9110 §9.2.1 defines as safe.
    static let safeMethods: Set<HTTPRequest.Method> = [.get, .head, .options, .trace]

    /// A URL's origin (RFC 9110 §4.3.1): lowercased scheme and host, and the port, defaulted by scheme.
    private static func origin(of url: URL) -> String? {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: true),
            let scheme = components.scheme?.lowercased(), let host = components.host?.lowercased(), !host.isEmpty
        else { return nil }
        let defaultPort: Int? =
            switch scheme {
            case "http", "ws": 80
            case "https", "wss": 443
            default: nil
            }
        guard let port = components.port ?? defaultPort else { return "\(scheme)://\(host)" }
        return "\(scheme)://\(host):\(port)"
    }

    private static func withoutFragment(_ url: URL) -> URL {
        guard url.fragment != nil, var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else {
            return url
        }
        components.fragment = nil
        return components.url ?? url
    }
}
