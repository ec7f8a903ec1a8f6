import Foundation
import HTTPTypes
import HTTPTypesFoundation
import NIOConcurrencyHelpers
import NIOCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension ResponseCache {
    /// Sends `request` and stores the response as it streams (when it may be stored).
    nonisolated(nonsending) func fetch(
        _ request: TransportRequest,
        key: String,
        options: Options,
        transport: any Transport,
        varyOn: HTTPRequest? = nil,
        flight: FetchCoalescer.Flight? = nil
    ) async throws(KiteError) -> CachedExchange {
        let requestTime = Date()
        let response: TransportResponse
        do {
            response = try await transport.send(request)
        } catch {
            flight?.finish(stored: false)
            throw error
        }
        return await self.storing(
            response,
            for: varyOn ?? request.head,
            key: key,
            requestTime: requestTime,
            options: options,
            flight: flight
        )
    }

    /// `response`, its body written into the cache as the caller reads it when RFC 9111 and the handler allow.
    func storing(
        _ response: TransportResponse,
        for head: HTTPRequest,
        key: String,
        requestTime: Date,
        options: Options,
        flight: FetchCoalescer.Flight? = nil
    ) async -> CachedExchange {
        let network = CachedExchange(response: response, status: .network, networkHead: response.head)
        guard CacheRules.mayStore(response.head, for: head, shared: self.isShared) else {
            flight?.finish(stored: false)
            return network
        }
        var entry = CachedResponse(
            key: key,
            response: CacheRules.storedHead(response.head, shared: self.isShared),
            requestMethod: head.method,
            varyingRequestFields: CacheRules.varyingRequestFields(of: head, for: response.head),
            requestTime: requestTime,
            responseTime: Date()
        )
        if let willStore = options.willStore {
            guard let chosen = await willStore(entry) else {
                flight?.finish(stored: false)
                return network
            }
            // The handler may change the head, never the entry's identity.
            entry.response = chosen.response
            entry.requestTime = chosen.requestTime
            entry.responseTime = chosen.responseTime
        }
        let expected = BodyCounter.expectedLength(of: response.head, method: head.method)
        if let expected, expected > self.maximumEntrySize {
            flight?.finish(stored: false)
            return network
        }
        guard let writer = await self.store.makeWriter(for: entry) else {
            flight?.finish(stored: false)
            return network
        }
        var teed = response
        let stored = entry
        teed.body = Self.tee(
            response.body,
            into: CacheFill(writer: writer, expected: expected, limit: self.maximumEntrySize, flight: flight) {
                [store = self.store, didStore = options.didStore] in
                didStore?()
                // The new entry replaces the variants it matches.
                for old in await store.responses(forKey: key)
                where old.id != stored.id && old.varyingRequestFields == stored.varyingRequestFields {
                    await store.remove(old)
                }
            }
        )
        return CachedExchange(response: teed, status: .network, networkHead: response.head)
    }

    /// `body` with every chunk also written into `fill`, which commits when the body ends whole.
    static func tee(_ body: ByteChunks, into fill: CacheFill) -> ByteChunks {
        ByteChunks(makeNext: {
            var iterator = body.makeAsyncIterator()
            return { () async throws -> ByteBuffer? in
                let chunk: ByteBuffer?
                do {
                    chunk = try await iterator.next()
                } catch {
                    await fill.abort()
                    throw error
                }
                if let chunk {
                    await fill.write(chunk)
                } else {
                    await fill.finish()
                }
                return chunk
            }
        })
    }
}

/// One response's way into the cache: its chunks go to the store's writer, and the entry is committed only when
/// the body ended whole (its `Content-Length` when it had one) within the entry limit. A body the caller stopped
/// reading, or that broke off, is never stored.
final class CacheFill: Sendable {
    private struct State {
        var written: Int64 = 0
        var done = false
    }

    private let writer: any CacheStoreWriter
    private let expected: Int64?
    private let limit: Int64
    private let flight: FetchCoalescer.Flight?
    private let committed: @Sendable () async -> Void
    private let state = NIOLockedValueBox(State())

    init(
        writer: any CacheStoreWriter,
        expected: Int64?,
        limit: Int64,
        flight: FetchCoalescer.Flight?,
        committed: @escaping @Sendable () async -> Void
    ) {
        self.writer = writer
        self.expected = expected
        self.limit = limit
        self.flight = flight
        self.committed = committed
    }

    func write(_ chunk: ByteBuffer) async {
        let (done, tooLarge) = self.state.withLockedValue { state in
            state.written += Int64(chunk.readableBytes)
            return (state.done, state.written > self.limit)
        }
        if done { return }
        if tooLarge {
            await self.abort()
            return
        }
        do {
            try await self.writer.write(chunk)
        } catch {
            await self.abort()
        }
    }

    func finish() async {
        let (first, written) = self.state.withLockedValue { state in
            defer { state.done = true }
            return (!state.done, state.written)
        }
        guard first else { return }
        guard self.expected == nil || self.expected == written else {
            await self.writer.abort()
            self.flight?.finish(stored: false)
            return
        }
        do {
            try await self.writer.commit(length: written)
            await self.committed()
            self.flight?.finish(stored: true)
        } catch {
            self.flight?.finish(stored: false)
        }
    }

    func abort() async {
        let first = self.state.withLockedValue { state in
            defer { state.done = true }
            return !state.done
        }
        guard first else { return }
        await self.writer.abort()
        self.flight?.finish(stored: false)
    }

    deinit {
        // The caller stopped reading before the end: nothing is stored.
        let unfinished = self.state.withLockedValue { !$0.done }
        if unfinished {
            let writer = self.writer
            Task { await writer.abort() }
            self.flight?.finish(stored: false)
        }
    }
}
