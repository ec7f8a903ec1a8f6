import Foundation

extension BaseRequest {
    /// Validate: runs the validators not yet run on this attempt's response, so retriers see a validation
    /// failure. Validators added while the request runs are checked when it is delivered.
    @inline(never)
    func validate(_ outcome: inout RequestOutcome) {
        guard outcome.error == nil, outcome.response != nil else { return }
        let pending = self.machine.withLockedValue { machine in
            machine.enter(.validate)
            return machine.takePendingValidators()
        }
        self.apply(pending, to: &outcome)
    }

    /// Checks `outcome` with `validators`: the first failure becomes its error (a failed outcome or one
    /// without a response is not checked).
    func apply(_ validators: SmallList<StoredValidator>, to outcome: inout RequestOutcome) {
        guard outcome.error == nil, outcome.response != nil else { return }
        for validator in validators {
            if let error = validator(outcome) {
                outcome.error = error.naming(self.summary).carrying(outcome.response).carryingBody(outcome.data)
                return
            }
        }
    }
}
