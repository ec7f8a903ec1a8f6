import Foundation
import HTTPTypes
import NIOCore

extension BaseRequest {
    /// Receive, before the body: decodes a compressed body, records the URL that answered and sets up the
    /// body count. Then the request's ``ResponseSink`` reads the body (each kind of request its own way)
    /// and ``endReceiving(_:)`` closes the stage.
    ///
    /// The stage's two halves are synchronous so the body is read one async call from the pipeline, as
    /// shallow as before: a deeper async stack makes the task allocator take another slab from malloc.
    @inline(never)
    func beginReceiving(
        _ transportResponse: TransportResponse,
        for finalHead: HTTPRequest,
        into outcome: inout RequestOutcome,
        run: inout PipelineRun
    ) -> TransportResponse {
        var response = transportResponse
        run.firstByte = .now()
        self.machine.withLockedValue { $0.enter(.receive) }
        outcome.response = response.head
        if let (maximumRatio, ratioCheckedAfter) = self.context.decompression,
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
        if run.redirectCount == 0, case .success(let draft) = self.draftResult, draft.url.baseURL == nil,
            draft.url.user == nil, draft.url.fragment == nil
        {
            outcome.url = draft.url
        } else {
            outcome.url = Redirect.url(of: finalHead)
        }
        run.counter = BodyCounter()
        run.counter.total = BodyCounter.expectedLength(of: response.head, method: finalHead.method)
        run.counter.limiters = self.downloadLimiters
        return response
    }

    /// Receive, after the body: the last progress report, and a stopped request is never delivered as complete.
    @inline(never)
    func endReceiving(_ run: PipelineRun) throws(KiteError) {
        if self.downloadReporter.hasObservers {
            let done = run.counter.startOffset + run.counter.received
            self.downloadReporter.report(completed: done, total: max(done, run.counter.total ?? done))
        }
        if let abort = self.abortError {
            // The engine may end a cancelled body quietly.
            throw abort
        }
    }

    /// The data request's response size limit: its own, else the session's.
    @inline(never)
    var responseSizeLimit: Int64? {
        self.machine.withLockedValue { $0.record.maximumResponseSize } ?? self.context.maximumResponseSize
    }

    /// The next response body chunk, after waiting out a suspension and the download rate limits;
    /// counts it and reports download progress. Engine errors arrive as ``KiteError``.
    nonisolated(nonsending) func nextChunk(
        _ iterator: inout ByteChunks.AsyncIterator,
        counter: inout BodyCounter
    ) async throws(KiteError) -> ByteBuffer? {
        try await self.checkpoint()
        let chunk: ByteBuffer?
        do {
            chunk = try await iterator.next()
        } catch let error as KiteError {
            throw error
        } catch {
            throw KiteError(code: .connectionLost, message: "reading the response failed", underlyingError: error)
        }
        guard let chunk else { return nil }
        counter.received += Int64(chunk.readableBytes)
        if !counter.limiters.isEmpty {
            do {
                try await counter.limiters.acquire(chunk.readableBytes)
            } catch {
                throw self.abortError ?? self.cancellationError
            }
        }
        if let monitor = self.context.eventMonitor {
            if let progress = self.downloadReporter.report(
                completed: counter.startOffset + counter.received,
                total: counter.total
            ) {
                monitor.request(self, didUpdateDownloadProgress: progress)
            }
        } else if self.downloadReporter.hasObservers {
            self.downloadReporter.report(completed: counter.startOffset + counter.received, total: counter.total)
        }
        return chunk
    }
}
