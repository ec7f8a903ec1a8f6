import Foundation
import HTTPTypes
import NIOCore

extension BaseRequest {
    /// Receive, before the body: decodes a compressed body, records the URL that answered and sets up the
    /// body count. Then ``receiveBody(_:into:counter:)`` reads the body (each kind of request its own way)
    /// and ``endReceiving(_:)`` closes the stage.
    ///
    /// The stage's two halves are synchronous so the body is read one async call from the pipeline, as
    /// shallow as before: a deeper async stack makes the task allocator take another slab from malloc.
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
}
