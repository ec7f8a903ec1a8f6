import Foundation

/// Decides, response by response, whether and what the session's ``ResponseCache`` stores: Alamofire's
/// `CachedResponseHandler`.
///
/// The cache asks only about responses RFC 9111 lets it store. A session's handler
/// (`Session(…, cachedResponseHandler:)`) applies to all its requests, a request's own
/// (``BaseRequest/cacheResponse(using:)``) replaces it.
///
/// Kite asks before the body arrives, with the head, because the body is written to the cache as it streams
/// to the caller (URLSession buffers it whole and shows it to Alamofire's handler): a handler can refuse a
/// response or change its stored head, not its body.
public protocol CachedResponseHandler: Sendable {
    /// The response to store for `request`: `response` itself, a changed copy, or `nil` to store nothing.
    ///
    /// - Parameters:
    ///   - request: The request that got the response.
    ///   - response: What the cache would store.
    /// - Returns: What to store, or `nil`.
    func dataTask(_ request: BaseRequest, willCacheResponse response: CachedResponse) async -> CachedResponse?
}

/// The built-in ``CachedResponseHandler``: store (``cache``), do not store (``doNotCache``) or change what is
/// stored (``modify(using:)``), as Alamofire's `ResponseCacher`.
///
/// ```swift
/// let request = session.request("http://127.0.0.1:8080/cache/60")
///     .cacheResponse(using: ResponseCacher.doNotCache)
/// ```
public struct ResponseCacher: CachedResponseHandler {
    /// What the cacher does.
    public enum Behavior: Sendable {
        /// Stores the response as it is.
        case cache
        /// Stores nothing.
        case doNotCache
        /// Stores what the closure returns (`nil`: nothing).
        case modify(@Sendable (BaseRequest, CachedResponse) -> CachedResponse?)
    }

    /// Stores every response the cache may store.
    public static let cache = ResponseCacher(behavior: .cache)
    /// Stores nothing.
    public static let doNotCache = ResponseCacher(behavior: .doNotCache)

    /// A cacher that stores what `closure` returns.
    ///
    /// - Parameter closure: Gets the request and the response the cache would store; returns what to store.
    /// - Returns: The cacher.
    public static func modify(
        using closure: @escaping @Sendable (BaseRequest, CachedResponse) -> CachedResponse?
    ) -> ResponseCacher {
        ResponseCacher(behavior: .modify(closure))
    }

    /// What this cacher does.
    public let behavior: Behavior

    /// Creates a cacher.
    ///
    /// - Parameter behavior: What it does.
    public init(behavior: Behavior) {
        self.behavior = behavior
    }

    public func dataTask(_ request: BaseRequest, willCacheResponse response: CachedResponse) async -> CachedResponse? {
        switch self.behavior {
        case .cache: response
        case .doNotCache: nil
        case .modify(let closure): closure(request, response)
        }
    }
}

extension CachedResponseHandler where Self == ResponseCacher {
    /// Stores every response the cache may store.
    public static var cache: ResponseCacher { ResponseCacher(behavior: .cache) }
    /// Stores nothing.
    public static var doNotCache: ResponseCacher { ResponseCacher(behavior: .doNotCache) }

    /// Stores what `closure` returns.
    ///
    /// - Parameter closure: Gets the request and the response the cache would store; returns what to store.
    /// - Returns: The cacher.
    public static func modify(
        using closure: @escaping @Sendable (BaseRequest, CachedResponse) -> CachedResponse?
    ) -> ResponseCacher {
        ResponseCacher(behavior: .modify(closure))
    }
}
