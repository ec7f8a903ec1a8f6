/// The whole lifecycle of one request as a plain value: no I/O, no locks.
///
/// The owner keeps it in a lock, feeds it events and performs the returned action after unlocking
/// (the pattern of async-http-client's `Transaction`). It holds everything that decides what happens
/// next: the state, the pipeline's task, why the pipeline is being stopped (the abort error), the
/// attempt number, which validators have run for the current attempt, the parked waiters and the
/// handlers. It is generic so tests can drive it with plain values: `Waiter` is what the pipeline
/// parks while suspended, `Handler` a response handler, `Validator` a response check, `Outcome` the
/// request's final result.
struct RequestStateMachine<Waiter, Handler, Validator, Outcome> {
    /// The pipeline's stages, in the order an attempt goes through them.
    enum Stage: Int, Comparable, Sendable {
        case build, adapt, send, receive, validate, retryDecision, deliver

        static func < (lhs: Stage, rhs: Stage) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    private(set) var state: RequestState = .initialized
    /// Where the pipeline is; a retry goes back to ``Stage/adapt``.
    private(set) var stage = Stage.build
    private(set) var pipelineStarted = false
    private(set) var outcome: Outcome?
    private var waiters: [Waiter] = []
    private var handlers = SmallList<Handler>()
    /// The running pipeline, to cancel it.
    private(set) var pipelineTask: Task<Void, Never>?
    /// Why the pipeline is being stopped (cancel or total timeout); the first reason wins.
    private(set) var abortError: KiteError?
    /// How many times the request has been retried.
    var retryCount = 0
    private(set) var validators = SmallList<Validator>()
    /// How many of ``validators`` have run on the current attempt's response.
    private var evaluatedValidators = 0

    var pendingHandlerCount: Int { self.handlers.count }
    var parkedWaiterCount: Int { self.waiters.count }

    enum ResumeAction {
        /// Start the pipeline (first resume).
        case startPipeline
        /// Let the parked pipeline continue.
        case resumeWaiters([Waiter])
        case none
    }

    enum CancelAction {
        /// Cancel the running pipeline and wake its parked waiters with cancellation; the pipeline
        /// reports the outcome when it has stopped.
        case cancelPipeline(waiters: [Waiter], task: Task<Void, Never>?)
        /// The pipeline never ran: deliver this outcome to these handlers now.
        case deliver(SmallList<Handler>, Outcome)
        case none
    }

    enum WaitAction: Equatable {
        /// Running: go on.
        case proceed
        /// Suspended: the waiter is parked until resume or cancel.
        case parked
        /// Cancelled: stop.
        case cancelled
        /// The request is over (the engine may still pull a request body after the response ended):
        /// stop; an upload body ends here.
        case finished
    }

    enum AddHandlerAction {
        /// Stored; it runs when the request finishes.
        case queued
        /// Stored, and the pipeline must be started now.
        case queuedAndStartPipeline
        /// The request is over: run the handler with this outcome now.
        case runNow(Handler, Outcome)
    }

    mutating func resume() -> ResumeAction {
        switch self.state {
        case .initialized:
            self.state = .resumed
            self.pipelineStarted = true
            return .startPipeline
        case .suspended:
            self.state = .resumed
            if !self.pipelineStarted {
                self.pipelineStarted = true
                return .startPipeline
            }
            let waiters = self.waiters
            self.waiters = []
            return .resumeWaiters(waiters)
        case .resumed, .cancelled, .finished:
            return .none
        }
    }

    /// - Returns: Whether the state changed.
    mutating func suspend() -> Bool {
        switch self.state {
        case .initialized, .resumed:
            self.state = .suspended
            return true
        case .suspended, .cancelled, .finished:
            return false
        }
    }

    mutating func cancel(with error: KiteError, outcomeIfNotStarted: () -> Outcome) -> CancelAction {
        switch self.state {
        case .initialized, .resumed, .suspended:
            self.state = .cancelled
            if self.pipelineStarted {
                if self.abortError == nil { self.abortError = error }
                let waiters = self.waiters
                self.waiters = []
                return .cancelPipeline(waiters: waiters, task: self.pipelineTask)
            }
            let outcome = outcomeIfNotStarted()
            self.outcome = outcome
            let handlers = self.handlers
            self.handlers = SmallList()
            return .deliver(handlers, outcome)
        case .cancelled, .finished:
            return .none
        }
    }

    mutating func waitIfSuspended(_ waiter: Waiter) -> WaitAction {
        switch self.state {
        case .resumed:
            return .proceed
        case .suspended:
            self.waiters.append(waiter)
            return .parked
        case .cancelled:
            return .cancelled
        case .finished:
            // Reachable from network timing: AHC may pull the request body after the response ended.
            return .finished
        case .initialized:
            preconditionFailure("the pipeline runs only between resume and finish, not in state \(self.state)")
        }
    }

    /// The pipeline is done; returns the handlers to run with `outcome`.
    mutating func finish(with outcome: Outcome) -> SmallList<Handler> {
        switch self.state {
        case .resumed, .suspended:
            self.state = .finished
        case .cancelled:
            break
        case .initialized, .finished:
            preconditionFailure("finish(with:) without a running pipeline, in state \(self.state)")
        }
        precondition(self.outcome == nil, "the pipeline finished twice")
        self.outcome = outcome
        self.pipelineTask = nil
        let handlers = self.handlers
        self.handlers = SmallList()
        return handlers
    }

    /// Stops the running pipeline with `error` without cancelling the request (a timeout): returns the
    /// waiters to wake and the task to cancel, or `nil` when the request is over or already stopping.
    mutating func abort(with error: KiteError) -> (waiters: [Waiter], task: Task<Void, Never>?)? {
        guard !self.state.isFinal, self.abortError == nil else { return nil }
        self.abortError = error
        let waiters = self.waiters
        self.waiters = []
        return (waiters, self.pipelineTask)
    }

    /// Records the pipeline's task; returns whether it must be cancelled at once (stopped before it existed).
    mutating func pipelineStarted(_ task: Task<Void, Never>) -> Bool {
        self.pipelineTask = task
        return self.abortError != nil
    }

    /// Whether the pipeline may go on: `.proceed` while running, else why not.
    var checkpoint: WaitAction {
        if self.abortError != nil { return .cancelled }
        switch self.state {
        case .resumed: return .proceed
        case .suspended: return .parked
        case .cancelled: return .cancelled
        case .finished: return .finished
        case .initialized: return .proceed
        }
    }

    /// Moves the pipeline to `stage`: forward within an attempt; back to adapt only through ``startRetry()``.
    mutating func enter(_ stage: Stage) {
        assert(stage >= self.stage, "the pipeline went back from \(self.stage) to \(stage) without a retry")
        self.stage = stage
    }

    /// Starts the next attempt: counts the retry, forgets which validators ran and goes back to adapt.
    /// Returns `false` when the request is being stopped, so there is no next attempt.
    mutating func startRetry() -> Bool {
        guard self.abortError == nil, self.state == .resumed || self.state == .suspended else { return false }
        self.retryCount += 1
        self.evaluatedValidators = 0
        self.stage = .adapt
        return true
    }

    /// Adds a validator: stored for the running request, or returns the outcome of a finished one,
    /// which the caller checks at once.
    mutating func addValidator(_ validator: Validator) -> Outcome? {
        if let outcome = self.outcome { return outcome }
        self.validators.append(validator)
        return nil
    }

    /// The validators that have not yet run on the current attempt, marked as run (in the validate or
    /// deliver stage).
    mutating func takePendingValidators() -> SmallList<Validator> {
        guard self.evaluatedValidators < self.validators.count else { return SmallList() }
        let pending = self.validators.suffix(from: self.evaluatedValidators)
        self.evaluatedValidators = self.validators.count
        return pending
    }

    /// Changes the stored outcome of a request that is over (a validator added after it finished).
    mutating func updateOutcome(_ update: (inout Outcome) -> Void) {
        guard var outcome = self.outcome else { return }
        update(&outcome)
        self.outcome = outcome
    }

    mutating func addHandler(_ handler: Handler, startImmediately: Bool) -> AddHandlerAction {
        if let outcome = self.outcome {
            return .runNow(handler, outcome)
        }
        self.handlers.append(handler)
        if startImmediately, self.state == .initialized {
            self.state = .resumed
            self.pipelineStarted = true
            return .queuedAndStartPipeline
        }
        return .queued
    }
}
