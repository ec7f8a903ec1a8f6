import Foundation
import HTTPTypes
import HTTPTypesFoundation
import NIOConcurrencyHelpers
import NIOCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What the cache stage returns for one exchange.
struct CachedExchange: Sendable {
    /// The response the pipeline goes on with.
    var response: TransportResponse
    /// Where it came from.
    var status: ResponseCacheStatus
    /// The head that came off the network in this exchange (a `304` too), whose cookies the jar takes; `nil`
    /// when the server was not contacted.
    var networkHead: HTTPResponse?
    /// A stored response's remaining freshness in seconds (negative when stale), for `Cache-Status`.
    var ttl: Int? = nil
    /// Why the request went to the server (RFC 9211's `fwd`: `miss`, `vary-miss`, `method`, `bypass`, `request`,
    /// `stale`); `nil` when it did not.
    var forward: String? = "miss"
}

extension ResponseCache {
    /// What a request brings to the cache stage.
    struct Options: Sendable {
        var policy: URLRequest.CachePolicy
        /// Asked before a response is stored (the request's ``CachedResponseHandler``); `nil` stores it.
        var willStore: (@Sendable (CachedResponse) async -> CachedResponse?)?
        /// Told when a response was stored (for metrics).
        var didStore: (@Sendable () -> Void)? = nil
    }

    static let safeMethods: Set<HTTPRequest.Method> = [.get, .head, .options, .trace]

    /// The cache stage for one exchange: answers from the cache, revalidates, or sends `request` through
    /// `transport` and stores the response while it streams to the caller.
    nonisolated(nonsending) func exchange(
        _ request: TransportRequest,
        options: Options,
        transport: any Transport
    ) async throws(KiteError) -> CachedExchange {
        var exchange = try await self.answer(request, options: options, transport: transport)
        if self.addsCacheStatusField {
            exchange.response.head.headerFields.append(
                HTTPField(name: .cacheStatus, value: Self.cacheStatusValue(exchange))
            )
        }
        return exchange
    }

    /// The `Cache-Status` value (RFC 9211) for an exchange.
    static func cacheStatusValue(_ exchange: CachedExchange) -> String {
        switch exchange.status {
        case .network:
            guard let forward = exchange.forward else { return "Kite; detail=\"only-if-cached\"" }
            return "Kite; fwd=\(forward); fwd-status=\(exchange.response.head.status.code)"
        case .hit:
            return "Kite; hit; ttl=\(exchange.ttl ?? 0)"
        case .revalidated:
            return "Kite; fwd=stale; fwd-status=304"
        case .stale(.ifError, _):
            // Forwarded, the server failed, and the stale copy answered.
            return "Kite; fwd=stale; detail=\"ifError\""
        case .stale(let reason, _):
            return "Kite; hit; ttl=\(exchange.ttl ?? 0); detail=\"\(reason.rawValue)\""
        }
    }

    nonisolated(nonsending) private func answer(
        _ request: TransportRequest,
        options: Options,
        transport: any Transport
    ) async throws(KiteError) -> CachedExchange {
        let head = request.head
        guard let key = Self.key(for: head) else {
            return try await Self.network(request, transport: transport, forward: "bypass")
        }
        if !Self.safeMethods.contains(head.method) {
            let exchange = try await Self.network(request, transport: transport, forward: "method")
            if let url = head.url {
                for invalid in CacheRules.invalidatedURLs(
                    request: head,
                    response: exchange.response.head,
                    requestURL: url
                ) {
                    if let invalidKey = Self.key(for: invalid) { await self.store.removeResponses(forKey: invalidKey) }
                }
            }
            return exchange
        }
        if head.method == .head, !Self.isConditional(head) {
            let exchange = try await Self.network(request, transport: transport, forward: "method")
            await self.freshen(key: key, request: head, with: exchange.response.head)
            return exchange
        }
        // Only a plain GET is answered and stored: a caller's own conditional or range request goes to the
        // server as it is, and its answer to the caller.
        guard head.method == .get, request.body == nil, !Self.isConditional(head) else {
            return try await Self.network(request, transport: transport, forward: "bypass")
        }
        switch options.policy {
        case .reloadIgnoringLocalCacheData:
            var exchange = try await self.fetch(request, key: key, options: options, transport: transport)
            exchange.forward = "request"
            return exchange
        case .reloadIgnoringLocalAndRemoteCacheData:
            var reload = request
            // The request's own directives stay; no-cache is added to them.
            let own = reload.head.headerFields[values: .cacheControl]
            reload.head.headerFields[.cacheControl] = (own + ["no-cache"]).joined(separator: ", ")
            reload.head.headerFields[.pragma] = "no-cache"
            var exchange = try await self.fetch(reload, key: key, options: options, transport: transport, varyOn: head)
            exchange.forward = "request"
            return exchange
        default:
            return try await self.lookUp(request, key: key, options: options, transport: transport)
        }
    }

    /// Serves, revalidates or fetches by the stored variants of `key`; at most one request per key goes to the
    /// server at a time, the others wait for it and read what it stored.
    nonisolated(nonsending) private func lookUp(
        _ request: TransportRequest,
        key: String,
        options: Options,
        transport: any Transport
    ) async throws(KiteError) -> CachedExchange {
        let head = request.head
        let directives = CacheControl(head.headerFields)
        var coalesce = options.policy == .useProtocolCachePolicy || options.policy == .returnCacheDataElseLoad
        while true {
            let now = Date()
            // A stored 401 never answers a request that brings credentials: it would answer the challenge's
            // second hop with the same challenge.
            let answersCredentials = head.headerFields[.authorization] != nil
            let stored = await self.store.responses(forKey: key)
            let variants = stored.filter {
                CacheRules.matchesVariant($0.info, request: head)
                    && !(answersCredentials && $0.response.status.code == 401)
            }
            let forward = stored.isEmpty ? "miss" : "vary-miss"
            if let newest = variants.max(by: { $0.responseTime < $1.responseTime }) {
                let age = CacheRules.currentAge(of: newest.info, now: now)
                let lifetime = CacheRules.freshnessLifetime(of: newest.info, shared: self.isShared)
                var revalidate = false
                switch options.policy {
                case .returnCacheDataElseLoad, .returnCacheDataDontLoad:
                    let status: ResponseCacheStatus =
                        age < lifetime
                        ? .hit(age: Self.seconds(age)) : .stale(reason: .offlinePolicy, age: Self.seconds(age))
                    if let served = await self.serve(newest, age: age, status: status) { return served }
                case .reloadRevalidatingCacheData:
                    revalidate = true
                default:
                    switch CacheRules.reuse(of: newest.info, for: head, now: now, shared: self.isShared) {
                    case .fresh:
                        if let served = await self.serve(newest, age: age, status: .hit(age: Self.seconds(age))) {
                            return served
                        }
                    case .stale(.maxStale):
                        let status = ResponseCacheStatus.stale(reason: .maxStale, age: Self.seconds(age))
                        if let served = await self.serve(newest, age: age, status: status) { return served }
                    case .stale(.whileRevalidate):
                        let status = ResponseCacheStatus.stale(reason: .whileRevalidating, age: Self.seconds(age))
                        if let served = await self.serve(newest, age: age, status: status) {
                            self.revalidateInBackground(
                                request,
                                key: key,
                                variants: variants,
                                options: options,
                                transport: transport
                            )
                            return served
                        }
                    case .mustValidate:
                        revalidate = true
                    }
                }
                if revalidate {
                    if directives.onlyIfCached { return Self.gatewayTimeout() }
                    guard case .fetch(let flight) = await self.turn(for: key, coalesce: &coalesce) else { continue }
                    return try await self.revalidate(
                        request,
                        key: key,
                        variants: variants,
                        newest: newest,
                        options: options,
                        transport: transport,
                        flight: flight
                    )
                }
                // The stored body was gone: a miss.
                continue
            }
            if options.policy == .returnCacheDataDontLoad {
                throw KiteError(
                    code: .cacheMiss,
                    message: "the cache policy returnCacheDataDontLoad allows only a stored response, and none is "
                        + "stored for this request"
                )
            }
            if directives.onlyIfCached { return Self.gatewayTimeout() }
            guard case .fetch(let flight) = await self.turn(for: key, coalesce: &coalesce) else { continue }
            var exchange = try await self.fetch(
                request,
                key: key,
                options: options,
                transport: transport,
                flight: flight
            )
            exchange.forward = forward
            return exchange
        }
    }

    /// What a request that must go to the server does: fetch now (leading the fetch of `key` when requests are
    /// coalesced), or read the cache again because another request's fetch of `key` just ended.
    private enum Turn {
        case fetch(FetchCoalescer.Flight?)
        case readAgain
    }

    /// Whose turn it is to fetch `key`. A request waits at most once (`coalesce` turns off): after another request
    /// fetched or revalidated the resource it reads the cache again, then goes to the server itself, so a resource
    /// that is always revalidated is not fetched one request at a time.
    nonisolated(nonsending) private func turn(for key: String, coalesce: inout Bool) async -> Turn {
        guard coalesce else { return .fetch(nil) }
        switch await self.flights.join(key) {
        case .lead(let flight):
            return .fetch(flight)
        case .followed:
            coalesce = false
            return .readAgain
        }
    }

    /// Sends a conditional request for the stored `variants`: a `304` serves the stored body with the updated
    /// head; a server error or a failed exchange serves the stale copy when `stale-if-error` allows it.
    nonisolated(nonsending) private func revalidate(
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
            await Self.drain(response.body)
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
            await Self.drain(response.body)
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
    private func freshen(key: String, request: HTTPRequest, with response: HTTPResponse) async {
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
    private func staleIfError(_ stored: CachedResponse, request: HTTPRequest) async -> CachedExchange? {
        let now = Date()
        guard CacheRules.staleIfErrorAllows(stored.info, request: request, now: now, shared: self.isShared) else {
            return nil
        }
        let age = CacheRules.currentAge(of: stored.info, now: now)
        return await self.serve(stored, age: age, status: .stale(reason: .ifError, age: Self.seconds(age)))
    }

    /// `stale-while-revalidate`: revalidates `key` once in the background while stale copies are served.
    private func revalidateInBackground(
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
                await Self.drain(exchange.response.body, limit: .max)
            } catch {
                // The stale copy was served; the next request tries again.
            }
        }
    }

    /// Sends `request` and stores the response as it streams (when it may be stored).
    nonisolated(nonsending) private func fetch(
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
    private func storing(
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

    /// A stored response as the pipeline's answer, with its `Age`; `nil` (and the entry removed) when its body
    /// is gone.
    private func serve(_ entry: CachedResponse, age: Double, status: ResponseCacheStatus) async -> CachedExchange? {
        guard let body = await self.store.body(of: entry) else {
            await self.store.remove(entry)
            return nil
        }
        var head = entry.response
        head.headerFields[.age] = String(Self.seconds(age))
        let lifetime = CacheRules.freshnessLifetime(of: entry.info, shared: self.isShared)
        let remaining = lifetime - age
        return CachedExchange(
            response: TransportResponse(head: head, body: body),
            status: status,
            networkHead: nil,
            ttl: remaining.isFinite ? Int(max(min(remaining, 2_147_483_648), -2_147_483_648)) : nil
        )
    }

    /// Whole seconds of `age`, within RFC 9111's largest delta-seconds.
    static func seconds(_ age: Double) -> Int {
        guard age.isFinite, age > 0 else { return 0 }
        return Int(min(age, 2_147_483_648))
    }

    /// RFC 9111 §5.2.1.7: `only-if-cached` with nothing usable stored is answered with a `504`.
    static func gatewayTimeout() -> CachedExchange {
        CachedExchange(
            response: TransportResponse(
                head: HTTPResponse(status: .gatewayTimeout, headerFields: [.contentLength: "0"]),
                body: ByteChunks(chunks: [])
            ),
            status: .network,
            networkHead: nil,
            forward: nil
        )
    }

    nonisolated(nonsending) static func network(
        _ request: TransportRequest,
        transport: any Transport,
        forward: String
    ) async throws(KiteError) -> CachedExchange {
        let response = try await transport.send(request)
        return CachedExchange(response: response, status: .network, networkHead: response.head, forward: forward)
    }

    /// Whether the caller made the request conditional or partial itself.
    static func isConditional(_ head: HTTPRequest) -> Bool {
        let fields = head.headerFields
        return fields[.ifNoneMatch] != nil || fields[.ifModifiedSince] != nil || fields[.ifMatch] != nil
            || fields[.ifUnmodifiedSince] != nil || fields[.ifRange] != nil || fields[.range] != nil
    }

    /// Reads and drops a body (a `304`'s, an error's), so its connection can be reused.
    static func drain(_ body: ByteChunks, limit: Int = 64 * 1024) async {
        var iterator = body.makeAsyncIterator()
        var drained = 0
        while drained < limit, let chunk = try? await iterator.next() {
            drained += chunk.readableBytes
        }
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

extension HTTPField.Name {
    /// `Pragma` (RFC 9111 §5.4), which swift-http-types does not name.
    static let pragma = HTTPField.Name("Pragma")!
    /// `Cache-Status` (RFC 9211).
    static let cacheStatus = HTTPField.Name("Cache-Status")!
}
