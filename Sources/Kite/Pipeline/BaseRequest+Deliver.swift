import Foundation

extension BaseRequest {
    /// Deliver: runs the validators added while the request ran (also those added while they run),
    /// finalizes (a download moves its file), stores the outcome and runs the handlers, which serialize.
    func deliver(_ pipelineOutcome: RequestOutcome) async {
        var outcome = pipelineOutcome
        var finalized = false
        while true {
            let (pending, handlers) = self.storage.withLockedValue {
                storage -> (SmallList<StoredValidator>, SmallList<StoredHandler>?) in
                storage.machine.enter(.deliver)
                let pending = storage.machine.takePendingValidators()
                if !pending.isEmpty { return (pending, nil) }
                if storage.machine.state == .cancelled, outcome.error == nil {
                    outcome.error = storage.machine.abortError ?? self.cancellationError
                }
                guard finalized else { return ([], nil) }
                return ([], storage.machine.finish(with: outcome))
            }
            if let handlers {
                self.session.telemetry?.requestFinished(self, outcome: outcome, retryCount: self.retryCount)
                self.session.eventMonitor?.requestDidFinish(self)
                for handler in handlers { handler(outcome) }
                return
            }
            if pending.isEmpty {
                outcome = await self.finalize(outcome)
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
