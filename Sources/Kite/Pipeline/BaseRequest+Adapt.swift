import Foundation
import HTTPTypes

extension BaseRequest {
    /// Adapt: the session's interceptor, then the request's, change the head before each attempt. What an
    /// adapter throws ends the attempt with `requestAdaptationFailed` carrying it (retriers are asked next).
    /// A request without interceptors goes on without an async call.
    @inline(__always)
    func adapt(_ head: HTTPRequest, run: PipelineRun) async throws(KiteError) -> HTTPRequest {
        guard let extensions = run.extensions, extensions.hasInterceptors else { return head }
        return try await self.adapt(head, with: extensions)
    }

    private func adapt(_ head: HTTPRequest, with extensions: PipelineExtensions) async throws(KiteError) -> HTTPRequest
    {
        self.machine.withLockedValue { $0.enter(.adapt) }
        let state = RequestAdapterState(request: self)
        var adapted = head
        do {
            if let session = extensions.sessionInterceptor {
                adapted = try await session.adapt(adapted, using: state)
            }
            if let request = extensions.requestInterceptor {
                adapted = try await request.adapt(adapted, using: state)
            }
        } catch {
            let failure = KiteError(
                code: .requestAdaptationFailed,
                message: "the request adapter failed: \((error as? KiteError)?.message ?? "\(error)")",
                underlyingError: error
            )
            self.context.eventMonitor?.request(self, didFailToAdaptRequest: head, withError: failure)
            if let cURLHandler = self.machine.withLockedValue({ $0.record.cURLHandler.take() }) {
                self.callCURLHandler(cURLHandler)
            }
            throw failure
        }
        self.context.eventMonitor?.request(self, didAdaptInitialRequest: head, to: adapted)
        try await self.checkpoint()
        return adapted
    }
}
