import Foundation
import HTTPTypes
import NIOCore

extension BaseRequest {
    /// build → send → sink → validate → deliver, once per request, in its own task.
    func runPipeline() async {
        let clock = ContinuousClock()
        let start = clock.now
        let startDate = Date()
        var outcome = RequestOutcome()
        var firstByte: ContinuousClock.Instant?
        var bytesSent: Int64 = 0
        var bytesReceived: Int64 = 0
        var redirectCount = 0
        var totalTimer: Task<Void, Never>?
        var totalTimeoutError: KiteError?

        do throws(KiteError) {
            let draft = try self.draftResult.get()
            var head = try draft.makeHTTPRequest()
            head.headerFields = self.session.headerFields(
                adding: self.session.configuration.headers,
                to: head.headerFields
            )
            outcome.request = head
            self.storage.withLockedValue { $0.sentRequest = head }

            var deadline: ContinuousClock.Instant?
            if let total = draft.timeout ?? self.session.configuration.timeouts.total {
                deadline = start + total
                let error = self.totalTimeoutError(total)
                totalTimeoutError = error
                totalTimer = self.startTotalTimer(total, error: error)
            }
            try await self.checkpoint()

            let body = draft.body.map { TransportRequestBody.bytes(ByteBuffer(data: $0)) }
            let response = try await self.session.transport.send(
                TransportRequest(head: head, body: body, deadline: deadline)
            )
            firstByte = clock.now
            bytesSent = body?.length ?? 0
            outcome.response = response.head
            outcome.url = response.url
            redirectCount = response.redirectCount

            try await self.receiveBody(response, into: &outcome, bytesReceived: &bytesReceived)
            if let abort = self.storage.withLockedValue({ $0.abortError }) {
                // The engine may end a cancelled body quietly: never deliver it as complete.
                throw abort
            }
        } catch {
            let abort = self.storage.withLockedValue { $0.abortError }
            var failure = abort ?? error
            if failure.timeout == .total, let totalTimeoutError {
                // The engine's deadline and Kite's timer race; report both the same way.
                failure = totalTimeoutError
            }
            outcome.error = failure.naming(self.summary).carrying(outcome.response)
        }
        totalTimer?.cancel()

        let end = clock.now
        outcome.metrics = ResponseMetrics(
            requestStartTime: startDate,
            latency: firstByte.map { start.duration(to: $0) },
            requestDuration: start.duration(to: end),
            serializationDuration: .zero,
            bytesSent: bytesSent,
            bytesReceived: bytesReceived,
            redirectCount: redirectCount
        )
        self.finishPipeline(with: outcome)
    }

    private func totalTimeoutError(_ total: Duration) -> KiteError {
        KiteError(
            code: .timedOut,
            message: "the total timeout (\(total.kiteDescription)) expired before the response was complete",
            request: self.summary,
            timeout: .total
        )
    }

    private func startTotalTimer(_ total: Duration, error: KiteError) -> Task<Void, Never> {
        Task { [weak self] in
            do {
                try await Task.sleep(for: total)
            } catch {
                return
            }
            self?.abort(with: error)
        }
    }

    /// Runs the validators (also those added while they run), stores the outcome and runs the handlers.
    private func finishPipeline(with pipelineOutcome: RequestOutcome) {
        var outcome = pipelineOutcome
        while true {
            let (pending, handlers) = self.storage.withLockedValue {
                storage -> ([Validator], [Handler]?) in
                if storage.evaluatedValidators < storage.validators.count {
                    let pending = Array(storage.validators[storage.evaluatedValidators...])
                    storage.evaluatedValidators = storage.validators.count
                    return (pending, nil)
                }
                if storage.machine.state == .cancelled, outcome.error == nil {
                    outcome.error = storage.abortError ?? self.cancellationError
                }
                return ([], storage.machine.finish(with: outcome))
            }
            if let handlers {
                for handler in handlers { handler(outcome) }
                return
            }
            guard outcome.error == nil, outcome.response != nil else { continue }
            for validator in pending {
                if let error = validator(outcome) {
                    outcome.error = error.naming(self.summary).carrying(outcome.response)
                    break
                }
            }
        }
    }
}
