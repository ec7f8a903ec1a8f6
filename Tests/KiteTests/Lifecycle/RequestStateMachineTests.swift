import Testing

@testable import Kite

/// The lifecycle as a plain value: waiters are Ints, handlers Strings, outcomes Strings.
typealias Machine = RequestStateMachine<Int, String, String, String>

@Suite struct RequestStateMachineTests {
    @Test func firstResumeStartsThePipelineOnce() {
        var machine = Machine()
        guard case .startPipeline = machine.resume() else {
            Issue.record("first resume must start the pipeline")
            return
        }
        #expect(machine.state == .resumed)
        guard case .none = machine.resume() else {
            Issue.record("a second resume must do nothing")
            return
        }
        #expect(machine.pipelineStarted)
    }

    @Test func suspendParksWaitersAndResumeReleasesThemInOrder() {
        var machine = Machine()
        _ = machine.resume()
        let result1 = machine.waitIfSuspended(1)
        #expect(result1 == .proceed)
        let result2 = machine.suspend()
        #expect(result2)
        #expect(machine.state == .suspended)
        let result3 = machine.waitIfSuspended(7)
        #expect(result3 == .parked)
        let result4 = machine.waitIfSuspended(8)
        #expect(result4 == .parked)
        #expect(machine.parkedWaiterCount == 2)
        guard case .resumeWaiters(let waiters) = machine.resume() else {
            Issue.record("resume must release the parked waiters")
            return
        }
        #expect(waiters == [7, 8])
        #expect(machine.parkedWaiterCount == 0)
        #expect(machine.state == .resumed)
    }

    @Test func theEnginePullingTheBodyAfterTheRequestFinishedIsTold() {
        // AHC may pull a request body after the response ended: this must not trap.
        var machine = Machine()
        _ = machine.resume()
        _ = machine.finish(with: "done")
        #expect(machine.state == .finished)
        #expect(machine.waitIfSuspended(3) == .finished)
        #expect(machine.parkedWaiterCount == 0)
    }

    @Test func suspendBeforeStartDefersThePipelineUntilResume() {
        var machine = Machine()
        let result5 = machine.suspend()
        #expect(result5)
        guard case .queued = machine.addHandler("h", startImmediately: true) else {
            Issue.record("a suspended request must not start when a handler is attached")
            return
        }
        #expect(!machine.pipelineStarted)
        guard case .startPipeline = machine.resume() else {
            Issue.record("resume after an early suspend must start the pipeline")
            return
        }
        #expect(machine.pipelineStarted)
    }

    @Test func firstHandlerStartsWhenConfiguredAndOnlyThen() {
        var eager = Machine()
        guard case .queuedAndStartPipeline = eager.addHandler("a", startImmediately: true) else {
            Issue.record("first handler must start the request")
            return
        }
        guard case .queued = eager.addHandler("b", startImmediately: true) else {
            Issue.record("second handler must only queue")
            return
        }
        var lazy = Machine()
        guard case .queued = lazy.addHandler("a", startImmediately: false) else {
            Issue.record("handler must not start a request when startRequestsImmediately is off")
            return
        }
        #expect(lazy.state == .initialized)
    }

    @Test func finishDeliversEveryQueuedHandlerExactlyOnce() {
        var machine = Machine()
        _ = machine.addHandler("a", startImmediately: true)
        _ = machine.addHandler("b", startImmediately: true)
        let result6 = machine.finish(with: "done")
        #expect(result6 == ["a", "b"])
        #expect(machine.state == .finished)
        #expect(machine.pendingHandlerCount == 0)
        guard case .runNow(let handler, let outcome) = machine.addHandler("late", startImmediately: true) else {
            Issue.record("a handler added after finish must run at once")
            return
        }
        #expect(handler == "late")
        #expect(outcome == "done")
    }

    @Test func cancelBeforeStartDeliversTheCancelledOutcomeWithoutAPipeline() {
        var machine = Machine()
        _ = machine.addHandler("a", startImmediately: false)
        guard
            case .deliver(let handlers, let outcome) = machine.cancel(
                with: Self.cancelled,
                outcomeIfNotStarted: { "cancelled" }
            )
        else {
            Issue.record("cancel before start must deliver at once")
            return
        }
        #expect(handlers == ["a"])
        #expect(outcome == "cancelled")
        #expect(machine.state == .cancelled)
        guard case .runNow(_, let late) = machine.addHandler("b", startImmediately: true) else {
            Issue.record("late handlers of a cancelled request run at once")
            return
        }
        #expect(late == "cancelled")
    }

    @Test func cancelWhileRunningWakesParkedWaitersAndWaitsForThePipeline() {
        var machine = Machine()
        _ = machine.addHandler("a", startImmediately: true)
        let result7 = machine.suspend()
        #expect(result7)
        let result8 = machine.waitIfSuspended(3)
        #expect(result8 == .parked)
        guard
            case .cancelPipeline(let waiters, _) = machine.cancel(
                with: Self.cancelled,
                outcomeIfNotStarted: { "unused" }
            )
        else {
            Issue.record("cancel of a running request must stop the pipeline")
            return
        }
        #expect(waiters == [3])
        #expect(machine.state == .cancelled)
        #expect(machine.outcome == nil)
        let result9 = machine.waitIfSuspended(4)
        #expect(result9 == .cancelled)
        let result10 = machine.finish(with: "cancelled by caller")
        #expect(result10 == ["a"])
        #expect(machine.state == .cancelled, "cancelled is final: finishing keeps it")
    }

    @Test(arguments: [RequestState.cancelled, .finished])
    func finalStatesIgnoreEveryTransition(final: RequestState) {
        var machine = Machine()
        _ = machine.resume()
        if final == .cancelled {
            _ = machine.cancel(with: Self.cancelled, outcomeIfNotStarted: { "" })
            _ = machine.finish(with: "x")
        } else {
            _ = machine.finish(with: "x")
        }
        guard case .none = machine.resume() else {
            Issue.record("resume of a final request must do nothing")
            return
        }
        let result11 = machine.suspend()
        #expect(!result11)
        guard case .none = machine.cancel(with: Self.cancelled, outcomeIfNotStarted: { "" }) else {
            Issue.record("cancel of a final request must do nothing")
            return
        }
        #expect(machine.state == final)
    }

    @Test func updateOutcomeOnlyChangesAFinishedRequest() {
        var machine = Machine()
        machine.updateOutcome { $0 = "changed" }
        #expect(machine.outcome == nil)
        _ = machine.resume()
        _ = machine.finish(with: "ok")
        machine.updateOutcome { $0 += "+validated" }
        #expect(machine.outcome == "ok+validated")
    }

    static let cancelled = KiteError(code: .cancelled, message: "cancelled")
    static let timeout = KiteError(code: .timedOut, message: "total", timeout: .total)

    @Test func abortWakesWaitersOnceAndTheFirstReasonWins() {
        var machine = Machine()
        _ = machine.resume()
        _ = machine.suspend()
        _ = machine.waitIfSuspended(1)
        let first = machine.abort(with: Self.timeout)
        #expect(first?.waiters == [1])
        #expect(machine.state == .suspended, "an abort is not a cancel: the state stays")
        #expect(machine.abortError?.code == .timedOut)
        let second = machine.abort(with: Self.cancelled)
        #expect(second == nil, "the first reason wins")
        guard case .cancelPipeline(let waiters, _) = machine.cancel(with: Self.cancelled, outcomeIfNotStarted: { "" })
        else {
            Issue.record("cancel of a running request must stop the pipeline")
            return
        }
        #expect(waiters.isEmpty)
        #expect(machine.abortError?.code == .timedOut, "cancel does not replace an earlier abort")
        #expect(machine.checkpoint == .cancelled)
    }

    @Test func anAbortBeforeThePipelineTaskExistsCancelsItWhenItArrives() {
        var machine = Machine()
        _ = machine.resume()
        #expect(machine.checkpoint == .proceed)
        _ = machine.abort(with: Self.timeout)
        let cancelNow = machine.pipelineStarted(Task {})
        #expect(cancelNow)
        #expect(machine.pipelineTask != nil)
        _ = machine.finish(with: "x")
        #expect(machine.pipelineTask == nil, "a finished request lets its task go")
    }

    @Test func validatorsRunOncePerAttemptAndAgainAfterARetry() {
        var machine = Machine()
        _ = machine.resume()
        let stored = machine.addValidator("status")
        #expect(stored == nil)
        let first = Array(machine.takePendingValidators())
        #expect(first == ["status"])
        let again = machine.takePendingValidators()
        #expect(again.isEmpty, "a validator runs once per attempt")
        _ = machine.addValidator("type")
        let added = Array(machine.takePendingValidators())
        #expect(added == ["type"], "one added later runs at delivery")
        let retried = machine.startRetry()
        #expect(retried)
        #expect(machine.retryCount == 1)
        let rerun = Array(machine.takePendingValidators())
        #expect(rerun == ["status", "type"], "a retry checks its new response")
        _ = machine.finish(with: "done")
        let late = machine.addValidator("late")
        #expect(late == "done", "a validator added after the end checks the outcome")
    }

    @Test func noRetryStartsOnceTheRequestIsStopping() {
        var machine = Machine()
        _ = machine.resume()
        _ = machine.abort(with: Self.timeout)
        let retried = machine.startRetry()
        #expect(!retried)
        #expect(machine.retryCount == 0)
        var cancelled = Machine()
        _ = cancelled.resume()
        _ = cancelled.cancel(with: Self.cancelled, outcomeIfNotStarted: { "" })
        let retriedCancelled = cancelled.startRetry()
        #expect(!retriedCancelled)
    }

    @Test func aRetryGoesBackToAdaptAndEveryOtherMoveGoesForward() {
        var machine = Machine()
        _ = machine.resume()
        #expect(machine.stage == .build)
        for stage in [Machine.Stage.adapt, .send, .receive, .validate, .retryDecision] {
            machine.enter(stage)
            #expect(machine.stage == stage)
        }
        let retried = machine.startRetry()
        #expect(retried)
        #expect(machine.stage == .adapt, "a retry goes back to adapt")
        machine.enter(.retryDecision)
        machine.enter(.deliver)
        machine.enter(.deliver)
        #expect(machine.stage == .deliver)
    }
}
