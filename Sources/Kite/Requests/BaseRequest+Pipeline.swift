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
        var counter = BodyCounter()
        var redirectCount = 0
        var totalTimer: Task<Void, Never>?
        var totalTimeoutError: KiteError?

        do throws(KiteError) {
            let draft = try self.draftResult.get()
            var head = try draft.makeHTTPRequest()
            head.headerFields = self.session.headerFields(for: head.headerFields)
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

            let body = try self.makeRequestBody(for: draft).map(self.observingUpload)
            var (response, finalHead) = try await self.send(
                head,
                body: body,
                deadline: deadline,
                redirectCount: &redirectCount
            )
            firstByte = clock.now
            outcome.response = response.head
            if case .enabled(let maximumRatio, let ratioCheckedAfter) = self.session.configuration.decompression,
                let format = BodyDecoder.format(of: response.head, method: finalHead.method)
            {
                response.body = BodyDecoder.decoding(
                    response.body,
                    format: format,
                    maximumRatio: maximumRatio,
                    ratioCheckedAfter: ratioCheckedAfter
                )
            }
            // Without redirects the draft's URL answered (rebuilt only when it carries credentials,
            // a fragment or a base URL, which the request line does not).
            let draftURL = draft.url
            outcome.url =
                redirectCount == 0 && draftURL.baseURL == nil && draftURL.user == nil && draftURL.fragment == nil
                ? draftURL : Redirect.url(of: finalHead)

            counter.total = BodyCounter.expectedLength(of: response.head, method: finalHead.method)
            counter.limiters = self.downloadLimiters
            try await self.receiveBody(response, into: &outcome, counter: &counter)
            if self.downloadReporter.hasObservers {
                let done = counter.startOffset + counter.received
                self.downloadReporter.report(completed: done, total: max(done, counter.total ?? done))
            }
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
        self.uploadReporter.finish()
        self.downloadReporter.finish()

        let end = clock.now
        outcome.metrics = ResponseMetrics(
            requestStartTime: startDate,
            latency: firstByte.map { start.duration(to: $0) },
            requestDuration: start.duration(to: end),
            serializationDuration: .zero,
            bytesSent: self.storage.withLockedValue { $0.bytesSent },
            bytesReceived: counter.received,
            redirectCount: redirectCount
        )
        await self.finishPipeline(with: outcome)
    }

    /// The request body for `draft`; upload requests override this to stream their source.
    /// Sends `head` and follows redirects: the response that is not a redirect (or the redirect
    /// itself when following is off) and the request that got it.
    private func send(
        _ head: HTTPRequest,
        body: TransportRequestBody?,
        deadline: ContinuousClock.Instant?,
        redirectCount: inout Int
    ) async throws(KiteError) -> (TransportResponse, HTTPRequest) {
        let maximum = self.session.configuration.maximumRedirects
        var current = head
        var currentBody = body
        // The URLs requested so far, to detect cycles; made at the first redirect.
        var visited: Set<String> = []
        while true {
            let response = try await self.session.transport.send(
                TransportRequest(head: current, body: currentBody, deadline: deadline)
            )
            if case .bytes(let buffer) = currentBody {
                self.countUpload(Int64(buffer.readableBytes), total: Int64(buffer.readableBytes))
            }
            guard maximum > 0, let redirect = Redirect(following: response.head, to: current) else {
                return (response, current)
            }
            if visited.isEmpty {
                visited.insert(Redirect.url(of: head)?.absoluteString ?? "")
            }
            redirectCount += 1
            if redirectCount > maximum {
                throw KiteError(
                    code: .tooManyRedirects,
                    message: "the server redirected more than \(maximum) times",
                    response: response.head
                )
            }
            if !visited.insert(redirect.url.absoluteString).inserted {
                throw KiteError(
                    code: .tooManyRedirects,
                    message: "the server's redirects form a cycle at \(RequestSummary(redirect.head).url)",
                    response: response.head
                )
            }
            if redirect.keepsBody, let currentBody, !currentBody.isReplayable {
                throw KiteError(
                    code: .bodyNotReplayable,
                    message:
                        "the server redirected with status \(response.head.status.code), which needs the body again, "
                        + "but the upload stream cannot be sent twice; upload Data or a file to allow that",
                    response: response.head
                )
            }
            await Self.discard(response.body)
            current = redirect.head
            currentBody = redirect.keepsBody ? currentBody : nil
        }
    }

    /// Reads and drops a redirect's body so its connection can be reused; a long one is abandoned.
    private static func discard(_ body: ByteChunks) async {
        var iterator = body.makeAsyncIterator()
        var discarded = 0
        while discarded < 64 * 1024, let chunk = try? await iterator.next() {
            discarded += chunk.readableBytes
        }
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
    private func finishPipeline(with pipelineOutcome: RequestOutcome) async {
        var outcome = pipelineOutcome
        var finalized = false
        while true {
            let (pending, handlers) = self.storage.withLockedValue {
                storage -> (SmallList<StoredValidator>, SmallList<StoredHandler>?) in
                if storage.evaluatedValidators < storage.validators.count {
                    let pending = storage.validators.suffix(from: storage.evaluatedValidators)
                    storage.evaluatedValidators = storage.validators.count
                    return (pending, nil)
                }
                if storage.machine.state == .cancelled, outcome.error == nil {
                    outcome.error = storage.abortError ?? self.cancellationError
                }
                guard finalized else { return ([], nil) }
                return ([], storage.machine.finish(with: outcome))
            }
            if let handlers {
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
                    outcome.error = error.naming(self.summary).carrying(outcome.response)
                    break
                }
            }
        }
    }
}
