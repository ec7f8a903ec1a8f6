import Foundation
import HTTPTypes

/// Decides what happens to a redirect: Alamofire 5's `RedirectHandler`, made async.
///
/// Kite works out the next request first with its default rules (RFC 9110 method changes, cycle
/// detection, the session's ``Session/Configuration/maximumRedirects``, credentials dropped across
/// origins, no `https` → `http` unless allowed, only `http` and `https`); the handler then sees that
/// request and may follow it, change it, or stop. Where Alamofire passes the `URLSessionTask`, Kite passes
/// the ``BaseRequest`` being redirected.
public protocol RedirectHandler: Sendable {
    /// Returns the request to send next, or `nil` to stop: the redirect response becomes the result.
    ///
    /// - Parameters:
    ///   - task: The request being redirected.
    ///   - request: The request Kite would send next.
    ///   - response: The redirect response.
    func task(
        _ task: BaseRequest,
        willBeRedirectedTo request: HTTPRequest,
        for response: HTTPResponse
    ) async -> HTTPRequest?
}

/// The built-in ``RedirectHandler``s.
///
/// ```swift
/// // Per session:
/// let session = Session(configuration: .default, redirectHandler: Redirector.doNotFollow)
/// // Per request, overriding the session's:
/// let response = await session.request("http://127.0.0.1:8080/redirect/1")
///     .redirect(using: .follow)
///     .serializingData()
///     .response
/// // Changing the next request:
/// let tagged = Redirector(behavior: .modify { _, request, _ in
///     var request = request
///     request.headerFields[HTTPField.Name("X-Redirected")!] = "1"
///     return request
/// })
/// ```
public struct Redirector: RedirectHandler {
    /// What a ``Redirector`` does.
    public enum Behavior: Sendable {
        /// Follow the redirect as Kite's rules make it.
        case follow
        /// Stop: the 3xx response is the result.
        case doNotFollow
        /// Let the closure return the request to send, or `nil` to stop.
        case modify(@Sendable (BaseRequest, HTTPRequest, HTTPResponse) async -> HTTPRequest?)
    }

    /// Follows redirects (the default).
    public static let follow = Redirector(behavior: .follow)
    /// Never follows redirects: the 3xx response is the result.
    public static let doNotFollow = Redirector(behavior: .doNotFollow)

    /// What this redirector does.
    public let behavior: Behavior

    /// Creates a redirector.
    public init(behavior: Behavior) {
        self.behavior = behavior
    }

    public func task(
        _ task: BaseRequest,
        willBeRedirectedTo request: HTTPRequest,
        for response: HTTPResponse
    ) async -> HTTPRequest? {
        switch self.behavior {
        case .follow: request
        case .doNotFollow: nil
        case .modify(let closure): await closure(task, request, response)
        }
    }
}

extension RedirectHandler where Self == Redirector {
    /// Follows redirects.
    public static var follow: Redirector { Redirector.follow }
    /// Never follows redirects.
    public static var doNotFollow: Redirector { Redirector.doNotFollow }
    /// Lets `closure` return the request to send next, or `nil` to stop.
    public static func modify(
        using closure: @escaping @Sendable (BaseRequest, HTTPRequest, HTTPResponse) async -> HTTPRequest?
    ) -> Redirector {
        Redirector(behavior: .modify(closure))
    }
}
