import Foundation

extension BaseRequest {
    /// Deliver: runs the validators added while the request ran (also those added while they run),
    /// finalizes (a download moves its file), stores the outcome and runs the handlers, which serialize.
    /// A sink that does not finalize (memory, stream) is delivered without an async call.
    @inline(__always)
    func deliver(_ outcome: consuming RequestOutcome) async {
        if self.sink.finalizes {
            await self.finalizeAndFinish(outcome)
        } else {
            self.finish(with: outcome)
        }
    }

    @inline(never)
    private func finalizeAndFinish(_ pipelineOutcome: consuming RequestOutcome) async {
        var outcome = pipelineOutcome
        self.prepareToFinalize(&outcome)
        outcome = await self.sink.finalize(outcome, of: self)
        self.finish(with: outcome)
    }

    /// Before the sink finalizes: the validators that have not yet checked this attempt's response run (the
    /// first failure becomes the outcome's error), and a cancelled request's outcome carries its cancellation,
    /// so a cancelled download is not moved into place.
    @inline(never)
    private func prepareToFinalize(_ outcome: inout RequestOutcome) {
        let (pending, stopped) = self.machine.withLockedValue { ($0.takePendingValidators(), $0.finishingError) }
        self.apply(pending, to: &outcome)
        if outcome.error == nil, let stopped {
            outcome.error = stopped
        }
    }

    /// Stores the outcome and runs the handlers, once no validator added meanwhile is left to run.
    @inline(never)
    func finish(with finalOutcome: consuming RequestOutcome) {
        var outcome = finalOutcome
        while true {
            let (pending, finish) = self.machine.withLockedValue {
                machine -> (SmallList<StoredValidator>, Machine.FinishAction?) in
                let pending = machine.takePendingValidators()
                if !pending.isEmpty { return (pending, nil) }
                // A cancelled request never finishes as a success.
                if outcome.error == nil, let error = machine.finishingError {
                    outcome.error = error
                }
                return ([], machine.finish(with: outcome))
            }
            guard let finish else {
                self.apply(pending, to: &outcome)
                continue
            }
            finish.totalTimer?.cancel()
            self.context.requests.finished(self)
            self.context.telemetry?.requestFinished(self, outcome: outcome, retryCount: self.retryCount)
            self.context.eventMonitor?.requestDidFinish(self)
            for handler in finish.handlers { handler(outcome) }
            return
        }
    }
}
