import Foundation
import HTTPTypes
import NIOConcurrencyHelpers
import NIOCore

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
// @unchecked: all mutable state lives in `storage`, a NIOLockedValueBox; the rest is immutable.
public class BaseRequest: @unchecked Sendable {
    typealias Waiter = CheckedContinuation<Void, any Error>
    typealias Handler = @Sendable (RequestOutcome) -> Void
    typealias Validator = @Sendable (RequestOutcome) -> KiteError?

    struct Storage {
        var machine = RequestStateMachine<Waiter, Handler, RequestOutcome>()
        var pipelineTask: Task<Void, Never>?
        /// Why the pipeline is being stopped (cancel or total timeout); the first reason wins.
        var abortError: KiteError?
        var sentRequest: HTTPRequest?
        var validators: [Validator] = []
        var evaluatedValidators = 0
    }

    /// A unique identifier.
    public let id = UUID()

    /// The session that made the request.
    public let session: Session

    /// The draft as built from URL, parameters and modifier, or why it could not be built.
    let draftResult: Result<RequestDraft, KiteError>

    /// Method and URL without credentials, for errors.
    let summary: RequestSummary

    let storage = NIOLockedValueBox(Storage())

    init(session: Session, draft: Result<RequestDraft, KiteError>) {
        self.session = session
        self.draftResult = draft
        switch draft {
        case .success(let draft):
            self.summary = draft.summary
        case .failure(let error):
            self.summary = error.request ?? RequestSummary(methodName: "?", url: "?")
        }
    }

    /// Where the request is in its life.
    public var state: RequestState {
        self.storage.withLockedValue { $0.machine.state }
    }

    /// The draft the request was built from: URL, method, headers, body. `nil` when it could not be built.
    public var draft: RequestDraft? {
        try? self.draftResult.get()
    }

    /// The request head as sent, with the session's default headers; `nil` until sent.
    public var request: HTTPRequest? {
        self.storage.withLockedValue { $0.sentRequest }
    }

    /// The response head, once the request is over.
    public var response: HTTPResponse? {
        self.storage.withLockedValue { $0.machine.outcome?.response }
    }

    /// Why the request failed (including validation), once it is over.
    public var error: KiteError? {
        self.storage.withLockedValue { $0.machine.outcome?.error }
    }

    /// The timeline, once the request is over.
    public var metrics: ResponseMetrics? {
        self.storage.withLockedValue { $0.machine.outcome?.metrics }
    }

    /// Starts the request, or lets a suspended one continue. Does nothing once it is over.
    ///
    /// - Returns: The request.
    @discardableResult
    public func resume() -> Self {
        let action = self.storage.withLockedValue { $0.machine.resume() }
        switch action {
        case .startPipeline:
            self.startPipeline()
        case .resumeWaiters(let waiters):
            for waiter in waiters { waiter.resume() }
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
        _ = self.storage.withLockedValue { $0.machine.suspend() }
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
        let (action, task) = self.storage.withLockedValue { storage in
            let action = storage.machine.cancel(outcomeIfNotStarted: {
                RequestOutcome(request: nil, error: error)
            })
            if case .cancelPipeline = action, storage.abortError == nil {
                storage.abortError = error
            }
            return (action, storage.pipelineTask)
        }
        switch action {
        case .cancelPipeline(let waiters):
            for waiter in waiters { waiter.resume(throwing: error) }
            task?.cancel()
        case .deliver(let handlers, let outcome):
            for handler in handlers { handler(outcome) }
        case .none:
            break
        }
    }

    /// Stops the running pipeline with `error` without cancelling the request (a timeout).
    func abort(with error: KiteError) {
        let (waiters, task) = self.storage.withLockedValue { storage -> ([Waiter], Task<Void, Never>?) in
            guard !storage.machine.state.isFinal, storage.abortError == nil else { return ([], nil) }
            storage.abortError = error
            return (storage.machine.takeWaiters(), storage.pipelineTask)
        }
        for waiter in waiters { waiter.resume(throwing: error) }
        task?.cancel()
    }

    /// Adds a handler that runs once with the outcome; starts the request if so configured.
    func appendHandler(_ handler: @escaping Handler) {
        let startImmediately = self.session.configuration.startRequestsImmediately
        let action = self.storage.withLockedValue { $0.machine.addHandler(handler, startImmediately: startImmediately) }
        switch action {
        case .queued:
            break
        case .queuedAndStartPipeline:
            self.startPipeline()
        case .runNow(let handler, let outcome):
            self.session.serializationQueue.async { handler(outcome) }
        }
    }

    /// Adds a validator; one added after the request is over checks the stored outcome at once.
    func appendValidator(_ validator: @escaping Validator) {
        let finished = self.storage.withLockedValue { storage -> RequestOutcome? in
            if let outcome = storage.machine.outcome { return outcome }
            storage.validators.append(validator)
            return nil
        }
        guard let finished, finished.error == nil, finished.response != nil else { return }
        if let error = validator(finished) {
            self.storage.withLockedValue { storage in
                storage.machine.updateOutcome { outcome in
                    if outcome.error == nil { outcome.error = error }
                }
            }
        }
    }

    private func startPipeline() {
        let task = Task { await self.runPipeline() }
        let cancelNow = self.storage.withLockedValue { storage in
            storage.pipelineTask = task
            return storage.abortError != nil
        }
        if cancelNow { task.cancel() }
    }

    /// Waits while the request is suspended; throws once it is cancelled or aborted.
    func checkpoint() async throws(KiteError) {
        let (state, abort) = self.storage.withLockedValue { ($0.machine.state, $0.abortError) }
        if let abort { throw abort }
        if state == .resumed, !Task.isCancelled { return }
        do {
            try await withCheckedThrowingContinuation { (continuation: Waiter) in
                let (action, abort) = self.storage.withLockedValue { storage in
                    storage.abortError == nil
                        ? (storage.machine.waitIfSuspended(continuation), nil)
                        : (.cancelled, storage.abortError)
                }
                switch action {
                case .proceed:
                    continuation.resume()
                case .parked:
                    break
                case .cancelled:
                    continuation.resume(throwing: abort ?? self.cancellationError)
                }
            }
        } catch {
            throw self.storage.withLockedValue { $0.abortError } ?? self.cancellationError
        }
        if Task.isCancelled {
            throw self.storage.withLockedValue { $0.abortError } ?? self.cancellationError
        }
    }

    var cancellationError: KiteError {
        KiteError(code: .cancelled, message: "the request was cancelled", request: self.summary)
    }

    /// Reads the response body into `outcome`; overridden by each kind of request.
    func receiveBody(
        _ response: TransportResponse,
        into outcome: inout RequestOutcome,
        bytesReceived: inout Int64
    ) async throws(KiteError) {
        var iterator = response.body.makeAsyncIterator()
        while let chunk = try await self.nextChunk(&iterator) {
            bytesReceived += Int64(chunk.readableBytes)
        }
    }

    /// The next body chunk after waiting out a suspension; engine errors arrive as ``KiteError``.
    func nextChunk(_ iterator: inout ByteChunks.AsyncIterator) async throws(KiteError) -> ByteBuffer? {
        try await self.checkpoint()
        do {
            return try await iterator.next()
        } catch let error as KiteError {
            throw error
        } catch {
            throw self.cancellationError
        }
    }
}
