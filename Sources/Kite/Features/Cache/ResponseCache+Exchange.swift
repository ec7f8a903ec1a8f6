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

    /// A stored response as the pipeline's answer, with its `Age`; `nil` (and the entry removed) when its body
    /// is gone.
    func serve(_ entry: CachedResponse, age: Double, status: ResponseCacheStatus) async -> CachedExchange? {
        guard let body = await self.store.body(of: entry) else {
            await self.store.remove(entry)
            return nil
        }
        var head = entry.response
        head.headerFields[.age] = String(Self.seconds(age))
        var ttl: Int?
        // Only the Cache-Status field reads it: a hit does not parse the stored head once more otherwise.
        if self.addsCacheStatusField {
            let remaining = CacheRules.freshnessLifetime(of: entry.info, shared: self.isShared) - age
            ttl = remaining.isFinite ? Int(max(min(remaining, 2_147_483_648), -2_147_483_648)) : nil
        }
        return CachedExchange(
            response: TransportResponse(head: head, body: body),
            status: status,
            networkHead: nil,
            ttl: ttl
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
}

extension HTTPField.Name {
    /// `Pragma` (RFC 9111 §5.4), which swift-http-types does not name.
    static let pragma = HTTPField.Name("Pragma")!
    /// `Cache-Status` (RFC 9211).
    static let cacheStatus = HTTPField.Name("Cache-Status")!
}
