import Foundation
import HTTPTypes

/// Changes a request before each attempt is sent: adds a token, signs it, rewrites its URL.
///
/// Alamofire 5's `RequestAdapter`, made async. Where Alamofire adapts a `URLRequest`, Kite adapts the
/// request head (`HTTPRequest` from swift-http-types: method, scheme, authority, path, header fields);
/// the body comes from the request's source on every attempt.
///
/// ```swift
/// struct TokenAdapter: RequestAdapter {
///     let token: String
///     func adapt(_ request: HTTPRequest, for session: Session) async throws -> HTTPRequest {
///         var request = request
///         request.headerFields[.authorization] = "Bearer \(token)"
///         return request
///     }
/// }
/// ```
///
/// An adapter that throws ends the request with `requestAdaptationFailed`, whose
/// ``KiteError/underlyingError`` is what it threw (retriers are asked first, as in Alamofire).
public protocol RequestAdapter: Sendable {
    /// Returns the head to send for `request`.
    func adapt(_ request: HTTPRequest, for session: Session) async throws -> HTTPRequest

    /// Returns the head to send, knowing which request and attempt it is for. By default calls
    /// ``adapt(_:for:)``.
    func adapt(_ request: HTTPRequest, using state: RequestAdapterState) async throws -> HTTPRequest
}

extension RequestAdapter {
    public func adapt(_ request: HTTPRequest, using state: RequestAdapterState) async throws -> HTTPRequest {
        try await self.adapt(request, for: state.session)
    }
}

/// What an adapter may want to know about the attempt it adapts.
public struct RequestAdapterState: Sendable {
    /// The request being adapted.
    public let request: BaseRequest

    /// The session that runs it.
    public var session: Session { self.request.session }

    /// The request's identifier.
    public var requestID: UUID { self.request.id }

    /// How many times the request has been retried before this attempt (0 for the first).
    public var retryCount: Int { self.request.retryCount }
}

/// What a ``RequestRetrier`` decides about a failed attempt.
public enum RetryResult: Sendable {
    /// Send the request again now.
    case retry
    /// Send the request again after the delay.
    case retryWithDelay(Duration)
    /// Do not retry: the request ends with its error.
    case doNotRetry
    /// Do not retry: the request ends with `requestRetryFailed` carrying this error and the original one.
    case doNotRetryWithError(any Error)

    /// Whether the request is sent again.
    public var retryRequired: Bool {
        switch self {
        case .retry, .retryWithDelay: true
        case .doNotRetry, .doNotRetryWithError: false
        }
    }

    /// The delay before the next attempt, when retrying after one.
    public var delay: Duration? {
        if case .retryWithDelay(let delay) = self { return delay }
        return nil
    }

    /// The retrier's own error, when it gave one.
    public var error: (any Error)? {
        if case .doNotRetryWithError(let error) = self { return error }
        return nil
    }
}

/// Decides whether a failed attempt is sent again: Alamofire 5's `RequestRetrier`, made async.
///
/// It is asked after any failure: the engine's (connection refused or lost, timeouts), an adapter's,
/// validation's (`validate()` runs before retriers), or an unanswered authentication challenge. It is not
/// asked for cancellation. ``BaseRequest/retryCount`` says how many retries have run; the error's
/// ``KiteError/response`` is the attempt's response head, when there was one.
///
/// ```swift
/// let retrier = Retrier { request, session, error in
///     error.responseStatusCode == 503 && request.retryCount < 3 ? .retryWithDelay(.milliseconds(200)) : .doNotRetry
/// }
/// ```
public protocol RequestRetrier: Sendable {
    /// Decides what happens to `request`, which failed with `error`.
    func retry(_ request: BaseRequest, for session: Session, dueTo error: KiteError) async -> RetryResult
}

/// An adapter and a retrier in one: what sessions and requests take.
public protocol RequestInterceptor: RequestAdapter, RequestRetrier {}

extension RequestInterceptor {
    public func adapt(_ request: HTTPRequest, for session: Session) async throws -> HTTPRequest {
        request
    }

    public func retry(_ request: BaseRequest, for session: Session, dueTo error: KiteError) async -> RetryResult {
        .doNotRetry
    }
}

/// An adapter made of a closure.
///
/// ```swift
/// let adapter = Adapter { request, session in
///     var request = request
///     request.headerFields[.authorization] = "Bearer \(token)"
///     return request
/// }
/// ```
public struct Adapter: RequestInterceptor {
    /// The closure's shape.
    public typealias AdaptHandler = @Sendable (HTTPRequest, Session) async throws -> HTTPRequest

    private let adaptHandler: AdaptHandler

    /// Creates an adapter that runs `adaptHandler`.
    public init(_ adaptHandler: @escaping AdaptHandler) {
        self.adaptHandler = adaptHandler
    }

    public func adapt(_ request: HTTPRequest, for session: Session) async throws -> HTTPRequest {
        try await self.adaptHandler(request, session)
    }
}

/// A retrier made of a closure.
public struct Retrier: RequestInterceptor {
    /// The closure's shape.
    public typealias RetryHandler = @Sendable (BaseRequest, Session, KiteError) async -> RetryResult

    private let retryHandler: RetryHandler

    /// Creates a retrier that runs `retryHandler`.
    public init(_ retryHandler: @escaping RetryHandler) {
        self.retryHandler = retryHandler
    }

    public func retry(_ request: BaseRequest, for session: Session, dueTo error: KiteError) async -> RetryResult {
        await self.retryHandler(request, session, error)
    }
}

/// Several adapters and retriers as one interceptor.
///
/// Adapters run in order, each on the previous one's result; the first that throws ends the chain.
/// Retriers are asked in order until one says something other than ``RetryResult/doNotRetry``.
///
/// ```swift
/// let interceptor = Interceptor(adapters: [TokenAdapter(token: "t")], retriers: [RetryPolicy()])
/// let session = Session(configuration: .default, interceptor: interceptor)
/// ```
public struct Interceptor: RequestInterceptor {
    /// The adapters, in the order they run.
    public let adapters: [any RequestAdapter]
    /// The retriers, in the order they are asked.
    public let retriers: [any RequestRetrier]

    /// Creates an interceptor from closures.
    public init(adaptHandler: @escaping Adapter.AdaptHandler, retryHandler: @escaping Retrier.RetryHandler) {
        self.init(adapters: [Adapter(adaptHandler)], retriers: [Retrier(retryHandler)])
    }

    /// Creates an interceptor from one adapter and one retrier.
    public init(adapter: any RequestAdapter, retrier: any RequestRetrier) {
        self.init(adapters: [adapter], retriers: [retrier])
    }

    /// Creates an interceptor from adapters, retriers and interceptors (which count as both; they
    /// come after the given adapters and retriers).
    public init(
        adapters: [any RequestAdapter] = [],
        retriers: [any RequestRetrier] = [],
        interceptors: [any RequestInterceptor] = []
    ) {
        self.adapters = adapters + interceptors.map { $0 as any RequestAdapter }
        self.retriers = retriers + interceptors.map { $0 as any RequestRetrier }
    }

    public func adapt(_ request: HTTPRequest, for session: Session) async throws -> HTTPRequest {
        var request = request
        for adapter in self.adapters {
            request = try await adapter.adapt(request, for: session)
        }
        return request
    }

    public func adapt(_ request: HTTPRequest, using state: RequestAdapterState) async throws -> HTTPRequest {
        var request = request
        for adapter in self.adapters {
            request = try await adapter.adapt(request, using: state)
        }
        return request
    }

    public func retry(_ request: BaseRequest, for session: Session, dueTo error: KiteError) async -> RetryResult {
        for retrier in self.retriers {
            let result = await retrier.retry(request, for: session, dueTo: error)
            if case .doNotRetry = result { continue }
            return result
        }
        return .doNotRetry
    }
}
