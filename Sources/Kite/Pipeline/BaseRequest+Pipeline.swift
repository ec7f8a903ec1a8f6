import Foundation
import HTTPTypes
import NIOCore

/// What one run of the pipeline carries from stage to stage and from attempt to attempt.
struct PipelineRun {
    let clock = ContinuousClock()
    let start: ContinuousClock.Instant
    let startDate = Date()
    /// Whether the first build has read the run's settings and started its timer.
    var prepared = false
    /// When the total timeout expires: it spans every attempt.
    var deadline: ContinuousClock.Instant?
    var totalTimer: Task<Void, Never>?
    var totalTimeoutError: KiteError?
    /// When the latest attempt's response head arrived.
    var firstByte: ContinuousClock.Instant?
    /// Redirects followed, over all attempts.
    var redirectCount = 0
    /// The latest attempt's response body count.
    var counter = BodyCounter()
    /// The session's and the request's interceptors, read once when the run starts.
    var interceptors: Interceptors
    /// The redirect handler in effect (the request's, else the session's), when there is one.
    var redirectHandler: (any RedirectHandler)?
    /// The credential that answers `401` challenges, when the request has one.
    var credential: Credential?

    init(start: ContinuousClock.Instant) {
        self.start = start
        self.interceptors = Interceptors()
    }
}

/// The session's interceptor and the request's own, in that order; both optional, so a request without
/// interceptors pays nothing for them.
struct Interceptors {
    var session: (any RequestInterceptor)?
    var request: (any RequestInterceptor)?

    var isEmpty: Bool { self.session == nil && self.request == nil }
}

extension BaseRequest {
    /// The pipeline, once per request, in its own task. Each stage lives in its own file:
    ///
    /// build → adapt → send (+ redirects and challenges) → receive → validate → retry decision, back
    /// to adapt with a fresh body when a retrier asks, else → deliver (validators added late, finalize,
    /// handlers, which serialize).
    ///
    /// The request's state machine owns the lifecycle: this loop asks it at every checkpoint whether to
    /// go on, and it decides whether a retry may start.
    func runPipeline() async {
        var run = PipelineRun(start: ContinuousClock.now)
        var outcome = RequestOutcome()
        attempts: while true {
            var body: TransportRequestBody?
            do throws(KiteError) {
                let draft = try self.draftResult.get()
                let head = try self.build(draft, run: &run)
                try await self.checkpoint()
                let adapted = try await self.adapt(head, run: run)
                outcome.request = adapted
                self.storage.withLockedValue { storage in
                    storage.sentRequest = adapted
                    storage.machine.enter(.send)
                }
                body = try self.makeRequestBody(for: draft).map(self.observingUpload)
                let (response, finalHead) = try await self.send(adapted, body: body, run: &run)
                try await self.receive(response, for: finalHead, draft: draft, into: &outcome, run: &run)
                self.validate(&outcome)
            } catch {
                outcome.error = self.failure(error, run: run).carrying(outcome.response)
            }
            if let error = outcome.error, !run.interceptors.isEmpty {
                switch await self.retryDecision(for: error, body: body, outcome: outcome, run: run) {
                case .retry:
                    outcome = RequestOutcome()
                    continue attempts
                case .fail(let error):
                    outcome.error = error.naming(self.summary).carrying(outcome.response)
                }
            }
            break
        }
        run.totalTimer?.cancel()
        self.uploadReporter.finish()
        self.downloadReporter.finish()

        let end = run.clock.now
        outcome.metrics = ResponseMetrics(
            requestStartTime: run.startDate,
            latency: run.firstByte.map { run.start.duration(to: $0) },
            requestDuration: run.start.duration(to: end),
            serializationDuration: .zero,
            bytesSent: self.storage.withLockedValue { $0.bytesSent },
            bytesReceived: run.counter.received,
            redirectCount: run.redirectCount
        )
        await self.deliver(outcome)
    }

    /// The error a stage threw as the request reports it: the reason the request is being stopped wins
    /// (the engine may report a cancelled exchange otherwise), and both sides of the total-timeout race
    /// read the same.
    private func failure(_ error: KiteError, run: PipelineRun) -> KiteError {
        var failure = self.abortError ?? error
        if failure.timeout == .total, let totalTimeoutError = run.totalTimeoutError {
            failure = totalTimeoutError
        }
        return failure.naming(self.summary)
    }
}
