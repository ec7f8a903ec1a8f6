import Foundation
import HTTPTypes

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension BaseRequest {
    /// The cache stage, for each exchange of the send stage when the session has a ``ResponseCache``: the cache
    /// answers, revalidates, or lets the request through and stores the response as it streams. Returns the
    /// response and the head that came off the network (whose cookies the jar takes), `nil` when the server was
    /// not contacted.
    ///
    /// A stream request bypasses the cache (its body is live, not a document) unless it sets a policy itself
    /// (``BaseRequest/cachePolicy(_:)``, `URLRequest.cachePolicy`). A retry goes to the server (its response is
    /// stored as usual).
    nonisolated(nonsending) func exchange(
        _ request: TransportRequest,
        through cache: ResponseCache,
        run: inout PipelineRun
    ) async throws(KiteError) -> (TransportResponse, HTTPResponse?) {
        guard let options = self.cacheOptions() else {
            // A stream request with an unsafe method still removes the stored responses it changes.
            if !ResponseCache.safeMethods.contains(request.head.method) {
                let options = ResponseCache.Options(policy: .reloadIgnoringLocalCacheData, willStore: nil)
                let exchange = try await cache.exchange(request, options: options, transport: self.context.transport)
                return (exchange.response, exchange.networkHead)
            }
            let response = try await self.context.transport.send(request)
            return (response, response.head)
        }
        let exchange = try await cache.exchange(request, options: options, transport: self.context.transport)
        run.cacheStatus = exchange.status
        self.context.eventMonitor?.request(self, didUseCache: exchange.status)
        self.context.telemetry?.cacheUsed(self, status: exchange.status)
        return (exchange.response, exchange.networkHead)
    }

    /// The request's cache policy (its own, its URLRequest's, else the session's) and handler; `nil` for a stream
    /// request that did not ask for the cache.
    private func cacheOptions() -> ResponseCache.Options? {
        let (ownPolicy, ownHandler, retryCount) = self.machine.withLockedValue {
            ($0.record.cachePolicy, $0.record.cachedResponseHandler, $0.retryCount)
        }
        var policy = ownPolicy ?? self.context.requestCachePolicy
        if ownPolicy == nil {
            if case .success(let draft) = self.draftResult, let draftPolicy = draft.cachePolicy {
                policy = draftPolicy
            } else if self.sink is StreamSink {
                return nil
            }
        }
        // A retry asks the server again: a stored answer (a 503 with max-age, say) would only repeat the failure.
        if retryCount > 0, policy != .returnCacheDataDontLoad {
            policy = .reloadIgnoringLocalCacheData
        }
        var options = ResponseCache.Options(policy: policy, willStore: nil)
        if let handler = ownHandler ?? self.context.cachedResponseHandler {
            options.willStore = { [self] response in await handler.dataTask(self, willCacheResponse: response) }
        }
        if let telemetry = self.context.telemetry, telemetry.metricsFactory != nil {
            options.didStore = { [self] in telemetry.cacheStored(self) }
        }
        return options
    }
}
