import Foundation
import HTTPTypes

extension BaseRequest {
    /// Retry decision: asks the session's retrier, then the request's, about a failed attempt. Never for
    /// a cancelled or stopped request, nor for a body that cannot be sent twice (a caller's one-shot stream)
    /// or a response already handed out (a stream request that delivered bytes).
    ///
    /// - Returns: `true` to go back to adapt (the state machine has counted the retry); `false` when the
    ///   request ends with `outcome.error`, which this stage may have replaced.
    @inline(never)
    func retryDecision(
        body: TransportRequestBody?,
        outcome: inout RequestOutcome,
        extensions: PipelineExtensions
    ) async -> Bool {
        guard let error = outcome.error else { return false }
        switch await self.decideRetry(for: error, body: body, outcome: outcome, extensions: extensions) {
        case .retry:
            return true
        case .fail(let failure):
            outcome.error = failure.naming(self.summary).carrying(outcome.response)
            return false
        }
    }

    /// What the retry stage decided about a failed attempt.
    private enum RetryDecision {
        /// Go back to adapt: the state machine has counted the retry.
        case retry
        /// The request ends with this error.
        case fail(KiteError)
    }

    private func decideRetry(
        for error: KiteError,
        body: TransportRequestBody?,
        outcome: RequestOutcome,
        extensions: PipelineExtensions
    ) async -> RetryDecision {
        if error.code == .cancelled || self.abortError != nil { return .fail(error) }
        if let body, !body.isReplayable { return .fail(error) }
        let canRetry = self.machine.withLockedValue { machine in
            machine.record.lastResponse = outcome.response
            machine.enter(.retryDecision)
            return machine.canRetry
        }
        if !canRetry { return .fail(error) }

        var result = RetryResult.doNotRetry
        if let session = extensions.sessionInterceptor {
            result = await session.retry(self, for: self.session, dueTo: error)
        }
        if case .doNotRetry = result, let request = extensions.requestInterceptor {
            result = await request.retry(self, for: self.session, dueTo: error)
        }
        self.context.eventMonitor?.request(self, didDecideRetry: result, dueTo: error)
        switch result {
        case .doNotRetry:
            return .fail(error)
        case .doNotRetryWithError(let retrierError):
            return .fail(KiteError.retryFailed(retrierError, retrying: error))
        case .retry:
            break
        case .retryWithDelay(let delay):
            if delay > .zero {
                do {
                    try await Task.sleep(for: delay)
                } catch {
                    // Cancelled or timed out while waiting: that reason ends the request.
                    return .fail(self.abortError ?? self.cancellationError)
                }
            }
        }
        do {
            try await self.checkpoint()
        } catch {
            return .fail(error)
        }
        let (retrying, previous) = self.machine.withLockedValue { machine -> (Bool, ConnectionProbe.Record?) in
            guard machine.startRetry() else { return (false, nil) }
            // The next attempt reports its own connection, or none if it sends nothing.
            defer { machine.record.connection = nil }
            return (true, machine.record.connection)
        }
        if let previous { self.context.transport.connectionProbe?.unregister(previous) }
        guard retrying else {
            return .fail(self.abortError ?? self.cancellationError)
        }
        await self.sink.prepareForRetry(of: self)
        self.context.eventMonitor?.requestIsRetrying(self)
        self.context.telemetry?.retrying(self, after: error, resendCount: self.retryCount)
        return .retry
    }
}
