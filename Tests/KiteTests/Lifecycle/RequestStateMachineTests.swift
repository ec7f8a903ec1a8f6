import Testing

@testable import Kite

/// The lifecycle as a plain value: waiters are Ints, handlers Strings, outcomes Strings.
typealias Machine = RequestStateMachine<Int, String, String, String>

@Suite struct RequestStateMachineTests {
    static let cancelled = KiteError(code: .cancelled, message: "cancelled")
    static let timeout = KiteError(code: .timedOut, message: "total", timeout: .total)

    /// Every state the machine can be in, each made by the events that lead there.
    enum Start: String, CaseIterable, CustomTestStringConvertible {
        case initialized, initializedSuspended, running, runningSuspended, stoppingForTimeout, stoppingForCancel
        case finished, finishedCancelled

        var testDescription: String { self.rawValue }

        func make() -> Machine {
            var machine = Machine()
            switch self {
            case .initialized:
                break
            case .initializedSuspended:
                _ = machine.suspend()
            case .running, .runningSuspended, .stoppingForTimeout, .stoppingForCancel, .finished:
                _ = machine.resume()
                _ = machine.pipelineStarted(Task {})
                if self == .runningSuspended {
                    _ = machine.suspend()
                    _ = machine.park(1)
                }
                if self == .stoppingForTimeout { _ = machine.abort(with: RequestStateMachineTests.timeout) }
                if self == .stoppingForCancel {
                    _ = machine.cancel(with: RequestStateMachineTests.cancelled, outcomeIfNotStarted: { "" })
                }
                if self == .finished { _ = machine.finish(with: "done") }
            case .finishedCancelled:
                _ = machine.cancel(with: RequestStateMachineTests.cancelled, outcomeIfNotStarted: { "cancelled" })
            }
            return machine
        }
    }

    /// Every event the machine takes.
    enum Event: String, CaseIterable, CustomTestStringConvertible {
        case resume, suspend, cancel, abort, addHandler, addValidator, pipelineStarted, totalTimerStarted
        case checkpoint, park, startRetry, bodyDelivered, enterSend, finish

        var testDescription: String { self.rawValue }

        /// Applies the event; returns what the machine answered, as text.
        func apply(to machine: inout Machine) -> String {
            switch self {
            case .resume:
                switch machine.resume() {
                case .startPipeline: return "startPipeline"
                case .resumeWaiters(let waiters): return "resumeWaiters\(waiters)"
                case .none: return "none"
                }
            case .suspend:
                return "\(machine.suspend())"
            case .cancel:
                switch machine.cancel(with: RequestStateMachineTests.cancelled, outcomeIfNotStarted: { "cancelled" }) {
                case .cancelPipeline(let waiters, let task): return "cancelPipeline\(waiters) task:\(task != nil)"
                case .deliver(let handlers, let outcome): return "deliver\(Array(handlers)) \(outcome)"
                case .none: return "none"
                }
            case .abort:
                guard let (waiters, task) = machine.abort(with: RequestStateMachineTests.timeout) else { return "nil" }
                return "stop\(waiters) task:\(task != nil)"
            case .addHandler:
                switch machine.addHandler("h", startImmediately: true) {
                case .queued: return "queued"
                case .queuedAndStartPipeline: return "queuedAndStartPipeline"
                case .runNow(let handler, let outcome, let late): return "runNow \(handler) \(outcome) \(Array(late))"
                }
            case .addValidator:
                machine.addValidator("v")
                return "pending\(Array(machine.takePendingValidators()))"
            case .pipelineStarted:
                return "cancelNow:\(machine.pipelineStarted(Task {}))"
            case .totalTimerStarted:
                return "cancelNow:\(machine.totalTimerStarted(Task {}))"
            case .checkpoint:
                return Self.describe(machine.checkpoint)
            case .park:
                switch machine.park(9) {
                case .parked: return "parked"
                case .answer(let waiter, let answer): return "answer \(waiter) \(Self.describe(answer))"
                }
            case .startRetry:
                return "\(machine.startRetry()) retries:\(machine.retryCount)"
            case .bodyDelivered:
                let before = machine.canRetry
                machine.bodyDelivered()
                return "canRetry \(before)->\(machine.canRetry)"
            case .enterSend:
                machine.enter(.send)
                return "stage:\(machine.stage.map { "\($0)" } ?? "nil")"
            case .finish:
                let action = machine.finish(with: "end")
                return "handlers\(Array(action.handlers)) outcome:\(machine.outcome ?? "nil")"
            }
        }

        static func describe(_ checkpoint: PipelineCheckpoint) -> String {
            switch checkpoint {
            case .proceed: "proceed"
            case .park: "park"
            case .stop(let reason): "stop:\(reason.message)"
            case .over: "over"
            }
        }
    }

    /// What each event does in each state: the answer, then the public state after it. Every pair is listed.
    static let table: [Event: [Start: (String, RequestState)]] = [
        .resume: [
            .initialized: ("startPipeline", .resumed),
            .initializedSuspended: ("startPipeline", .resumed),
            .running: ("none", .resumed),
            .runningSuspended: ("resumeWaiters[1]", .resumed),
            .stoppingForTimeout: ("none", .resumed),
            .stoppingForCancel: ("none", .cancelled),
            .finished: ("none", .finished),
            .finishedCancelled: ("none", .cancelled),
        ],
        .suspend: [
            .initialized: ("true", .suspended),
            .initializedSuspended: ("false", .suspended),
            .running: ("true", .suspended),
            .runningSuspended: ("false", .suspended),
            .stoppingForTimeout: ("true", .suspended),
            .stoppingForCancel: ("false", .cancelled),
            .finished: ("false", .finished),
            .finishedCancelled: ("false", .cancelled),
        ],
        .cancel: [
            .initialized: ("deliver[] cancelled", .cancelled),
            .initializedSuspended: ("deliver[] cancelled", .cancelled),
            .running: ("cancelPipeline[] task:true", .cancelled),
            .runningSuspended: ("cancelPipeline[1] task:true", .cancelled),
            .stoppingForTimeout: ("cancelPipeline[] task:true", .cancelled),
            .stoppingForCancel: ("none", .cancelled),
            .finished: ("none", .finished),
            .finishedCancelled: ("none", .cancelled),
        ],
        .abort: [
            .initialized: ("nil", .initialized),
            .initializedSuspended: ("nil", .suspended),
            .running: ("stop[] task:true", .resumed),
            .runningSuspended: ("stop[1] task:true", .suspended),
            .stoppingForTimeout: ("nil", .resumed),
            .stoppingForCancel: ("nil", .cancelled),
            .finished: ("nil", .finished),
            .finishedCancelled: ("nil", .cancelled),
        ],
        .addHandler: [
            .initialized: ("queuedAndStartPipeline", .resumed),
            .initializedSuspended: ("queued", .suspended),
            .running: ("queued", .resumed),
            .runningSuspended: ("queued", .suspended),
            .stoppingForTimeout: ("queued", .resumed),
            .stoppingForCancel: ("queued", .cancelled),
            .finished: ("runNow h done []", .finished),
            .finishedCancelled: ("runNow h cancelled []", .cancelled),
        ],
        .addValidator: [
            .initialized: ("pending[]", .initialized),
            .initializedSuspended: ("pending[]", .suspended),
            .running: ("pending[\"v\"]", .resumed),
            .runningSuspended: ("pending[\"v\"]", .suspended),
            .stoppingForTimeout: ("pending[\"v\"]", .resumed),
            .stoppingForCancel: ("pending[\"v\"]", .cancelled),
            .finished: ("pending[]", .finished),
            .finishedCancelled: ("pending[]", .cancelled),
        ],
        .pipelineStarted: [
            .initialized: ("cancelNow:true", .initialized),
            .initializedSuspended: ("cancelNow:true", .suspended),
            .running: ("cancelNow:false", .resumed),
            .runningSuspended: ("cancelNow:false", .suspended),
            .stoppingForTimeout: ("cancelNow:true", .resumed),
            .stoppingForCancel: ("cancelNow:true", .cancelled),
            .finished: ("cancelNow:true", .finished),
            .finishedCancelled: ("cancelNow:true", .cancelled),
        ],
        .totalTimerStarted: [
            .initialized: ("cancelNow:true", .initialized),
            .initializedSuspended: ("cancelNow:true", .suspended),
            .running: ("cancelNow:false", .resumed),
            .runningSuspended: ("cancelNow:false", .suspended),
            .stoppingForTimeout: ("cancelNow:true", .resumed),
            .stoppingForCancel: ("cancelNow:true", .cancelled),
            .finished: ("cancelNow:true", .finished),
            .finishedCancelled: ("cancelNow:true", .cancelled),
        ],
        .checkpoint: [
            .initialized: ("over", .initialized),
            .initializedSuspended: ("over", .suspended),
            .running: ("proceed", .resumed),
            .runningSuspended: ("park", .suspended),
            .stoppingForTimeout: ("stop:total", .resumed),
            .stoppingForCancel: ("stop:cancelled", .cancelled),
            .finished: ("over", .finished),
            .finishedCancelled: ("over", .cancelled),
        ],
        .park: [
            .initialized: ("answer 9 over", .initialized),
            .initializedSuspended: ("answer 9 over", .suspended),
            .running: ("answer 9 proceed", .resumed),
            .runningSuspended: ("parked", .suspended),
            .stoppingForTimeout: ("answer 9 stop:total", .resumed),
            .stoppingForCancel: ("answer 9 stop:cancelled", .cancelled),
            .finished: ("answer 9 over", .finished),
            .finishedCancelled: ("answer 9 over", .cancelled),
        ],
        .startRetry: [
            .initialized: ("false retries:0", .initialized),
            .initializedSuspended: ("false retries:0", .suspended),
            .running: ("true retries:1", .resumed),
            .runningSuspended: ("true retries:1", .suspended),
            .stoppingForTimeout: ("false retries:0", .resumed),
            .stoppingForCancel: ("false retries:0", .cancelled),
            .finished: ("false retries:0", .finished),
            .finishedCancelled: ("false retries:0", .cancelled),
        ],
        .bodyDelivered: [
            .initialized: ("canRetry false->false", .initialized),
            .initializedSuspended: ("canRetry false->false", .suspended),
            .running: ("canRetry true->false", .resumed),
            .runningSuspended: ("canRetry true->false", .suspended),
            .stoppingForTimeout: ("canRetry false->false", .resumed),
            .stoppingForCancel: ("canRetry false->false", .cancelled),
            .finished: ("canRetry false->false", .finished),
            .finishedCancelled: ("canRetry false->false", .cancelled),
        ],
        .enterSend: [
            .initialized: ("stage:nil", .initialized),
            .initializedSuspended: ("stage:nil", .suspended),
            .running: ("stage:send", .resumed),
            .runningSuspended: ("stage:send", .suspended),
            .stoppingForTimeout: ("stage:send", .resumed),
            .stoppingForCancel: ("stage:send", .cancelled),
            .finished: ("stage:nil", .finished),
            .finishedCancelled: ("stage:nil", .cancelled),
        ],
        .finish: [
            .initialized: ("handlers[] outcome:nil", .initialized),
            .initializedSuspended: ("handlers[] outcome:nil", .suspended),
            .running: ("handlers[] outcome:end", .finished),
            .runningSuspended: ("handlers[] outcome:end", .finished),
            .stoppingForTimeout: ("handlers[] outcome:end", .finished),
            .stoppingForCancel: ("handlers[] outcome:end", .cancelled),
            .finished: ("handlers[] outcome:done", .finished),
            .finishedCancelled: ("handlers[] outcome:cancelled", .cancelled),
        ],
    ]

    @Test func theTableCoversEveryStateAndEvent() {
        #expect(Set(Self.table.keys) == Set(Event.allCases))
        for event in Event.allCases {
            #expect(Set(Self.table[event]?.keys ?? [:].keys) == Set(Start.allCases), "\(event)")
        }
    }

    @Test(arguments: Start.allCases, Event.allCases)
    func everyEventInEveryStateIsAnsweredByName(start: Start, event: Event) throws {
        let expected = try #require(Self.table[event]?[start])
        var machine = start.make()
        let answer = event.apply(to: &machine)
        #expect(answer == expected.0)
        #expect(machine.requestState == expected.1)
    }

    @Test func suspendParksWaitersAndResumeReleasesThemInOrder() {
        var machine = Machine()
        _ = machine.resume()
        #expect(machine.checkpoint == .proceed)
        let result1 = machine.suspend()
        #expect(result1)
        guard case .parked = machine.park(7), case .parked = machine.park(8) else {
            Issue.record("a suspended request parks its waiters")
            return
        }
        #expect(machine.parkedWaiterCount == 2)
        guard case .resumeWaiters(let waiters) = machine.resume() else {
            Issue.record("resume must release the parked waiters")
            return
        }
        #expect(waiters == [7, 8])
        #expect(machine.parkedWaiterCount == 0)
        #expect(machine.requestState == .resumed)
    }

    @Test func suspendBeforeStartDefersThePipelineUntilResume() {
        var machine = Machine()
        let result2 = machine.suspend()
        #expect(result2)
        guard case .queued = machine.addHandler("h", startImmediately: true) else {
            Issue.record("a suspended request must not start when a handler is attached")
            return
        }
        #expect(!machine.hasStarted)
        guard case .startPipeline = machine.resume() else {
            Issue.record("resume after an early suspend must start the pipeline")
            return
        }
        #expect(machine.hasStarted)
        #expect(machine.pendingHandlerCount == 1)
    }

    @Test func aHandlerStartsTheRequestOnlyWhenConfigured() {
        var lazy = Machine()
        guard case .queued = lazy.addHandler("a", startImmediately: false) else {
            Issue.record("a handler must not start a request when startRequestsImmediately is off")
            return
        }
        #expect(lazy.requestState == .initialized)
    }

    @Test func finishDeliversEveryQueuedHandlerExactlyOnce() {
        var machine = Machine()
        _ = machine.addHandler("a", startImmediately: true)
        _ = machine.addHandler("b", startImmediately: true)
        let action = machine.finish(with: "done")
        #expect(Array(action.handlers) == ["a", "b"])
        #expect(machine.pendingHandlerCount == 0)
        let again = machine.finish(with: "twice")
        #expect(again.handlers.isEmpty)
        #expect(machine.outcome == "done", "a second finish changes nothing")
    }

    @Test func cancelWhileRunningStopsThePipelineAndTheRequestEndsCancelled() {
        var machine = Machine()
        _ = machine.addHandler("a", startImmediately: true)
        _ = machine.suspend()
        _ = machine.park(3)
        guard case .cancelPipeline(let waiters, _) = machine.cancel(with: Self.cancelled, outcomeIfNotStarted: { "" })
        else {
            Issue.record("cancel of a running request must stop the pipeline")
            return
        }
        #expect(waiters == [3])
        #expect(machine.finishingError?.code == .cancelled)
        #expect(machine.outcome == nil, "the pipeline reports the outcome when it has stopped")
        let action = machine.finish(with: "cancelled by caller")
        #expect(Array(action.handlers) == ["a"])
        #expect(machine.requestState == .cancelled, "cancelled is final: finishing keeps it")
    }

    @Test func theFirstStopReasonWinsAndATimeoutIsNotACancel() {
        var machine = Machine()
        _ = machine.resume()
        _ = machine.abort(with: Self.timeout)
        #expect(machine.finishingError == nil, "a timeout alone does not turn a complete response into a failure")
        #expect(machine.checkpoint == .stop(Self.timeout))
        _ = machine.cancel(with: Self.cancelled, outcomeIfNotStarted: { "" })
        #expect(machine.stopReason?.code == .timedOut, "cancel does not replace an earlier stop")
        #expect(machine.finishingError?.code == .timedOut)
        #expect(machine.requestState == .cancelled)
    }

    @Test func theTotalTimeoutNoLongerStopsARequestThatIsDelivering() {
        var machine = Machine()
        _ = machine.resume()
        machine.enter(.deliver)
        let result3 = machine.abort(with: Self.timeout)
        #expect(result3 == nil)
        #expect(machine.checkpoint == .proceed)
    }

    @Test func finishingHandsBackTheTotalTimerToCancel() {
        var machine = Machine()
        _ = machine.resume()
        let result4 = machine.totalTimerStarted(Task {})
        #expect(!result4)
        let result5 = machine.finish(with: "x")
        #expect(result5.totalTimer != nil)
    }

    @Test func validatorsRunOncePerAttemptAndAgainAfterARetry() {
        var machine = Machine()
        _ = machine.resume()
        machine.addValidator("status")
        let result6 = Array(machine.takePendingValidators())
        #expect(result6 == ["status"])
        let result7 = machine.takePendingValidators()
        #expect(result7.isEmpty, "a validator runs once per attempt")
        machine.addValidator("type")
        let result8 = Array(machine.takePendingValidators())
        #expect(result8 == ["type"], "one added later runs at delivery")
        let result9 = machine.startRetry()
        #expect(result9)
        #expect(machine.retryCount == 1)
        let result10 = Array(machine.takePendingValidators())
        #expect(result10 == ["status", "type"], "a retry checks its new response")
        _ = machine.finish(with: "done")
        #expect(machine.retryCount == 1, "a finished request remembers its retries")
    }

    @Test func aValidatorAddedAfterTheEndChecksOnlyTheHandlersAttachedAfterIt() {
        var machine = Machine()
        _ = machine.resume()
        _ = machine.finish(with: "done")
        guard case .runNow(_, _, let before) = machine.addHandler("early", startImmediately: true) else {
            Issue.record("a handler added after finish runs at once")
            return
        }
        #expect(before.isEmpty)
        machine.addValidator("late")
        guard case .runNow(_, let outcome, let after) = machine.addHandler("later", startImmediately: true) else {
            Issue.record("a handler added after finish runs at once")
            return
        }
        #expect(Array(after) == ["late"])
        #expect(outcome == "done", "the stored outcome is not rewritten")
        #expect(machine.outcome == "done")
    }

    @Test func noRetryAfterAStreamHandedOutBytes() {
        var machine = Machine()
        _ = machine.resume()
        machine.bodyDelivered()
        let result11 = machine.startRetry()
        #expect(!result11)
        #expect(machine.retryCount == 0)
    }

    @Test func aRetryGoesBackToAdaptAndEveryOtherMoveGoesForward() {
        var machine = Machine()
        _ = machine.resume()
        #expect(machine.stage == .build)
        for stage in [Machine.Stage.adapt, .send, .receive, .validate, .retryDecision] {
            machine.enter(stage)
            #expect(machine.stage == stage)
        }
        let result12 = machine.startRetry()
        #expect(result12)
        #expect(machine.stage == .adapt, "a retry goes back to adapt")
        machine.enter(.deliver)
        #expect(machine.stage == .deliver)
    }
}
