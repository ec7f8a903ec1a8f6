import Foundation
import HTTPTypes
import NIOCore

/// What one run of the pipeline carries from stage to stage and from attempt to attempt.
struct PipelineRun {
    /// When the run started. (Instants are `NIODeadline`s: see `NIODeadline+Duration.swift`.)
    let start: NIODeadline
    let startDate = Date()
    /// Whether the first build has read the run's settings and started its timer.
    var prepared = false
    /// When the total timeout expires: it spans every attempt.
    var deadline: NIODeadline?
    /// The total timeout, when there is one.
    var total: Duration?
    /// When the latest attempt's response head arrived.
    var firstByte: NIODeadline?
    /// Redirects followed, over all attempts.
    var redirectCount = 0
    /// The latest attempt's response body count.
    var counter = BodyCounter()
    /// The interceptors, redirect handler and credential in effect, read once when the run starts; `nil`
    /// when there are none.
    var extensions: PipelineExtensions?
    /// Whether the session's cookie jar is used: the session has one and the draft does not opt out.
    var handlesCookies = false
    /// Where the latest exchange's response came from, when the session has a cache.
    var cacheStatus = ResponseCacheStatus.network

    init(start: NIODeadline) {
        self.start = start
    }
}

/// What the session and the request plug into the stages. A class, made only for a request that uses one:
/// the pipeline's async frames stay small, and a plain request allocates nothing for it (the task allocator
/// takes a new slab from malloc when the frames outgrow the first).
final class PipelineExtensions {
    /// The session's interceptor, then the request's own.
    let sessionInterceptor: (any RequestInterceptor)?
    let requestInterceptor: (any RequestInterceptor)?
    /// The redirect handler in effect: the request's, else the session's.
    let redirectHandler: (any RedirectHandler)?
    /// The credential that answers `401` challenges.
    let credential: Credential?
    /// The challenges answered in the current attempt.
    var challenges: ChallengeAnswerer?

    /// The extensions, or `nil` when there are none. (Not a failable initializer: a class's allocates
    /// before it can fail.)
    static func make(
        sessionInterceptor: (any RequestInterceptor)?,
        requestInterceptor: (any RequestInterceptor)?,
        redirectHandler: (any RedirectHandler)?,
        credential: Credential?
    ) -> PipelineExtensions? {
        guard sessionInterceptor != nil || requestInterceptor != nil || redirectHandler != nil || credential != nil
        else { return nil }
        return PipelineExtensions(
            sessionInterceptor: sessionInterceptor,
            requestInterceptor: requestInterceptor,
            redirectHandler: redirectHandler,
            credential: credential
        )
    }

    private init(
        sessionInterceptor: (any RequestInterceptor)?,
        requestInterceptor: (any RequestInterceptor)?,
        redirectHandler: (any RedirectHandler)?,
        credential: Credential?
    ) {
        self.sessionInterceptor = sessionInterceptor
        self.requestInterceptor = requestInterceptor
        self.redirectHandler = redirectHandler
        self.credential = credential
    }

    var hasInterceptors: Bool { self.sessionInterceptor != nil || self.requestInterceptor != nil }
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
        var run = PipelineRun(start: .now())
        var outcome = RequestOutcome()
        self.context.telemetry?.requestStarted(self)
        attempts: while true {
            var body: TransportRequestBody?
            do throws(KiteError) {
                let head: HTTPRequest
                (head, body) = try self.prepareAttempt(run: &run)
                try await self.checkpoint()
                let adapted = try await self.adapt(head, run: run)
                self.recordSent(adapted, into: &outcome)
                let (response, finalHead) = try await self.send(adapted, body: body, run: &run)
                let received = self.beginReceiving(response, for: finalHead, into: &outcome, run: &run)
                try await self.sink.receive(received, into: &outcome, counter: &run.counter, for: self)
                try self.endReceiving(run)
                self.validate(&outcome)
            } catch {
                outcome.error = self.failure(error, run: run).carrying(outcome.response)
            }
            // Only a Bool crosses the suspension here: an error held across it would enlarge the async frame.
            if outcome.error != nil, let extensions = run.extensions, extensions.hasInterceptors,
                await self.retryDecision(body: body, outcome: &outcome, extensions: extensions)
            {
                outcome = RequestOutcome()
                continue attempts
            }
            break
        }
        self.completeRun(&outcome, run: run)
        await self.deliver(outcome)
    }

    // The synchronous steps of the pipeline are functions of their own, never inlined into it: what they
    // hold then lives on the thread's stack, not in the pipeline's async frame, which the task allocator
    // would otherwise take from malloc in slabs (measured: a 5,040-byte frame before).

    /// The attempt's head and body, made from the draft.
    @inline(never)
    private func prepareAttempt(run: inout PipelineRun) throws(KiteError) -> (HTTPRequest, TransportRequestBody?) {
        // The draft is not kept across a suspension: the async frames stay small. (Read in place, not
        // through `Result.get()`, which copies it.)
        switch self.draftResult {
        case .success(let draft):
            let head = try self.build(draft, run: &run)
            let body = try self.bodySource.makeBody(
                for: draft,
                sliced: !self.uploadLimiters.isEmpty,
                summary: self.summary
            ).map(self.observingUpload)
            return (head, body)
        case .failure(let error):
            throw error
        }
    }

    /// Records the head as it goes to the engine.
    @inline(never)
    private func recordSent(_ adapted: HTTPRequest, into outcome: inout RequestOutcome) {
        outcome.request = adapted
        let cURLHandler = self.machine.withLockedValue { machine in
            machine.record.sentRequest = adapted
            machine.enter(.send)
            return machine.record.cURLHandler.take()
        }
        if let cURLHandler { self.callCURLHandler(cURLHandler) }
    }

    /// Ends the run: the deliver stage begins (the total timeout no longer stops the request, its response
    /// is complete), progress streams finish and the outcome gets its metrics.
    @inline(never)
    private func completeRun(_ outcome: inout RequestOutcome, run: PipelineRun) {
        let end = NIODeadline.now()
        var latency: Duration?
        if let firstByte = run.firstByte {
            latency = run.start.duration(to: firstByte)
        }
        let (bytesSent, connection, progressStreams) = self.machine.withLockedValue {
            $0.enter(.deliver)
            return ($0.record.bytesSent, $0.record.connection, $0.record.progress.finish())
        }
        for stream in progressStreams { stream.finish() }
        if let connection { self.context.transport.connectionProbe?.unregister(connection) }
        outcome.metrics = ResponseMetrics(
            requestStartTime: run.startDate,
            latency: latency,
            requestDuration: run.start.duration(to: end),
            serializationDuration: .zero,
            bytesSent: bytesSent,
            bytesReceived: run.counter.received,
            redirectCount: run.redirectCount,
            connection: connection?.value,
            cacheStatus: run.cacheStatus
        )
    }

    /// The error a stage threw as the request reports it: the reason the request is being stopped wins
    /// (the engine may report a cancelled exchange otherwise), and both sides of the total-timeout race
    /// read the same.
    @inline(never)
    private func failure(_ error: KiteError, run: PipelineRun) -> KiteError {
        var failure = self.abortError ?? error
        if failure.timeout == .total, let total = run.total {
            failure = self.totalTimeoutError(total)
        }
        return failure.naming(self.summary)
    }
}
