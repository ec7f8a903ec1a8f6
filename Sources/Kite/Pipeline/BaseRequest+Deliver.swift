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
        self.applyPendingValidators(to: &outcome)
        outcome = await self.sink.finalize(outcome, of: self)
        self.finish(with: outcome)
    }

    /// Runs the validators that have not yet checked this attempt's response; the first failure becomes
    /// the outcome's error.
    @inline(never)
    private func applyPendingValidators(to outcome: inout RequestOutcome) {
        let pending = self.machine.withLockedValue { $0.takePendingValidators() }
        self.apply(pending, to: &outcome)
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
            self.context.telemetry?.requestFinished(self, outcome: outcome, retryCount: self.retryCount)
            self.context.eventMonitor?.requestDidFinish(self)
            for handler in finish.handlers { handler(outcome) }
            return
        }
    }
}
