import Foundation
import HTTPTypes
import NIOConcurrencyHelpers
import NIOCore
import NIOFoundationCompat
import Tracing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What every Kite request shares: identity, lifecycle, cancellation and its cURL form.
///
/// You get a ``DataRequest`` from ``Session``; this base class is where `resume()`, `suspend()`,
/// `cancel()` and ``state`` live.
///
/// ```swift
/// let request = session.request("http://127.0.0.1:8080/drip?duration=5&numbytes=5")
/// request.responseData { _ in }
/// request.suspend()   // no bytes are read until resumed
/// request.resume()
/// request.cancel()    // handlers get a KiteError with code .cancelled
/// ```
// @unchecked: all mutable state lives in `machine`, a NIOLockedValueBox; the rest is immutable.
public class BaseRequest: @unchecked Sendable {
    typealias Waiter = CheckedContinuation<PipelineCheckpoint, Never>
    typealias Handler = @Sendable (RequestOutcome) -> Void
    typealias Validator = @Sendable (RequestOutcome) -> KiteError?

    /// A handler as stored. Kept in a struct because a bare closure stored in a generic container
    /// (the state machine, ``SmallList``) is re-abstracted through a thunk with a heap context: one
    /// allocation per handler.
    struct StoredHandler {
        let run: Handler

        func callAsFunction(_ outcome: RequestOutcome) { self.run(outcome) }
    }

    /// A validator as stored; a struct for the same reason as ``StoredHandler``.
    struct StoredValidator {
        let check: Validator

        func callAsFunction(_ outcome: RequestOutcome) -> KiteError? { self.check(outcome) }
    }

    typealias Machine = RequestStateMachine<Waiter, StoredHandler, StoredValidator, RequestOutcome>

    /// A unique identifier, the same every time it is read.
    ///
    /// Made when first read: on Linux `UUID()` opens, reads and closes `/dev/urandom`, three system
    /// calls that a request nobody identifies should not pay for.
    public var id: UUID {
        self.machine.withLockedValue { machine in
            if let id = machine.record.id { return id }
            let id = UUID()
            machine.record.id = id
            return id
        }
    }

    /// The session that made the request.
    public let session: Session

    /// What the pipeline reads from the session: its defaults, limits, extensions and transport.
    let context: PipelineContext

    /// How many times the request has been sent again by a ``RequestRetrier`` (0 before the first retry).
    /// Redirects and answered authentication challenges are not retries.
    public var retryCount: Int {
        self.machine.withLockedValue { $0.retryCount }
    }

    /// The draft as built from URL, parameters and modifier, or why it could not be built.
    let draftResult: Result<RequestDraft, KiteError>

    /// Method and URL without credentials, for errors. Made when asked for: a request that succeeds never
    /// names itself.
    var summary: RequestSummary {
        switch self.draftResult {
        case .success(let draft): draft.summary
        case .failure(let error): error.request ?? RequestSummary(methodName: "?", url: "?")
        }
    }

    /// The request's one lock: its state machine, which holds all of its mutable state.
    let machine = NIOLockedValueBox(Machine())

    /// Upload and download progress observers.
    let uploadReporter: ProgressReporter
    let downloadReporter: ProgressReporter

    /// Where the response body goes: what differs between the kinds of request.
    let sink: any ResponseSink

    /// Where the request body comes from.
    let bodySource: RequestBodySource

    /// The session's cancellation generation when the request was made (``RequestRegistry``).
    let generation: UInt64

    init(
        session: Session,
        draft: Result<RequestDraft, KiteError>,
        sink: any ResponseSink,
        body: RequestBodySource = .draft
    ) {
        self.session = session
        self.context = session.context
        self.sink = sink
        self.bodySource = body
        self.draftResult = draft
        self.generation = session.context.requests.currentGeneration
        self.uploadReporter = ProgressReporter(in: self.machine, isUpload: true)
        self.downloadReporter = ProgressReporter(in: self.machine, isUpload: false)
        self.context.eventMonitor?.requestDidCreate(self)
    }

    /// Where the request is in its life.
    public var state: RequestState {
        self.machine.withLockedValue { $0.requestState }
    }

    /// The draft the request was built from: URL, method, headers, body. `nil` when it could not be built.
    public var draft: RequestDraft? {
        try? self.draftResult.get()
    }

    /// The request head as sent, with the session's default headers; `nil` until sent.
    public var request: HTTPRequest? {
        self.machine.withLockedValue { $0.record.sentRequest }
    }

    /// The response head: the latest attempt's while the request runs (a retrier sees it), the final one
    /// once it is over.
    public var response: HTTPResponse? {
        self.machine.withLockedValue { $0.outcome?.response ?? $0.record.lastResponse }
    }

    /// Why the request failed (including validation), once it is over.
    public var error: KiteError? {
        self.machine.withLockedValue { $0.outcome?.error }
    }

    /// The timeline, once the request is over.
    public var metrics: ResponseMetrics? {
        self.machine.withLockedValue { $0.outcome?.metrics }
    }

    /// Sets the request's own interceptor, which runs after the session's.
    func intercepted(by interceptor: (any RequestInterceptor)?) -> Self {
        if let interceptor {
            self.machine.withLockedValue { $0.record.interceptor = interceptor }
        }
        return self
    }

    /// Sets the request's own redirect handler, which replaces the session's.
    ///
    /// ```swift
    /// let response = await session.request("http://127.0.0.1:8080/redirect/1")
    ///     .redirect(using: .doNotFollow)
    ///     .serializingData()
    ///     .response
    /// print(response.response?.status.code as Any)  // 302
    /// ```
    ///
    /// - Parameter handler: The redirect handler, such as ``Redirector/doNotFollow``.
    /// - Returns: The request.
    @discardableResult
    public func redirect(using handler: any RedirectHandler) -> Self {
        self.machine.withLockedValue { $0.record.redirectHandler = handler }
        return self
    }

    /// Sets how this request uses the session's ``ResponseCache``, as `URLRequest.cachePolicy` does in URLSession.
    ///
    /// | Policy | Meaning |
    /// |---|---|
    /// | `useProtocolCachePolicy` | RFC 9111: a fresh stored response answers, a stale one is revalidated |
    /// | `reloadIgnoringLocalCacheData` | goes to the server; the response is stored |
    /// | `reloadIgnoringLocalAndRemoteCacheData` | also asks caches on the way not to answer (`Cache-Control: no-cache`) |
    /// | `returnCacheDataElseLoad` | a stored response answers whatever its age; else the server |
    /// | `returnCacheDataDontLoad` | a stored response answers whatever its age; else `cacheMiss` |
    /// | `reloadRevalidatingCacheData` | a stored response answers only after the server confirmed it (`304`) |
    ///
    /// ```swift
    /// let response = await session.request("http://127.0.0.1:8080/cache/60")
    ///     .cachePolicy(.returnCacheDataElseLoad)
    ///     .serializingData()
    ///     .response
    /// print(response.metrics?.cacheStatus as Any)
    /// ```
    ///
    /// - Parameter policy: The policy.
    /// - Returns: The request.
    @discardableResult
    public func cachePolicy(_ policy: URLRequest.CachePolicy) -> Self {
        self.machine.withLockedValue { $0.record.cachePolicy = policy }
        return self
    }

    /// Sets the request's own ``CachedResponseHandler``, which replaces the session's: Alamofire's
    /// `cacheResponse(using:)`.
    ///
    /// ```swift
    /// session.request("http://127.0.0.1:8080/cache/60").cacheResponse(using: ResponseCacher.doNotCache)
    /// ```
    ///
    /// - Parameter handler: Decides what the cache stores, such as ``ResponseCacher/doNotCache``.
    /// - Returns: The request.
    @discardableResult
    public func cacheResponse(using handler: any CachedResponseHandler) -> Self {
        self.machine.withLockedValue { $0.record.cachedResponseHandler = handler }
        return self
    }

    /// Answers the server's `401` challenge (`WWW-Authenticate: Basic` or `Digest`) with these credentials.
    ///
    /// Nothing is sent before the server asks, and the credentials are only sent to the origin (scheme, host
    /// and port) of the request's own URL, never to one it was redirected to. A second `401` after the
    /// answer ends the request with `authenticationFailed` (a Digest `stale=true` is answered once more).
    ///
    /// ```swift
    /// let data = try await session.request("http://127.0.0.1:8080/digest-auth/auth/user/passwd/SHA-256")
    ///     .authenticate(username: "user", password: "passwd")
    ///     .validate()
    ///     .serializingData()
    ///     .value
    /// ```
    ///
    /// - Parameters:
    ///   - username: The user name.
    ///   - password: The password.
    /// - Returns: The request.
    @discardableResult
    public func authenticate(username: String, password: String) -> Self {
        self.authenticate(with: Credential(user: username, password: password))
    }

    /// Answers the server's `401` challenge with `credential`; see ``authenticate(username:password:)``.
    ///
    /// - Parameter credential: The user name and password.
    /// - Returns: The request.
    @discardableResult
    public func authenticate(with credential: Credential) -> Self {
        self.machine.withLockedValue { $0.record.credential = credential }
        return self
    }

    /// Starts the request, or lets a suspended one continue. Does nothing once it is over.
    ///
    /// - Returns: The request.
    @discardableResult
    public func resume() -> Self {
        let action = self.machine.withLockedValue { $0.resume() }
        switch action {
        case .startPipeline:
            self.context.eventMonitor?.requestDidResume(self)
            self.startPipeline()
        case .resumeWaiters(let waiters):
            self.context.eventMonitor?.requestDidResume(self)
            for waiter in waiters { waiter.resume(returning: .proceed) }
        case .none:
            break
        }
        return self
    }

    /// Pauses the request: no body bytes are read or written until ``resume()``.
    ///
    /// Suspending before the first resume keeps the request from starting when a handler is attached.
    /// A request suspended for longer than the idle-read timeout fails with that timeout.
    ///
    /// - Returns: The request.
    @discardableResult
    public func suspend() -> Self {
        if self.machine.withLockedValue({ $0.suspend() }) {
            self.context.eventMonitor?.requestDidSuspend(self)
        }
        return self
    }

    /// Cancels the request. Its handlers get a ``KiteError`` with code `cancelled`. Does nothing once it is over.
    ///
    /// - Returns: The request.
    @discardableResult
    public func cancel() -> Self {
        self.cancel(with: KiteError(code: .cancelled, message: "the request was cancelled", request: self.summary))
        return self
    }

    /// Runs a serializer: a ``KiteError`` it throws names this request; any other error becomes
    /// `responseSerializationFailed`.
    func serialize<Value>(_ outcome: RequestOutcome, _ body: () throws -> Value) -> Result<Value, KiteError> {
        do {
            return .success(try body())
        } catch let error as KiteError {
            return .failure(error.naming(self.summary).carrying(outcome.response))
        } catch {
            return .failure(
                KiteError(
                    code: .responseSerializationFailed,
                    message: "the response could not be serialized: \(error)",
                    request: self.summary,
                    response: outcome.response,
                    underlyingError: error
                )
            )
        }
    }
}

/// Requests are equal when they are the same request, as Alamofire's `Request` is `Hashable` by its identity.
extension BaseRequest: Hashable {
    public static func == (lhs: BaseRequest, rhs: BaseRequest) -> Bool {
        lhs === rhs
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(self))
    }
}

extension BaseRequest: CustomStringConvertible {
    /// The method and URL, credentials removed (the head as last sent, after adapters and redirects; the
    /// draft's before it is sent), and the status code once a response arrived, as Alamofire's `Request`
    /// prints itself:
    ///
    /// ```swift
    /// print(request)  // GET http://127.0.0.1:8080/get (200)
    /// ```
    public var description: String {
        let summary = self.request.map(RequestSummary.init) ?? self.summary
        guard let response = self.response else { return "\(summary)" }
        return "\(summary) (\(response.status.code))"
    }
}
