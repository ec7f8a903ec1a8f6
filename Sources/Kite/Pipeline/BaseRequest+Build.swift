import Foundation
import HTTPTypes
import NIOCore

extension BaseRequest {
    /// Build: the draft's head with the session's default header fields. The first time it also reads
    /// what the run needs (interceptors, redirect handler, credential) and starts the total timer, which
    /// spans every attempt.
    @inline(never)
    func build(_ draft: RequestDraft, run: inout PipelineRun) throws(KiteError) -> HTTPRequest {
        var head = try draft.makeHTTPRequest()
        head.headerFields = self.context.headerFields(for: head.headerFields)
        self.context.telemetry?.inject(into: &head, for: self)
        guard !run.prepared else { return head }
        run.prepared = true
        run.handlesCookies = draft.httpShouldHandleCookies && self.context.cookieJar != nil

        let (interceptor, redirectHandler, credential) = self.machine.withLockedValue {
            ($0.record.interceptor, $0.record.redirectHandler, $0.record.credential)
        }
        run.extensions = PipelineExtensions.make(
            sessionInterceptor: self.context.interceptor,
            requestInterceptor: interceptor,
            redirectHandler: redirectHandler ?? self.context.redirectHandler,
            credential: credential
        )
        self.payIntoRetryBudgets(requestInterceptor: interceptor)
        if let total = draft.timeout ?? self.context.totalTimeout {
            run.deadline = run.start + TimeAmount(total)
            run.total = total
            let timer = self.startTotalTimer(total)
            if self.machine.withLockedValue({ $0.totalTimerStarted(timer) }) { timer.cancel() }
        }
        return head
    }

    /// A request that starts pays into the budget of every retry policy that may retry it but is never asked to
    /// adapt it (``RetryPolicy/retryingOnly(in:)``); the others pay in from ``RetryPolicy/adapt(_:using:)``.
    private func payIntoRetryBudgets(requestInterceptor: (any RequestInterceptor)?) {
        let policies =
            requestInterceptor == nil
            ? self.context.retryingOnlyPolicies
            : RetryPolicy.retryingOnly(in: self.context.interceptor, requestInterceptor)
        for policy in policies {
            policy.retryBudget?.deposit()
        }
    }

    /// The error of an expired total timeout; the engine's deadline and Kite's timer race, and both
    /// report this one.
    func totalTimeoutError(_ total: Duration) -> KiteError {
        KiteError(
            code: .timedOut,
            message: "the total timeout (\(total.kiteDescription)) expired before the response was complete",
            request: self.summary,
            timeout: .total
        )
    }

    /// The error is made when the timer fires: most requests finish first and never need it.
    private func startTotalTimer(_ total: Duration) -> Task<Void, Never> {
        Task { [weak self] in
            do {
                try await Task.sleep(for: total)
            } catch {
                return
            }
            guard let self else { return }
            self.abort(with: self.totalTimeoutError(total))
        }
    }
}
