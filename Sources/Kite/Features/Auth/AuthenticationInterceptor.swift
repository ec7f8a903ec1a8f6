import HTTPTypes
import NIOConcurrencyHelpers

/// A credential that an ``Authenticator`` applies to requests and refreshes when it expires.
///
/// An OAuth 2 credential, with an access token that expires and a refresh token that makes a new one, is
/// the usual example (see ``AuthenticationInterceptor``).
public protocol AuthenticationCredential: Sendable {
    /// Whether the credential must be refreshed before it is used.
    ///
    /// Return `true` when the credential has expired, and a little before: a token valid for an hour is
    /// best refreshed when five minutes or less are left, so it does not expire on its way through the
    /// server's services.
    var requiresRefresh: Bool { get }
}

/// Applies a credential to requests, refreshes it, and recognises the responses that refuse it.
///
/// Alamofire 5's `Authenticator`, with an async ``refresh(_:for:)``. An ``AuthenticationInterceptor`` calls
/// it; see there for an OAuth 2 example.
public protocol Authenticator: AnyObject, Sendable {
    /// The credential type.
    associatedtype Credential: AuthenticationCredential

    /// Adds `credential` to `request`, for OAuth 2 as an `Authorization: Bearer` header field.
    ///
    /// - Parameters:
    ///   - credential: The credential.
    ///   - request: The request head to authenticate.
    func apply(_ credential: Credential, to request: inout HTTPRequest)

    /// Makes a new credential from `credential`, for OAuth 2 by sending its refresh token to the
    /// authorization server.
    ///
    /// Called when a credential ``AuthenticationCredential/requiresRefresh`` before a request is sent,
    /// and when a request authenticated with the current credential was refused. Never called twice at
    /// once by one interceptor: requests that need the new credential wait for this call.
    ///
    /// Do not send the refresh request through an interceptor that waits for this refresh (a session
    /// whose interceptor is this one): it would wait for itself.
    ///
    /// - Parameters:
    ///   - credential: The credential to refresh.
    ///   - session: The session of the request that needs the refresh.
    /// - Returns: The new credential.
    /// - Throws: Why no credential could be made, for example a refresh token the server refused. Every
    ///   request waiting for the refresh fails with this error.
    func refresh(_ credential: Credential, for session: Session) async throws -> Credential

    /// Whether `request` failed because its credential was refused, commonly a `401` status.
    ///
    /// Only these failures refresh the credential. If a server behind the authorization server also
    /// answers `401` (to mean "not allowed" rather than "token invalid"), tell the two apart here, or every
    /// such answer refreshes the credential.
    ///
    /// - Parameters:
    ///   - request: The request head as sent.
    ///   - response: The response head.
    ///   - error: The request's error.
    /// - Returns: `true` when the credential was refused.
    func didRequest(
        _ request: HTTPRequest,
        with response: HTTPResponse,
        failDueToAuthenticationError error: KiteError
    ) -> Bool

    /// Whether `request` was sent with `credential`, for OAuth 2 whether its bearer token is the access token.
    ///
    /// A request refused with a credential that has since been replaced is retried without a refresh.
    ///
    /// - Parameters:
    ///   - request: The request head as sent.
    ///   - credential: The interceptor's current credential.
    /// - Returns: `true` when `request` carries `credential`.
    func isRequest(_ request: HTTPRequest, authenticatedWith credential: Credential) -> Bool
}

/// Why an ``AuthenticationInterceptor`` could not authenticate a request.
///
/// It reaches you inside a ``KiteError``: as its ``KiteError/underlyingError`` with code
/// `requestAdaptationFailed` (before sending) or `requestRetryFailed` (after a refused attempt).
public enum AuthenticationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The interceptor has no credential to authenticate the request with.
    case missingCredential
    /// The credential was refreshed ``AuthenticationInterceptor/RefreshWindow/maximumAttempts`` times within the
    /// refresh window already.
    case excessiveRefresh

    public var description: String {
        switch self {
        case .missingCredential:
            "no credential to authenticate the request with; set the interceptor's credential"
        case .excessiveRefresh:
            "the credential was refreshed too many times within the refresh window"
        }
    }
}

/// Authenticates requests with a credential and refreshes it once for all requests that need it.
///
/// Alamofire 5's `AuthenticationInterceptor`, with an async refresh. Before each attempt it applies the
/// credential, first refreshing it when it ``AuthenticationCredential/requiresRefresh``. When the
/// ``Authenticator`` says an attempt was refused (commonly a `401`), it refreshes the credential and retries
/// the request; a request refused with a credential that has since been replaced is retried at once.
///
/// However many requests need a refresh at the same time, ``Authenticator/refresh(_:for:)`` runs once and
/// they all wait for it: they all go on with the new credential, or all fail with the refresh's error.
/// More than ``RefreshWindow/maximumAttempts`` refreshes within ``RefreshWindow/interval`` fail with
/// ``AuthenticationError/excessiveRefresh``, which ends a loop of refused credentials.
///
/// ```swift
/// struct OAuthCredential: AuthenticationCredential {
///     let accessToken: String
///     let refreshToken: String
///     let expiration: Date
///
///     // Refresh five minutes before the access token expires.
///     var requiresRefresh: Bool { Date(timeIntervalSinceNow: 5 * 60) > expiration }
/// }
///
/// final class OAuthAuthenticator: Authenticator {
///     struct Tokens: Decodable, Sendable {
///         let access_token: String
///         let refresh_token: String
///         let expires_in: Double
///     }
///
///     func apply(_ credential: OAuthCredential, to request: inout HTTPRequest) {
///         request.headerFields[.authorization] = "Bearer \(credential.accessToken)"
///     }
///
///     func refresh(_ credential: OAuthCredential, for session: Session) async throws -> OAuthCredential {
///         let tokens = try await session.request(
///             "https://auth.example.com/token",
///             method: .post,
///             parameters: ["grant_type": "refresh_token", "refresh_token": credential.refreshToken]
///         )
///         .validate()
///         .serializingDecodable(Tokens.self)
///         .value
///         return OAuthCredential(
///             accessToken: tokens.access_token,
///             refreshToken: tokens.refresh_token,
///             expiration: Date(timeIntervalSinceNow: tokens.expires_in)
///         )
///     }
///
///     func didRequest(
///         _ request: HTTPRequest,
///         with response: HTTPResponse,
///         failDueToAuthenticationError error: KiteError
///     ) -> Bool {
///         response.status == .unauthorized
///     }
///
///     func isRequest(_ request: HTTPRequest, authenticatedWith credential: OAuthCredential) -> Bool {
///         request.headerFields[.authorization] == "Bearer \(credential.accessToken)"
///     }
/// }
///
/// let interceptor = AuthenticationInterceptor(authenticator: OAuthAuthenticator(), credential: storedCredential)
/// let profile = try await session.request("https://api.example.com/me", interceptor: interceptor)
///     .validate()
///     .serializingDecodable(Profile.self)
///     .value
/// ```
///
/// The interceptor is attached to the API's requests only, so the refresh request to the authorization
/// server is not itself held back waiting for the refresh.
public final class AuthenticationInterceptor<AuthenticatorType: Authenticator>: RequestInterceptor, Sendable {
    /// The credential type.
    public typealias Credential = AuthenticatorType.Credential

    /// How many refreshes are allowed within a time window before refreshing fails with
    /// ``AuthenticationError/excessiveRefresh``.
    public struct RefreshWindow: Sendable {
        /// How far back refreshes are counted.
        public let interval: Duration

        /// How many refreshes may have started within ``interval`` before another one is refused.
        public let maximumAttempts: Int

        /// Creates a window.
        ///
        /// - Parameters:
        ///   - interval: How far back refreshes are counted; 30 seconds by default.
        ///   - maximumAttempts: How many refreshes are allowed within `interval`; 5 by default.
        public init(interval: Duration = .seconds(30), maximumAttempts: Int = 5) {
            self.interval = interval
            self.maximumAttempts = maximumAttempts
        }
    }

    /// The credential that requests are authenticated with; `nil` makes them fail with
    /// ``AuthenticationError/missingCredential``.
    ///
    /// Setting it while a refresh runs drops that refresh's result: the requests waiting for it go on with
    /// the credential set here.
    public var credential: Credential? {
        get { self.state.withLockedValue { $0.credential } }
        set {
            let waiters = self.state.withLockedValue { $0.replaceCredential(with: newValue) }
            for waiter in waiters { waiter.resume(returning: nil) }
        }
    }

    /// The authenticator.
    let authenticator: AuthenticatorType

    /// The current time, for the refresh window.
    let now: @Sendable () -> ContinuousClock.Instant

    /// How many calls wait for the running refresh (for tests).
    var waiterCount: Int {
        self.state.withLockedValue { $0.waiterCount }
    }

    private let state: NIOLockedValueBox<StateMachine>

    /// Creates an interceptor.
    ///
    /// - Parameters:
    ///   - authenticator: Applies and refreshes the credential.
    ///   - credential: The credential to start with, if there is one yet.
    ///   - refreshWindow: How many refreshes are allowed within which time.
    public convenience init(
        authenticator: AuthenticatorType,
        credential: Credential? = nil,
        refreshWindow: RefreshWindow = RefreshWindow()
    ) {
        self.init(authenticator: authenticator, credential: credential, refreshWindow: refreshWindow) {
            ContinuousClock.now
        }
    }

    /// Creates an interceptor that reads the time from `now`.
    init(
        authenticator: AuthenticatorType,
        credential: Credential?,
        refreshWindow: RefreshWindow,
        now: @escaping @Sendable () -> ContinuousClock.Instant
    ) {
        self.authenticator = authenticator
        self.now = now
        self.state = NIOLockedValueBox(StateMachine(credential: credential, refreshWindow: refreshWindow))
    }

    /// Applies the credential to `request`, refreshing it first when it requires a refresh.
    ///
    /// - Throws: ``AuthenticationError/missingCredential`` without a credential,
    ///   ``AuthenticationError/excessiveRefresh`` when the refresh window is full, or the refresh's error.
    public func adapt(_ request: HTTPRequest, for session: Session) async throws -> HTTPRequest {
        while true {
            let (current, version) = self.state.withLockedValue { ($0.credential, $0.version) }
            guard let current else { throw AuthenticationError.missingCredential }
            var credential = current
            if current.requiresRefresh {
                // `nil`: the credential was replaced another way meanwhile; look at the new one.
                guard let refreshed = try await self.refreshedCredential(replacing: version, for: session) else {
                    continue
                }
                credential = refreshed
            }
            var request = request
            self.authenticator.apply(credential, to: &request)
            return request
        }
    }

    /// Retries a request refused for its credential: at once when the credential has changed since it was
    /// sent, otherwise after refreshing the credential.
    public func retry(_ request: BaseRequest, for session: Session, dueTo error: KiteError) async -> RetryResult {
        guard let response = error.response, let sent = request.request,
            self.authenticator.didRequest(sent, with: response, failDueToAuthenticationError: error)
        else { return .doNotRetry }
        let (current, version) = self.state.withLockedValue { ($0.credential, $0.version) }
        guard let current else { return .doNotRetryWithError(AuthenticationError.missingCredential) }
        guard self.authenticator.isRequest(sent, authenticatedWith: current) else { return .retry }
        do {
            if try await self.refreshedCredential(replacing: version, for: session) == nil, self.credential == nil {
                return .doNotRetryWithError(AuthenticationError.missingCredential)
            }
            return .retry
        } catch {
            return .doNotRetryWithError(error)
        }
    }

    /// Waits for the refresh of the credential at `version`, starting it unless it is running.
    ///
    /// - Returns: The refreshed credential, or `nil` when the credential at `version` was replaced another
    ///   way (set, or refreshed before this call queued).
    private func refreshedCredential(replacing version: Int, for session: Session) async throws -> Credential? {
        let id = self.state.withLockedValue { $0.makeWaiterID() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: StateMachine.Waiter) in
                let now = self.now()
                let action = self.state.withLockedValue {
                    $0.wait(continuation, id: id, forRefreshOf: version, now: now)
                }
                switch action {
                case .wait:
                    break
                case .startRefresh(let credential):
                    self.startRefresh(of: credential, version: version, for: session)
                case .resume(let result):
                    continuation.resume(with: result)
                    return
                }
                // A cancellation handler that ran before the waiter was queued found nothing to cancel.
                if Task.isCancelled {
                    self.cancelWaiter(id)
                }
            }
        } onCancel: {
            self.cancelWaiter(id)
        }
    }

    private func cancelWaiter(_ id: Int) {
        let waiter = self.state.withLockedValue { $0.removeWaiter(id) }
        waiter?.resume(throwing: CancellationError())
    }

    /// Runs the refresh in its own task, so cancelling the request that started it does not cancel it.
    private func startRefresh(of credential: Credential, version: Int, for session: Session) {
        Task {
            let result: Result<Credential, any Error>
            do {
                result = .success(try await self.authenticator.refresh(credential, for: session))
            } catch {
                result = .failure(error)
            }
            let waiters = self.state.withLockedValue { $0.refreshFinished(startedAt: version, with: result) }
            let outcome = result.map { Optional($0) }
            for waiter in waiters { waiter.resume(with: outcome) }
        }
    }
}

extension AuthenticationInterceptor {
    /// The credential, the refresh in progress and its waiters, and the refresh history.
    ///
    /// Methods return what to do after the lock is released; continuations are never resumed under it.
    private struct StateMachine {
        /// A request waiting for a refresh: resumed with the new credential, `nil` when the credential was
        /// replaced another way, or the refresh's error.
        typealias Waiter = CheckedContinuation<Credential?, any Error>

        enum Refresh {
            case idle
            case refreshing(waiters: [Int: Waiter])
        }

        enum WaitAction {
            /// Queued behind the running refresh.
            case wait
            /// Queued; the caller starts the refresh of the credential.
            case startRefresh(Credential)
            /// Not queued: resume the waiter at once.
            case resume(Result<Credential?, any Error>)
        }

        private(set) var credential: Credential?
        /// Grows whenever the credential is replaced, by a refresh or by the user.
        private(set) var version = 0
        private var refresh = Refresh.idle
        private var refreshStarts: [ContinuousClock.Instant] = []
        private var nextWaiterID = 0
        private let refreshWindow: RefreshWindow

        init(credential: Credential?, refreshWindow: RefreshWindow) {
            self.credential = credential
            self.refreshWindow = refreshWindow
        }

        var waiterCount: Int {
            guard case .refreshing(let waiters) = self.refresh else { return 0 }
            return waiters.count
        }

        mutating func makeWaiterID() -> Int {
            defer { self.nextWaiterID += 1 }
            return self.nextWaiterID
        }

        mutating func replaceCredential(with credential: Credential?) -> [Waiter] {
            self.credential = credential
            self.version += 1
            guard case .refreshing(let waiters) = self.refresh else { return [] }
            self.refresh = .idle
            return Array(waiters.values)
        }

        /// Queues `waiter` for the refresh of the credential at `version`, starting one unless it runs.
        mutating func wait(
            _ waiter: Waiter,
            id: Int,
            forRefreshOf version: Int,
            now: ContinuousClock.Instant
        ) -> WaitAction {
            guard version == self.version else { return .resume(.success(nil)) }
            switch self.refresh {
            case .refreshing(var waiters):
                self.refresh = .idle  // so `waiters` is not copied on write
                waiters[id] = waiter
                self.refresh = .refreshing(waiters: waiters)
                return .wait
            case .idle:
                guard let credential = self.credential else {
                    return .resume(.failure(AuthenticationError.missingCredential))
                }
                let interval = self.refreshWindow.interval
                self.refreshStarts.removeAll { $0.duration(to: now) > interval }
                guard self.refreshStarts.count < self.refreshWindow.maximumAttempts else {
                    return .resume(.failure(AuthenticationError.excessiveRefresh))
                }
                self.refreshStarts.append(now)
                self.refresh = .refreshing(waiters: [id: waiter])
                return .startRefresh(credential)
            }
        }

        /// Removes a waiter that was cancelled, unless it was resumed already.
        mutating func removeWaiter(_ id: Int) -> Waiter? {
            guard case .refreshing(var waiters) = self.refresh else { return nil }
            self.refresh = .idle
            let waiter = waiters.removeValue(forKey: id)
            self.refresh = .refreshing(waiters: waiters)
            return waiter
        }

        /// Ends the refresh started at `version`; returns the waiters to resume with its result. A refresh whose
        /// credential was replaced meanwhile changes nothing: its waiters were resumed then.
        mutating func refreshFinished(startedAt version: Int, with result: Result<Credential, any Error>) -> [Waiter] {
            guard version == self.version, case .refreshing(let waiters) = self.refresh else { return [] }
            self.refresh = .idle
            if case .success(let credential) = result {
                self.credential = credential
                self.version += 1
            }
            return Array(waiters.values)
        }
    }
}
