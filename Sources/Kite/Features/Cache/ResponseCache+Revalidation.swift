import Foundation
import HTTPTypes
import HTTPTypesFoundation
import NIOConcurrencyHelpers
import NIOCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension ResponseCache {
    /// Sends a conditional request for the stored `variants`: a `304` serves the stored body with the updated
    /// head; a server error or a failed exchange serves the stale copy when `stale-if-error` allows it.
    nonisolated(nonsending) func revalidate(
        _ request: TransportRequest,
        key: String,
        variants: [CachedResponse],
        newest: CachedResponse,
        options: Options,
        transport: any Transport,
        flight: FetchCoalescer.Flight? = nil
    ) async throws(KiteError) -> CachedExchange {
        var conditional = request
        for field in CacheRules.conditionalFields(for: variants.map(\.info)) {
            conditional.head.headerFields[field.name] = field.value
        }
        let requestTime = Date()
        let response: TransportResponse
        do {
            response = try await transport.send(conditional)
        } catch {
            // RFC 5861 §4: an error is a failure to reach the server, not the caller's cancellation.
            if error.code != .cancelled, let stale = await self.staleIfError(newest, request: request.head) {
                return stale
            }
            throw error
        }
        let code = response.head.status.code
        if code == 304 {
            await response.body.discard()
            let responseTime = Date()
            let updated = CacheRules.selectForUpdate(variants.map(\.info), notModified: response.head)
            var served: CachedResponse?
            for index in updated where variants.indices.contains(index) {
                var entry = variants[index]
                entry.response = CacheRules.storedHead(
                    CacheRules.updatedHead(entry.response, with: response.head),
                    shared: self.isShared
                )
                entry.requestTime = requestTime
                entry.responseTime = responseTime
                await self.store.update(entry)
                if served == nil || entry.id == newest.id { served = entry }
            }
            flight?.finish(stored: served != nil)
            if let served {
                let age = CacheRules.currentAge(of: served.info, now: Date())
                if var exchange = await self.serve(served, age: age, status: .revalidated) {
                    exchange.networkHead = response.head
                    return exchange
                }
            }
            // The 304 matched nothing stored (or the body is gone): ask again without conditions (§4.3.3).
            return try await self.fetch(request, key: key, options: options, transport: transport)
        }
        // RFC 5861 §4: "an error is any situation that would result in a 500, 502, 503, or 504 HTTP response".
        if [500, 502, 503, 504].contains(code), let stale = await self.staleIfError(newest, request: request.head) {
            await response.body.discard()
            return stale
        }
        var exchange = await self.storing(
            response,
            for: request.head,
            key: key,
            requestTime: requestTime,
            options: options,
            flight: flight
        )
        exchange.forward = "stale"
        return exchange
    }

    /// RFC 9111 §4.3.5: a `200` to a `HEAD` updates the stored `GET` responses its validators select, or removes
    /// them when its `Content-Length` says the body changed.
    func freshen(key: String, request: HTTPRequest, with response: HTTPResponse) async {
        guard response.status.code == 200 else { return }
        let variants = await self.store.responses(forKey: key).filter {
            CacheRules.matchesVariant($0.info, request: request)
        }
        guard !variants.isEmpty else { return }
        let length = response.headerFields[.contentLength].flatMap { Int64($0) }
        for index in CacheRules.selectForUpdate(variants.map(\.info), notModified: response)
        where variants.indices.contains(index) {
            var entry = variants[index]
            if let length, let stored = entry.bodyLength, length != stored {
                await self.store.remove(entry)
                continue
            }
            entry.response = CacheRules.storedHead(
                CacheRules.updatedHead(entry.response, with: response),
                shared: self.isShared
            )
            entry.responseTime = Date()
            await self.store.update(entry)
        }
    }

    /// The stale copy as the answer, when `stale-if-error` allows it.
    func staleIfError(_ stored: CachedResponse, request: HTTPRequest) async -> CachedExchange? {
        let now = Date()
        guard CacheRules.staleIfErrorAllows(stored.info, request: request, now: now, shared: self.isShared) else {
            return nil
        }
        let age = CacheRules.currentAge(of: stored.info, now: now)
        return await self.serve(stored, age: age, status: .stale(reason: .ifError, age: Self.seconds(age)))
    }

    /// `stale-while-revalidate`: revalidates `key` once in the background while stale copies are served.
    func revalidateInBackground(
        _ request: TransportRequest,
        key: String,
        variants: [CachedResponse],
        options: Options,
        transport: any Transport
    ) {
        let started = self.backgroundRevalidations.withLockedValue { $0.insert(key).inserted }
        guard started, let newest = variants.max(by: { $0.responseTime < $1.responseTime }) else { return }
        var background = request
        background.events = nil
        Task {
            defer { _ = self.backgroundRevalidations.withLockedValue { $0.remove(key) } }
            do throws(KiteError) {
                let exchange = try await self.revalidate(
                    background,
                    key: key,
                    variants: variants,
                    newest: newest,
                    options: options,
                    transport: transport
                )
                await exchange.response.body.discard(upTo: .max)
            } catch {
                // The stale copy was served; the next request tries again.
            }
        }
    }
}
