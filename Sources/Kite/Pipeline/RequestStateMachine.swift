/// The whole lifecycle of one request as a plain value: no I/O, no locks.
///
/// The owner keeps it in its one lock, feeds it events and performs the returned action after unlocking
/// (the pattern of async-http-client's `Transaction+StateMachine`). Its ``State`` is an enum whose cases carry
/// the data that exists in them: a request that has not started has no pipeline task, a running one has its
/// task, attempt, stage and parked waiters, a stopping one also the one reason it stops for, a finished one its
/// outcome. The handlers and validators, which every state may be given, sit beside the state; so do the
/// request's settings and records (``RequestRecord``), which the machine owns but never decides on.
///
/// Every event is answered in every state (no `default:`); an event that cannot happen in a state is answered
/// with the harmless action, never a trap. It is generic so tests drive it with plain values: `Waiter` is what
/// the pipeline parks while suspended, `Handler` a response handler, `Validator` a response check, `Outcome`
/// the request's final result.
struct RequestStateMachine<Waiter, Handler, Validator, Outcome> {
    /// The pipeline's stages, in the order an attempt goes through them.
    enum Stage: Int, Comparable, Sendable {
        case build, adapt, send, receive, validate, retryDecision, deliver

        static func < (lhs: Stage, rhs: Stage) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// What exists while the pipeline runs.
    struct Run {
        /// The pipeline's task, once it is recorded (it is made just after the request starts).
        var task: Task<Void, Never>?
        /// Whether the request is paused: the pipeline parks at its next checkpoint.
        var isSuspended = false
        /// The pipeline's parked continuations (one per body direction at most).
        var waiters: [Waiter] = []
        /// Where the pipeline is; a retry goes back to ``Stage/adapt``.
        var stage = Stage.build
        /// How many times the request has been retried.
        var retryCount = 0
        /// How many of the validators have run on the current attempt's response.
        var evaluatedValidators = 0
        /// Whether a stream request handed body bytes to its readers: it cannot be sent again.
        var deliveredBody = false
        /// The total-timeout timer, spanning every attempt.
        var totalTimer: Task<Void, Never>?
    }

    /// Why a running pipeline is being stopped.
    struct Stop {
        /// The error the request ends with: the first reason wins.
        var reason: KiteError
        /// Whether the caller (or the awaiting task) cancelled it; a timeout alone is not a cancel.
        var isCancel: Bool
    }

    enum State {
        /// Made, not started; `suspended` when ``suspend()`` came first (a handler then does not start it).
        case initialized(suspended: Bool)
        /// The pipeline runs.
        case running(Run)
        /// The pipeline runs but has been told to stop; it ends with the stop's reason.
        case stopping(Run, Stop)
        /// Over: the outcome every handler gets; `cancelled` when it was cancelled.
        case finished(Outcome, cancelled: Bool)
    }

    private(set) var state: State = .initialized(suspended: false)

    init() {}

    /// A running request that has been retried `retryCount` times, for tests of retriers (which read it).
    init(runningAfterRetries retryCount: Int) {
        var run = Run()
        run.retryCount = retryCount
        self.state = .running(run)
    }
    private var handlers = SmallList<Handler>()
    private var validators = SmallList<Validator>()
    /// Validators added after the request finished: they apply to the handlers attached after them.
    private var lateValidators = SmallList<Validator>()
    /// The request's settings (made before it starts) and records (written as it runs).
    var record = RequestRecord()

    /// The public state.
    var requestState: RequestState {
        switch self.state {
        case .initialized(let suspended): suspended ? .suspended : .initialized
        case .running(let run): run.isSuspended ? .suspended : .resumed
        case .stopping(let run, let stop): stop.isCancel ? .cancelled : (run.isSuspended ? .suspended : .resumed)
        case .finished(_, let cancelled): cancelled ? .cancelled : .finished
        }
    }

    /// The outcome, once the request is over (as its handlers got it when it finished).
    var outcome: Outcome? {
        if case .finished(let outcome, _) = self.state { return outcome }
        return nil
    }

    /// How many times the request has been retried.
    var retryCount: Int {
        switch self.state {
        case .initialized: 0
        case .running(let run), .stopping(let run, _): run.retryCount
        case .finished: self.record.finalRetryCount
        }
    }

    /// Why the pipeline is being stopped, while it is.
    var stopReason: KiteError? {
        if case .stopping(_, let stop) = self.state { return stop.reason }
        return nil
    }

    /// Where the pipeline is; `nil` when it does not run.
    var stage: Stage? {
        switch self.state {
        case .running(let run), .stopping(let run, _): run.stage
        case .initialized, .finished: nil
        }
    }

    var pendingHandlerCount: Int { self.handlers.count }

    var parkedWaiterCount: Int {
        switch self.state {
        case .running(let run), .stopping(let run, _): run.waiters.count
        case .initialized, .finished: 0
        }
    }

    /// Whether the request's pipeline was started.
    var hasStarted: Bool {
        if case .initialized = self.state { return false }
        return true
    }

    // MARK: - Events from the caller

    enum ResumeAction {
        /// Start the pipeline (first resume).
        case startPipeline
        /// Let the parked pipeline continue.
        case resumeWaiters([Waiter])
        case none
    }

    mutating func resume() -> ResumeAction {
        switch self.state {
        case .initialized:
            self.state = .running(Run())
            return .startPipeline
        case .running(var run):
            guard run.isSuspended else { return .none }
            run.isSuspended = false
            let waiters = run.waiters
            run.waiters = []
            self.state = .running(run)
            return .resumeWaiters(waiters)
        case .stopping(var run, let stop):
            // A stopping pipeline's waiters were woken when it was told to stop.
            guard run.isSuspended, !stop.isCancel else { return .none }
            run.isSuspended = false
            self.state = .stopping(run, stop)
            return .resumeWaiters([])
        case .finished:
            return .none
        }
    }

    /// - Returns: Whether the state changed.
    mutating func suspend() -> Bool {
        switch self.state {
        case .initialized(let suspended):
            self.state = .initialized(suspended: true)
            return !suspended
        case .running(var run):
            guard !run.isSuspended else { return false }
            run.isSuspended = true
            self.state = .running(run)
            return true
        case .stopping(var run, let stop):
            guard !run.isSuspended, !stop.isCancel else { return false }
            run.isSuspended = true
            self.state = .stopping(run, stop)
            return true
        case .finished:
            return false
        }
    }

    enum CancelAction {
        /// Cancel the running pipeline and wake its parked waiters with the reason; the pipeline
        /// reports the outcome when it has stopped.
        case cancelPipeline(waiters: [Waiter], task: Task<Void, Never>?)
        /// The pipeline never ran: deliver this outcome to these handlers now.
        case deliver(SmallList<Handler>, Outcome)
        case none
    }

    mutating func cancel(with error: KiteError, outcomeIfNotStarted: () -> Outcome) -> CancelAction {
        switch self.state {
        case .initialized:
            let outcome = outcomeIfNotStarted()
            self.state = .finished(outcome, cancelled: true)
            let handlers = self.handlers
            self.handlers = SmallList()
            return .deliver(handlers, outcome)
        case .running(var run):
            let waiters = run.waiters
            run.waiters = []
            self.state = .stopping(run, Stop(reason: error, isCancel: true))
            return .cancelPipeline(waiters: waiters, task: run.task)
        case .stopping(let run, var stop):
            guard !stop.isCancel else { return .none }
            // The first reason (a timeout) stays the error; the request now reads as cancelled.
            stop.isCancel = true
            self.state = .stopping(run, stop)
            return .cancelPipeline(waiters: [], task: run.task)
        case .finished:
            return .none
        }
    }

    /// Stops the running pipeline with `error` without cancelling the request (a timeout): returns the
    /// waiters to wake and the task to cancel, or `nil` when the request does not run or is already stopping.
    /// A request already delivering its complete response is not stopped.
    mutating func abort(with error: KiteError) -> (waiters: [Waiter], task: Task<Void, Never>?)? {
        switch self.state {
        case .running(var run):
            guard run.stage < .deliver else { return nil }
            let waiters = run.waiters
            run.waiters = []
            self.state = .stopping(run, Stop(reason: error, isCancel: false))
            return (waiters, run.task)
        case .initialized, .stopping, .finished:
            return nil
        }
    }

    enum AddHandlerAction {
        /// Stored; it runs when the request finishes.
        case queued
        /// Stored, and the pipeline must be started now.
        case queuedAndStartPipeline
        /// The request is over: run the handler now with this outcome, after checking it with these
        /// validators (those added after the request finished, in order).
        case runNow(Handler, Outcome, SmallList<Validator>)
    }

    mutating func addHandler(_ handler: Handler, startImmediately: Bool) -> AddHandlerAction {
        switch self.state {
        case .initialized(let suspended):
            self.handlers.append(handler)
            guard startImmediately, !suspended else { return .queued }
            self.state = .running(Run())
            return .queuedAndStartPipeline
        case .running, .stopping:
            self.handlers.append(handler)
            return .queued
        case .finished(let outcome, _):
            return .runNow(handler, outcome, self.lateValidators)
        }
    }

    /// Adds a validator. Until the request is over it runs on every attempt's response; one added after
    /// the request finished does not change the outcome its handlers got, and checks it for the handlers
    /// attached after it.
    mutating func addValidator(_ validator: Validator) {
        switch self.state {
        case .initialized, .running, .stopping:
            self.validators.append(validator)
        case .finished:
            self.lateValidators.append(validator)
        }
    }

    // MARK: - Events from the pipeline

    /// Records the pipeline's task; returns whether it must be cancelled at once (stopped before it was
    /// recorded, or there is no pipeline to run).
    mutating func pipelineStarted(_ task: Task<Void, Never>) -> Bool {
        let stopping = self.stopReason != nil
        return self.withRun { $0.task = task }.map { stopping } ?? true
    }

    /// Records the total-timeout timer; returns whether it must be cancelled at once.
    mutating func totalTimerStarted(_ timer: Task<Void, Never>) -> Bool {
        switch self.state {
        case .running(var run):
            run.totalTimer?.cancel()
            run.totalTimer = timer
            self.state = .running(run)
            return false
        case .initialized, .stopping, .finished:
            return true
        }
    }

    /// Whether the pipeline may go on. The one source of "stop": a request stops only when this says so.
    var checkpoint: PipelineCheckpoint {
        switch self.state {
        case .running(let run): run.isSuspended ? .park : .proceed
        case .stopping(_, let stop): .stop(stop.reason)
        case .finished: .over
        // No pipeline runs before the request starts; answered like a request that is over.
        case .initialized: .over
        }
    }

    enum ParkAction {
        /// Parked until resume, cancel or abort.
        case parked
        /// Resumed (or stopped) in between: wake the waiter with this answer now.
        case answer(Waiter, PipelineCheckpoint)
    }

    /// Parks the pipeline's `waiter` while the request is suspended.
    mutating func park(_ waiter: Waiter) -> ParkAction {
        switch self.state {
        case .running(var run):
            guard run.isSuspended else { return .answer(waiter, .proceed) }
            run.waiters.append(waiter)
            self.state = .running(run)
            return .parked
        case .stopping, .finished, .initialized:
            return .answer(waiter, self.checkpoint)
        }
    }

    /// Moves the pipeline to `stage`: forward within an attempt; back to adapt only through ``startRetry()``.
    mutating func enter(_ stage: Stage) {
        self.withRun { run in
            assert(stage >= run.stage, "the pipeline went back from \(run.stage) to \(stage) without a retry")
            run.stage = stage
        }
    }

    /// A stream request handed body bytes to its readers: no attempt may follow.
    mutating func bodyDelivered() {
        self.withRun { $0.deliveredBody = true }
    }

    /// Starts the next attempt: counts the retry, forgets which validators ran and goes back to adapt.
    /// Returns `false` when there is no next attempt: the request is stopping, is over, or handed out body bytes.
    mutating func startRetry() -> Bool {
        switch self.state {
        case .running(var run):
            guard !run.deliveredBody else { return false }
            run.retryCount += 1
            run.evaluatedValidators = 0
            run.stage = .adapt
            self.state = .running(run)
            return true
        case .initialized, .stopping, .finished:
            return false
        }
    }

    /// Whether a failed attempt may be followed by another (not after a stream handed out bytes).
    var canRetry: Bool {
        switch self.state {
        case .running(let run): !run.deliveredBody
        case .initialized, .stopping, .finished: false
        }
    }

    /// The validators that have not yet run on the current attempt, marked as run (in the validate or
    /// deliver stage).
    mutating func takePendingValidators() -> SmallList<Validator> {
        let validators = self.validators
        let pending = self.withRun { run -> SmallList<Validator> in
            guard run.evaluatedValidators < validators.count else { return SmallList() }
            defer { run.evaluatedValidators = validators.count }
            return validators.suffix(from: run.evaluatedValidators)
        }
        return pending ?? SmallList()
    }

    /// Runs `body` on the pipeline's ``Run`` while there is one (running or stopping); `nil` otherwise.
    @discardableResult
    private mutating func withRun<Result>(_ body: (inout Run) -> Result) -> Result? {
        // The state is moved out and back rather than copied: a copy of the run's payload would retain
        // (and then release) each of its references for every event.
        switch self.takeState() {
        case .running(var run):
            let result = body(&run)
            self.state = .running(run)
            return result
        case .stopping(var run, let stop):
            let result = body(&run)
            self.state = .stopping(run, stop)
            return result
        case .initialized(let suspended):
            self.state = .initialized(suspended: suspended)
            return nil
        case .finished(let outcome, let cancelled):
            self.state = .finished(outcome, cancelled: cancelled)
            return nil
        }
    }

    /// The state, moved out; the machine holds a placeholder until the caller stores the next state.
    private mutating func takeState() -> State {
        var taken = State.initialized(suspended: false)
        swap(&taken, &self.state)
        return taken
    }

    struct FinishAction {
        /// The handlers to run with the outcome.
        var handlers: SmallList<Handler>
        /// The total-timeout timer to cancel.
        var totalTimer: Task<Void, Never>?
    }

    /// The error the outcome must carry when the pipeline finishes now: a cancelled request never finishes
    /// as a success.
    var finishingError: KiteError? {
        if case .stopping(_, let stop) = self.state, stop.isCancel { return stop.reason }
        return nil
    }

    /// The pipeline is done; returns the handlers to run with `outcome` and the timer to cancel.
    mutating func finish(with outcome: Outcome) -> FinishAction {
        switch self.takeState() {
        case .running(let run):
            self.record.finalRetryCount = run.retryCount
            self.state = .finished(outcome, cancelled: false)
            let handlers = self.handlers
            self.handlers = SmallList()
            return FinishAction(handlers: handlers, totalTimer: run.totalTimer)
        case .stopping(let run, let stop):
            self.record.finalRetryCount = run.retryCount
            self.state = .finished(outcome, cancelled: stop.isCancel)
            let handlers = self.handlers
            self.handlers = SmallList()
            return FinishAction(handlers: handlers, totalTimer: run.totalTimer)
        case .initialized(let suspended):
            // Only a running pipeline finishes; there is nothing to deliver.
            self.state = .initialized(suspended: suspended)
            return FinishAction(handlers: SmallList())
        case .finished(let stored, let cancelled):
            self.state = .finished(stored, cancelled: cancelled)
            return FinishAction(handlers: SmallList())
        }
    }
}

/// What a pipeline checkpoint answers: whether the request may go on.
enum PipelineCheckpoint: Equatable, Sendable {
    /// Running: go on.
    case proceed
    /// Suspended: park a waiter with ``RequestStateMachine/park(_:)``.
    case park
    /// Stopping: end with this error.
    case stop(KiteError)
    /// The request is over (the engine may still pull a request body after the response ended):
    /// stop; an upload body ends here.
    case over
}
