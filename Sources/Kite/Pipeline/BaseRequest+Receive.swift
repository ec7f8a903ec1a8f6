import Foundation
import HTTPTypes

extension BaseRequest {
    /// Receive: decodes a compressed body, records the URL that answered and reads the body into the
    /// outcome (each kind of request reads it its own way, in ``receiveBody(_:into:counter:)``).
    func receive(
        _ transportResponse: TransportResponse,
        for finalHead: HTTPRequest,
        draft: RequestDraft,
        into outcome: inout RequestOutcome,
        run: inout PipelineRun
    ) async throws(KiteError) {
        var response = transportResponse
        run.firstByte = run.clock.now
        self.storage.withLockedValue { $0.machine.enter(.receive) }
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
            run.redirectCount == 0 && draftURL.baseURL == nil && draftURL.user == nil && draftURL.fragment == nil
            ? draftURL : Redirect.url(of: finalHead)

        run.counter = BodyCounter()
        run.counter.total = BodyCounter.expectedLength(of: response.head, method: finalHead.method)
        run.counter.limiters = self.downloadLimiters
        try await self.receiveBody(response, into: &outcome, counter: &run.counter)
        if self.downloadReporter.hasObservers {
            let done = run.counter.startOffset + run.counter.received
            self.downloadReporter.report(completed: done, total: max(done, run.counter.total ?? done))
        }
        if let abort = self.abortError {
            // The engine may end a cancelled body quietly: never deliver it as complete.
            throw abort
        }
    }
}
