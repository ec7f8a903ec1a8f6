import Foundation
import HTTPTypes
import NIOConcurrencyHelpers
import NIOCore
import NIOFoundationCompat
import Tracing

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

    /// Method and URL without credentials, for errors.
    let summary: RequestSummary

    /// The request's one lock: its state machine, which holds all of its mutable state.
    let machine = NIOLockedValueBox(Machine())

    /// Upload and download progress observers.
    let uploadReporter: ProgressReporter
    let downloadReporter: ProgressReporter

    /// Where the response body goes: what differs between the kinds of request.
    let sink: any ResponseSink

    /// Where the request body comes from.
    let bodySource: RequestBodySource

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
        self.uploadReporter = ProgressReporter(in: self.machine, isUpload: true)
        self.downloadReporter = ProgressReporter(in: self.machine, isUpload: false)
        switch draft {
        case .success(let draft):
            self.summary = draft.summary
        case .failure(let error):
            self.summary = error.request ?? RequestSummary(methodName: "?", url: "?")
        }
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

    func cancel(with error: KiteError) {
        let action = self.machine.withLockedValue { machine in
            machine.cancel(with: error) { RequestOutcome(request: nil, error: error) }
        }
        if case .none = action {
        } else {
            self.context.eventMonitor?.requestDidCancel(self)
        }
        switch action {
        case .cancelPipeline(let waiters, let task):
            for waiter in waiters { waiter.resume(returning: .stop(error)) }
            task?.cancel()
        case .deliver(let handlers, let outcome):
            self.context.telemetry?.requestFinished(self, outcome: outcome, retryCount: 0, started: false)
            self.context.eventMonitor?.requestDidFinish(self)
            for handler in handlers { handler(outcome) }
        case .none:
            break
        }
    }

    /// Stops the running pipeline with `error` without cancelling the request (a timeout).
    func abort(with error: KiteError) {
        guard let (waiters, task) = self.machine.withLockedValue({ $0.abort(with: error) }) else { return }
        for waiter in waiters { waiter.resume(returning: .stop(error)) }
        task?.cancel()
    }

    /// Adds a handler that runs once with the outcome; starts the request if so configured.
    func appendHandler(_ handler: @escaping Handler) {
        let startImmediately = self.context.startRequestsImmediately
        let action = self.machine.withLockedValue {
            $0.addHandler(StoredHandler(run: handler), startImmediately: startImmediately)
        }
        switch action {
        case .queued:
            break
        case .queuedAndStartPipeline:
            self.context.eventMonitor?.requestDidResume(self)
            self.startPipeline()
        case .runNow(let handler, let outcome, let lateValidators):
            self.context.serializationQueue.async {
                handler(lateValidators.isEmpty ? outcome : self.checked(outcome, with: lateValidators))
            }
        }
    }

    /// `outcome` checked with `validators`: the first failure becomes its error (a failed outcome or one
    /// without a response is not checked).
    func checked(_ outcome: RequestOutcome, with validators: SmallList<StoredValidator>) -> RequestOutcome {
        guard outcome.error == nil, outcome.response != nil else { return outcome }
        var checked = outcome
        for validator in validators {
            if let error = validator(outcome) {
                checked.error = error.naming(self.summary).carrying(outcome.response).carryingBody(outcome.data)
                break
            }
        }
        return checked
    }

    /// Adds a validator. One added after the request is over does not change the outcome its handlers
    /// already got (nor ``error``): it checks the outcome for the handlers attached after it.
    func appendValidator(_ validator: @escaping Validator) {
        self.machine.withLockedValue { $0.addValidator(StoredValidator(check: validator)) }
    }

    private func startPipeline() {
        // Not `Task.immediate`: it saves the first hop, but (Swift 6.3) a task it starts takes its
        // status-record lock at every executor switch and enqueue, which costs as much again; the
        // throughput of the two is the same within the benchmarks' noise (BENCHMARKS.md).
        let task = Task { await self.runPipeline() }
        let cancelNow = self.machine.withLockedValue { $0.pipelineStarted(task) }
        if cancelNow { task.cancel() }
    }

    /// Waits while the request is suspended; throws once it is stopping (cancelled or timed out) or over.
    func checkpoint() async throws(KiteError) {
        switch await self.pass() {
        case .proceed, .park: return
        case .stop(let reason): throw reason
        case .over: throw self.cancellationError
        }
    }

    /// Waits while the request is suspended; returns ``PipelineCheckpoint/proceed`` when the pipeline may go
    /// on, else why not. The state machine is the one source of "stop".
    func pass() async -> PipelineCheckpoint {
        var answer = self.machine.withLockedValue { $0.checkpoint }
        while answer == .park {
            answer = await withCheckedContinuation { (continuation: Waiter) in
                let action = self.machine.withLockedValue { $0.park(continuation) }
                if case .answer(let waiter, let answer) = action {
                    waiter.resume(returning: answer)
                }
            }
        }
        return answer
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

    /// Why the pipeline is being stopped, once it is.
    var abortError: KiteError? {
        self.machine.withLockedValue { $0.stopReason }
    }

    var cancellationError: KiteError {
        KiteError(code: .cancelled, message: "the request was cancelled", request: self.summary)
    }
}

/// Counts a response body as it arrives, against the total announced by the head.
struct BodyCounter {
    /// Bytes of this body received so far.
    var received: Int64 = 0
    /// Bytes already on disk before this body (a resumed download).
    var startOffset: Int64 = 0
    /// The whole transfer's size, when the head announces it for the bytes Kite will see.
    var total: Int64?
    /// Download rate limits to honour.
    var limiters: [RateLimiter] = []

    /// Whether `response` to `method` has no body whatever its header fields say (HEAD, 204, 304).
    static func hasNoBody(_ response: HTTPResponse, method: HTTPRequest.Method) -> Bool {
        method == .head || response.status.code == 204 || response.status.code == 304
    }

    /// The body size a response head announces, or `nil` when it does not say or the body is
    /// content-encoded (the engine decodes it, so `Content-Length` is not the number of bytes seen).
    static func expectedLength(of response: HTTPResponse, method: HTTPRequest.Method) -> Int64? {
        if Self.hasNoBody(response, method: method) { return 0 }
        // One pass over the fields: the subscript would scan them once per name and join the values.
        var length: String?
        var lengthFields = 0
        for field in response.headerFields {
            if field.name == .contentLength {
                length = field.value
                lengthFields += 1
            } else if field.name == .contentEncoding, field.value.lowercased() != "identity" {
                return nil
            }
        }
        // Several Content-Length fields (even equal ones) are not trusted as a total.
        guard let length, lengthFields == 1 else { return nil }
        return Int64(length) ?? Int64(length.trimmingCharacters(in: .whitespaces))
    }
}
