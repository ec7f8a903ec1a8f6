import Foundation

/// The request's side of its state machine: the events the caller and the pipeline send it, and what they
/// do after the lock (the machine itself is ``RequestStateMachine``). The public `resume()`, `suspend()` and
/// `cancel()` are in `BaseRequest.swift`.
extension BaseRequest {
    func cancel(with error: KiteError) {
        var discard: URL?
        let action = self.machine.withLockedValue { machine in
            let producingResumeData = machine.record.download.producingResumeData
            return machine.cancel(with: error) {
                let settled = self.sink.settleUnstarted(
                    RequestOutcome(request: nil, error: error),
                    producingResumeData: producingResumeData
                )
                discard = settled.discard
                return settled.outcome
            }
        }
        discard.map(DownloadFiles.remove)
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
                var checked = outcome
                self.apply(lateValidators, to: &checked)
                handler(checked)
            }
        }
    }

    /// Adds a validator. One added after the request is over does not change the outcome its handlers
    /// already got (nor ``error``): it checks the outcome for the handlers attached after it.
    func appendValidator(_ validator: @escaping Validator) {
        self.machine.withLockedValue { $0.addValidator(StoredValidator(check: validator)) }
    }

    /// Starts the pipeline in a task of its own, which the state machine records (to cancel it).
    func startPipeline() {
        // Not `Task.immediate`: it saves the first hop, but (Swift 6.3) a task it starts takes its
        // status-record lock at every executor switch and enqueue, which costs as much again; the
        // throughput of the two is the same within the benchmarks' noise (BENCHMARKS.md).
        // In the session's running requests before the pipeline can finish (which removes it); one made before
        // a `cancelAllRequests()` is cancelled now instead.
        let admitted = self.context.requests.started(self, madeIn: self.generation)
        let task = Task { await self.runPipeline() }
        let cancelNow = self.machine.withLockedValue { $0.pipelineStarted(task) }
        if cancelNow { task.cancel() }
        if !admitted { self.cancel() }
    }

    /// Waits while the request is suspended; throws once it is stopping (cancelled or timed out) or over.
    /// A running request goes on without an async call (see ``proceedsAtOnce()``).
    @inline(__always)
    func checkpoint() async throws(KiteError) {
        if try !self.proceedsAtOnce() { try await self.waitAtCheckpoint() }
    }

    /// The checkpoint's synchronous half: `true` when the pipeline may go on now, `false` when it must park
    /// (suspended); throws once the request is stopping or over. Every checkpoint of a running request ends
    /// here, one lock round trip, and never pays for an async call.
    @inline(never)
    private func proceedsAtOnce() throws(KiteError) -> Bool {
        try self.proceeds(self.machine.withLockedValue { $0.checkpoint })
    }

    /// The checkpoint's asynchronous half: parks while the request is suspended.
    private func waitAtCheckpoint() async throws(KiteError) {
        _ = try self.proceeds(await self.pass())
    }

    /// What a checkpoint's `answer` means for the pipeline: `true` to go on, `false` to park; throws once the
    /// request is stopping or over.
    private func proceeds(_ answer: PipelineCheckpoint) throws(KiteError) -> Bool {
        switch answer {
        case .proceed: return true
        case .park: return false
        case .stop(let reason): throw reason
        case .over: throw self.cancellationError
        }
    }

    /// Waits while the request is suspended; returns ``PipelineCheckpoint/proceed`` when the pipeline may go
    /// on, else why not. The state machine is the one source of "stop".
    func pass() async -> PipelineCheckpoint {
        var answer = self.currentCheckpoint()
        while answer == .park {
            answer = await withCheckedContinuation { (continuation: Waiter) in
                self.park(continuation)
            }
        }
        return answer
    }

    // Not inlined into the async functions that call them: a lock's closure inlined there puts its
    // temporaries (copies of the machine's state) in the async frame, which the task allocator takes from
    // malloc in slabs.

    @inline(never)
    private func currentCheckpoint() -> PipelineCheckpoint {
        self.machine.withLockedValue { $0.checkpoint }
    }

    @inline(never)
    private func park(_ continuation: Waiter) {
        let action = self.machine.withLockedValue { $0.park(continuation) }
        if case .answer(let waiter, let answer) = action {
            waiter.resume(returning: answer)
        }
    }

    /// Why the pipeline is being stopped, once it is.
    @inline(never)
    var abortError: KiteError? {
        self.machine.withLockedValue { $0.stopReason }
    }

    @inline(never)
    var cancellationError: KiteError {
        KiteError(code: .cancelled, message: "the request was cancelled", request: self.summary)
    }
}
