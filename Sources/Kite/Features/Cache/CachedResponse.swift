import Foundation
import HTTPTypes

/// A response as the cache stores it: its head, when it was fetched, and the request fields its `Vary` names.
///
/// The body is kept by the cache's storage beside it. A ``CachedResponseHandler`` sees one before the response
/// is stored and may change its head (a longer `max-age`, say) or refuse it.
public struct CachedResponse: Sendable, Hashable {
    /// The storage's name for the entry: unique among all entries.
    public let id: UUID
    /// The cache key: the request's absolute URL without its fragment, scheme and host lowercased, default port
    /// dropped (only `GET` responses are stored).
    public let key: String
    /// The response head as stored (hop-by-hop fields removed).
    public var response: HTTPResponse
    /// The method of the request that got it (`GET`).
    public var requestMethod: HTTPRequest.Method
    /// The request's values of the fields the response's `Vary` names (lowercased names; `nil` where the
    /// request lacked the field): a later request is served this response only when its values match.
    public var varyingRequestFields: [String: String?]
    /// When the request that got the response was sent.
    public var requestTime: Date
    /// When the response head arrived (or a `304` last refreshed it).
    public var responseTime: Date
    /// The body's length in bytes, once stored.
    public var bodyLength: Int64?

    /// Creates a cached response.
    ///
    /// - Parameters:
    ///   - id: The entry's name.
    ///   - key: The cache key.
    ///   - response: The response head.
    ///   - requestMethod: The request's method.
    ///   - varyingRequestFields: The request's values of the fields `Vary` names.
    ///   - requestTime: When the request was sent.
    ///   - responseTime: When the response head arrived.
    ///   - bodyLength: The body's length, when known.
    public init(
        id: UUID = UUID(),
        key: String,
        response: HTTPResponse,
        requestMethod: HTTPRequest.Method = .get,
        varyingRequestFields: [String: String?] = [:],
        requestTime: Date,
        responseTime: Date,
        bodyLength: Int64? = nil
    ) {
        self.id = id
        self.key = key
        self.response = response
        self.requestMethod = requestMethod
        self.varyingRequestFields = varyingRequestFields
        self.requestTime = requestTime
        self.responseTime = responseTime
        self.bodyLength = bodyLength
    }

    /// What the freshness rules read.
    var info: StoredResponseInfo {
        StoredResponseInfo(
            response: self.response,
            requestTime: self.requestTime,
            responseTime: self.responseTime,
            requestMethod: self.requestMethod,
            varyingRequestFields: self.varyingRequestFields
        )
    }
}

/// Where a response came from: the network, or the cache and why.
///
/// Every response's ``ResponseMetrics/cacheStatus`` says it, which URLCache never did: a `304` revalidation
/// reaches the caller as the stored `200`, but with ``revalidated``.
public enum ResponseCacheStatus: Sendable, Hashable, CustomStringConvertible {
    /// Not from the cache: the session has none, the request bypassed it, or nothing stored could be used.
    case network
    /// From the cache without contacting the server, fresh; `age` is its age in seconds (RFC 9111 §4.2.3).
    case hit(age: Int)
    /// From the cache after the server answered `304 Not Modified` to a conditional request.
    case revalidated
    /// From the cache although stale, for `reason`; `age` is its age in seconds.
    case stale(reason: StaleReason, age: Int)

    /// Why a stale response was used.
    public enum StaleReason: String, Sendable, Hashable {
        /// The response allows it while it is revalidated in the background (`stale-while-revalidate`, RFC 5861).
        case whileRevalidating
        /// The server failed and the response allows it (`stale-if-error`, RFC 5861).
        case ifError
        /// The request accepts it (`max-stale`).
        case maxStale
        /// The request's policy uses the cache whatever its age (`returnCacheDataElseLoad`, `returnCacheDataDontLoad`).
        case offlinePolicy
    }

    /// Whether the response came from the cache (any case but ``network``).
    public var isFromCache: Bool {
        if case .network = self { return false }
        return true
    }

    public var description: String {
        switch self {
        case .network: "network"
        case .hit(let age): "hit (age \(age) s)"
        case .revalidated: "revalidated (304)"
        case .stale(let reason, let age): "stale (\(reason.rawValue), age \(age) s)"
        }
    }
}
