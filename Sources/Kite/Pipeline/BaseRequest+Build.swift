import Foundation
import HTTPTypes

extension BaseRequest {
    /// Build: the draft's head with the session's default header fields. The first time it also reads
    /// what the run needs (interceptors, redirect handler, credential) and starts the total timer, which
    /// spans every attempt.
    func build(_ draft: RequestDraft, run: inout PipelineRun) throws(KiteError) -> HTTPRequest {
        var head = try draft.makeHTTPRequest()
        head.headerFields = self.session.headerFields(for: head.headerFields)
        guard !run.prepared else { return head }
        run.prepared = true

        let (interceptor, redirectHandler, credential) = self.storage.withLockedValue {
            ($0.interceptor, $0.redirectHandler, $0.credential)
        }
        run.interceptors = Interceptors(session: self.session.interceptor, request: interceptor)
        run.redirectHandler = redirectHandler ?? self.session.redirectHandler
        run.credential = credential
        if let total = draft.timeout ?? self.session.configuration.timeouts.total {
            run.deadline = run.start + total
            let error = self.totalTimeoutError(total)
            run.totalTimeoutError = error
            run.totalTimer = self.startTotalTimer(total, error: error)
        }
        return head
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
}
