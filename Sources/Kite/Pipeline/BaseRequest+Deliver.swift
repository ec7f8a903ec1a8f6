import Foundation

extension BaseRequest {
    /// Deliver: runs the validators added while the request ran (also those added while they run),
    /// finalizes (a download moves its file), stores the outcome and runs the handlers, which serialize.
    func deliver(_ pipelineOutcome: RequestOutcome) async {
        var outcome = pipelineOutcome
        var finalized = false
        while true {
            let (pending, finish) = self.machine.withLockedValue {
                machine -> (SmallList<StoredValidator>, Machine.FinishAction?) in
                let pending = machine.takePendingValidators()
                if !pending.isEmpty { return (pending, nil) }
                // A cancelled request never finishes as a success.
                if outcome.error == nil, let error = machine.finishingError {
                    outcome.error = error
                }
                guard finalized else { return ([], nil) }
                return ([], machine.finish(with: outcome))
            }
            if let finish {
                finish.totalTimer?.cancel()
                let handlers = finish.handlers
                self.context.telemetry?.requestFinished(self, outcome: outcome, retryCount: self.retryCount)
                self.context.eventMonitor?.requestDidFinish(self)
                for handler in handlers { handler(outcome) }
                return
            }
            if pending.isEmpty {
                outcome = await self.sink.finalize(outcome, of: self)
                finalized = true
                continue
            }
            guard outcome.error == nil, outcome.response != nil else { continue }
            for validator in pending {
                if let error = validator(outcome) {
                    outcome.error = error.naming(self.summary).carrying(outcome.response).carryingBody(outcome.data)
                    break
                }
            }
        }
    }
}
