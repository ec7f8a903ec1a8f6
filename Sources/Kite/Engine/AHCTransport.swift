import AsyncHTTPClient
import Foundation
import HTTPTypes
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL
import Tracing

/// The engine: async-http-client behind ``Transport``. The only file set that imports AsyncHTTPClient.
final class AHCTransport: Transport {
    /// The session's one connection pool (and one per proxy that tunnels), shared by every request kind: data
    /// requests read through AHC's async API, downloads and streams through its delegate API (``BatchedBody``).
    private let clients: EngineClients
    /// Where a stream's delegate runs (``ConnectionLoops``).
    private let connectionLoops: ConnectionLoops
    /// Watches streamed request bodies for answers that come before them (``UploadWatch``).
    let uploadWatches: UploadWatch.Registry
    /// Tells requests which connection served them, when the session collects connection metrics.
    let connectionProbe: ConnectionProbe?
    /// Runs the session's server trust evaluators, when it has a trust manager.
    private let trust: TrustGate?
    private let canShutDown: Bool
    /// What the session told the engine.
    let configuration: EngineConfiguration
    /// The session's default header fields as NIO headers, and their bytes as ``RequestHeadCheck`` counts them: most
    /// requests send exactly these, so they are converted and counted once.
    private let defaultHeaders: (headers: HTTPHeaders, fieldBytes: Int)

    /// The event loops every engine runs on.
    private static let eventLoopGroup = MultiThreadedEventLoopGroup.singleton

    init(configuration: EngineConfiguration, canShutDown: Bool) {
        var config = HTTPClient.Configuration()
        if let tls = configuration.tls { config.tlsConfiguration = tls }
        // Server trust: each host's decisions set the handshake's verification (per-request TLS configuration,
        // so such connections are pooled apart) and accept the server on the connection before a request is written.
        let trust = configuration.trust.map { TrustGate(decisions: $0) }
        self.trust = trust
        // The idle-read timeout is IdleReadHandler's, which does not count while a reader holds a body back.
        config.timeout = HTTPClient.Configuration.Timeout(connect: TimeAmount(configuration.connectTimeout), read: nil)
        let idleRead = configuration.idleReadTimeout.map { TimeAmount($0) }
        // The idle-write timeout: AHC's own write timeout does not fire while the channel is
        // unwritable (see IdleWriteHandler), so Kite adds a handler to every HTTP/1 connection.
        let idleWrite = configuration.idleWriteTimeout.map { TimeAmount($0) }
        // Connection metrics: a probe on every connection tells each request which one served it.
        let probe = configuration.collectsConnectionMetrics ? ConnectionProbe() : nil
        let loops = ConnectionLoops()
        self.connectionLoops = loops
        let watches = UploadWatch.Registry()
        self.uploadWatches = watches
        config.http1_1ConnectionDebugInitializer = { channel in
            // On the connection's event loop, where AHC calls this: the handlers are in place before AHC hands the
            // connection to its pool.
            channel.eventLoop.makeCompletedFuture {
                try Self.allowLargeReads(on: channel)
                try loops.install(on: channel)
                try watches.install(on: channel)
                try StaleConnectionWatch.install(on: channel)
                trust?.installHTTP1(on: channel)
                probe?.installHTTP1(on: channel)
                if let idleRead {
                    let operations = channel.pipeline.syncOperations
                    let decoder = try operations.handler(type: ByteToMessageHandler<HTTPResponseDecoder>.self)
                    try operations.addHandler(IdleReadHandler(timeout: idleRead), position: .after(decoder))
                }
                if let idleWrite {
                    try channel.pipeline.syncOperations.addHandler(IdleWriteHandler(timeout: idleWrite))
                }
            }
        }
        config.http2ConnectionDebugInitializer = { channel in
            // On the connection's event loop, where AHC calls this: the handlers are in place before AHC hands the
            // connection to its pool.
            channel.eventLoop.makeCompletedFuture {
                try Self.allowLargeReads(on: channel)
                let operations = channel.pipeline.syncOperations
                try operations.addHandler(
                    HTTP2ConnectionErrorHandler(),
                    position: .after(try operations.handler(type: NIOHTTP2Handler.self))
                )
                probe?.installHTTP2Connection(on: channel)
            }
        }
        // Every stream carries the upload watches' handler, which also removes their tag from the head.
        config.http2StreamChannelDebugInitializer = { stream in
            // AHC calls this on the stream's event loop (inside the multiplexer's stream initializer) and writes the
            // request when the returned future completes. Completed here, the request is written in this same call;
            // a future completed on a later turn would leave a turn in which a closing connection or the pool's
            // shutdown fails the stream before AHC's handler has its request, which it force-unwraps
            // (`HTTP2ClientRequestHandler.swift:249`).
            stream.eventLoop.makeCompletedFuture {
                HTTP2ConnectionErrorHandler.watch(stream: stream)
                // First: the handlers added after the codec below go between the codec and this one.
                try HTTP2ResponseEndHold.install(onStream: stream)
                try watches.install(onStream: stream)
                try HTTP2ResponseHeadGuard.install(onStream: stream)
                try HTTP2SendWindowWatch.install(onStream: stream)
                trust?.installHTTP2Stream(on: stream)
                probe?.installHTTP2Stream(on: stream)
                if let idleRead {
                    let operations = stream.pipeline.syncOperations
                    let codec = try operations.handler(type: HTTP2FramePayloadToHTTP1ClientCodec.self)
                    try operations.addHandler(IdleReadHandler(timeout: idleRead), position: .after(codec))
                }
            }
        }
        self.connectionProbe = probe
        // Kite follows redirects itself (to re-create bodies and strip credentials across origins).
        config.redirectConfiguration = .disallow
        // Kite makes one span per request itself (over its retries and redirects) and propagates its context.
        config.tracing.tracer = nil
        // Kite decodes bodies itself (BodyDecoder: multi-member gzip, limits on decoded bytes).
        config.decompression = .disabled
        // Fail fast on refused connections instead of retrying until the connect timeout.
        config.connectionPool.retryConnectionEstablishment = false
        config.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = max(
            1,
            configuration.maximumConnectionsPerHost
        )
        config.connectionPool.idleTimeout = TimeAmount(configuration.connectionIdleTimeout)
        // An HTTP/2 connection has 2^30 client stream IDs, and NIOHTTP2 1.46 traps computing the one after the last
        // (`HTTP2CommonInboundStreamMultiplexer.swift:325`): AHC retires a connection after this many streams.
        config.maximumUsesPerConnection = 1 << 29
        config.httpVersion = configuration.http1Only ? .http1Only : .automatic
        self.clients = EngineClients(
            configuration: config,
            proxies: configuration.proxies,
            eventLoopGroup: Self.eventLoopGroup
        )
        self.canShutDown = canShutDown
        self.configuration = configuration
        self.defaultHeaders = Self.headers(configuration.defaultHeaderFields)
    }

    nonisolated(nonsending) func send(_ request: TransportRequest) async throws(KiteError) -> TransportResponse {
        if let setupError = self.configuration.setupError { throw setupError }
        var outgoing = try self.outgoing(for: request)
        if case .gathered(let batched) = request.bodyDelivery, outgoing.watch == nil {
            return try await self.sendGathered(request, outgoing, batched: batched)
        }
        let deadline = request.deadline ?? .distantFuture
        let authority = outgoing.authority
        let proxied = try self.clients.proxied(scheme: outgoing.scheme, authority: authority ?? "")
        if let proxied, proxied.forwards { outgoing.forward(through: proxied.server) }
        let response = try await self.execute(
            on: self.clients.direct,
            through: proxied,
            mayResend: request.body?.isReplayable ?? true,
            idempotent: Self.isIdempotent(request.head),
            watch: outgoing.watch,
            authority: authority,
            events: request.events
        ) { client in
            try await client.execute(outgoing.request, deadline: deadline)
        }
        try proxied?.check(status: response.status)
        return try self.transportResponse(response, through: proxied, authority: authority)
    }

    // The steps of `send` are functions of their own, never inlined into it: what they hold then lives on the
    // thread's stack, not in `send`'s async frame (2,784 bytes before, which the task allocator took from
    // malloc as a slab of its own for every request).

    /// A request as the engine takes it, with what `send` needs to route it and report its errors.
    private struct Outgoing {
        var request: HTTPClientRequest
        var url: String
        let scheme: String
        /// The authority as the head gives it: `nil` when it has none.
        let authority: String?
        /// A streamed body's watch: whether the engine pulled any of it (only a body never pulled may be sent
        /// again), and whether the server answered before it was sent. Made for streamed bodies only, so a plain
        /// request pays no allocation for it.
        let watch: UploadWatch?

        /// Addresses the request to `proxy`, which takes it in absolute form (RFC 9112 §3.2.2): the engine
        /// connects to the proxy, ``AbsoluteFormWriter`` writes the origin from `Host` into the request line, and
        /// the proxy's credential goes in `Proxy-Authorization`, on this request only.
        mutating func forward(through proxy: ProxyServer) {
            let origin = self.scheme.utf8.count + 3 + (self.authority?.utf8.count ?? 0)
            // An HTTP proxy's description is its `http://host:port`.
            self.url = proxy.description + self.url.dropFirst(origin)
            self.request.url = self.url
            self.request.headers.replaceOrAdd(name: "Host", value: self.authority ?? "")
            if let authorization = proxy.authorization {
                self.request.headers.replaceOrAdd(name: "Proxy-Authorization", value: authorization)
            }
        }
    }

    @inline(never)
    private func outgoing(for request: TransportRequest) throws(KiteError) -> Outgoing {
        let head = request.head
        let parts = (scheme: head.scheme, authority: head.authority, path: head.path)
        let headers =
            head.headerFields == self.configuration.defaultHeaderFields
            ? self.defaultHeaders : Self.headers(head.headerFields)
        if let refusal = RequestHeadCheck.refusal(
            scheme: parts.scheme,
            authority: parts.authority,
            path: parts.path,
            fields: head.headerFields,
            fieldBytes: headers.fieldBytes
        ) {
            throw refusal.error(for: RequestSummary(head))
        }
        let scheme = parts.scheme ?? "http"
        let authority = parts.authority ?? ""
        let path = parts.path ?? "/"
        var url = ""
        url.reserveCapacity(scheme.utf8.count + 3 + authority.utf8.count + path.utf8.count)
        url += scheme
        url += "://"
        url += authority
        url += path
        var outgoing = HTTPClientRequest(url: url)
        if let trust = self.trust, scheme == "https" {
            try self.applyTrust(trust, authority: authority, to: &outgoing)
        }
        outgoing.method = HTTPMethod(rawValue: head.method.rawValue)
        outgoing.headers = headers.headers
        var watch: UploadWatch?
        switch request.body {
        case .none:
            break
        case .bytes(let buffer):
            outgoing.body = .bytes(buffer)
        case .stream(let length, _, let makeChunks):
            // The engine iterates the body once per attempt (a 307/308 redirect sends it again):
            // each iteration asks the source for fresh chunks.
            let streamWatch = self.uploadWatches.makeWatch()
            watch = streamWatch
            outgoing.headers.add(name: UploadWatch.Registry.tagName, value: streamWatch.tag)
            let perAttempt = ByteChunks(makeNext: {
                PacedBody(makeChunks().makeAsyncIterator(), eventLoops: Self.eventLoopGroup, watch: streamWatch).next
            })
            outgoing.body = .stream(perAttempt, length: length.map { .known($0) } ?? .unknown)
        }
        return Outgoing(request: outgoing, url: url, scheme: scheme, authority: head.authority, watch: watch)
    }

    /// The response as the pipeline takes it, its body read through ``BodyReader``.
    @inline(never)
    private func transportResponse(
        _ response: HTTPClientResponse,
        through proxied: ProxyClients.Proxied?,
        authority: String?
    ) throws(KiteError) -> TransportResponse {
        let body = response.body
        let chunks = ByteChunks(makeNext: { [self] in
            BodyReader(iterator: body.makeAsyncIterator(), transport: self, proxied: proxied, authority: authority).next
        })
        return TransportResponse(
            head: try Self.response(status: response.status, headers: response.headers),
            body: chunks
        )
    }

    /// A body bound for a file or a stream: gathered on the event loop (``BatchedBody``).
    @inline(never)
    private func sendGathered(
        _ request: TransportRequest,
        _ outgoing: Outgoing,
        batched: Bool
    ) async throws(KiteError) -> TransportResponse {
        let deadline = request.deadline ?? .distantFuture
        let errorAuthority = outgoing.authority
        let proxied = try self.clients.proxied(scheme: outgoing.scheme, authority: errorAuthority ?? "")
        var outgoing = outgoing
        if let proxied, proxied.forwards { outgoing.forward(through: proxied.server) }
        let engineRequest: HTTPClient.Request
        do {
            engineRequest = try HTTPClient.Request(
                url: outgoing.url,
                method: outgoing.request.method,
                headers: outgoing.request.headers,
                body: request.body.flatMap { if case .bytes(let buffer) = $0 { .byteBuffer(buffer) } else { nil } },
                tlsConfiguration: outgoing.request.tlsConfiguration
            )
        } catch {
            throw self.kiteError(from: error, authority: errorAuthority)
        }
        let (responseHead, body) = try await self.execute(
            on: self.clients.direct,
            through: proxied,
            mayResend: true,
            idempotent: Self.isIdempotent(request.head),
            watch: nil,
            authority: errorAuthority,
            events: request.events
        ) { client in
            let body = BatchedBody(handOverDelay: batched ? BatchedBody.batchedHandOverDelay : nil)
            // A stream's delegate runs on the loop of the connection that last started a request, so a caller's
            // next request keeps to its connection's loop (ConnectionLoops). Downloads stay indifferent: parallel
            // downloads spread their connections over both loops.
            let loop: HTTPClient.EventLoopPreference =
                batched ? .indifferent : self.connectionLoops.last.map { .delegate(on: $0) } ?? .indifferent
            body.attach(client.execute(request: engineRequest, delegate: body, eventLoop: loop, deadline: deadline))
            return (try await body.head(), body)
        }
        do {
            try proxied?.check(status: responseHead.status)
        } catch {
            body.cancel()
            throw error
        }
        let reader = BatchedBody.Reader(body: body, transport: self, proxied: proxied, authority: errorAuthority)
        return TransportResponse(
            head: try Self.response(status: responseHead.status, headers: responseHead.headers),
            body: ByteChunks(makeNext: { reader.next }, isReady: { reader.isReady })
        )
    }

    /// The response head in Kite's types.
    @inline(never)
    private static func response(status: HTTPResponseStatus, headers: HTTPHeaders) throws(KiteError) -> HTTPResponse {
        guard (0...999).contains(status.code) else {
            throw KiteError(code: .invalidResponse, message: "the response status \(status.code) is not valid")
        }
        // NIO's decoder allows 80 KiB of names and values, room for 80,000 one-letter fields; `HTTPFields` traps at
        // 65,535.
        guard headers.count <= RequestHeadCheck.maximumFieldCount else {
            throw KiteError(
                code: .invalidResponse,
                message:
                    "the response has \(headers.count) header fields, more than \(RequestHeadCheck.maximumFieldCount)"
            )
        }
        var fields = HTTPFields()
        fields.reserveCapacity(headers.count)
        for (name, value) in headers {
            if let fieldName = Self.fieldName(name) {
                fields.append(HTTPField(name: fieldName, value: value))
            }
        }
        return HTTPResponse(
            status: HTTPResponse.Status(code: Int(status.code), reasonPhrase: status.reasonPhrase),
            headerFields: fields
        )
    }

    /// A handshake's verification failure with the reason read from the chain the server presents
    /// (``PresentedChain``, along the request's route), unless the session turned that off.
    func explainingTrustFailure(
        _ failure: KiteError,
        through proxied: ProxyClients.Proxied?,
        authority: String?
    ) async -> KiteError {
        guard let authority, let diagnosis = self.configuration.trustFailureDiagnosis else { return failure }
        let (host, port) = TrustGate.Check.hostAndPort(ofAuthority: authority, defaultPort: 443)
        let lowercased = host.lowercased()
        let chain = await PresentedChain.read(
            host: lowercased,
            port: port,
            through: proxied?.server,
            timeout: min(PresentedChain.timeout, self.configuration.connectTimeout),
            group: Self.eventLoopGroup
        )
        var reason = "its certificate failed verification"
        if let chain { reason = await diagnosis.reason(for: chain, host: lowercased) }
        return KiteError(
            code: .serverTrustEvaluationFailed,
            message: "the server \(host) is not trusted: \(reason)",
            underlyingError: failure.underlyingError
        )
    }

    /// The TLS configuration the host's trust decisions ask for, if any.
    private func applyTrust(
        _ trust: TrustGate,
        authority: String,
        to outgoing: inout HTTPClientRequest
    ) throws(KiteError) {
        let host = TrustGate.Check.host(ofAuthority: authority)
        if let configuration = try trust.decisions.tlsConfiguration(forHost: host) {
            outgoing.tlsConfiguration = configuration
        }
    }

    /// The engine's `error` as Kite reports it, naming the proxy when there is one.
    @inline(never)
    func failure(from error: any Error, through proxied: ProxyClients.Proxied?, authority: String?) -> KiteError {
        let failure = self.kiteError(from: error, authority: authority)
        guard let proxied else { return failure }
        return ProxyClients.failure(failure, engineError: error, through: proxied, target: authority ?? "")
    }

    /// The engine's header fields. swift-http-types keeps `Cookie` as one field per cookie (HTTP/2's crumbs,
    /// RFC 9113 §8.2.3), even when set as `a=1; b=2`; HTTP/1.1 allows one `Cookie` line (RFC 6265 §5.4), and
    /// servers join repeated lines with commas (`a=1,b=2`, one cookie), so the crumbs are joined with `; `.
    private static func headers(_ fields: HTTPFields) -> (headers: HTTPHeaders, fieldBytes: Int) {
        var headers = HTTPHeaders()
        headers.reserveCapacity(fields.count)
        var cookie: String?
        var bytes = 0
        for field in fields {
            bytes += RequestHeadCheck.bytes(of: field)
            if field.name == .cookie {
                cookie = cookie.map { "\($0); \(field.value)" } ?? field.value
            } else {
                headers.add(name: field.name.rawName, value: field.value)
            }
        }
        if let cookie { headers.add(name: "Cookie", value: cookie) }
        return (headers, bytes)
    }

    /// Long response field names as servers usually spell them. `HTTPField.Name(_:)` stores a
    /// lowercased copy of the name, which allocates for names longer than 15 bytes (shorter ones
    /// fit in a small string); these reuse the static names' canonical spelling instead.
    private static let longCommonNames: [HTTPField.Name] = [
        .accessControlAllowOrigin, .accessControlAllowCredentials, .accessControlExposeHeaders,
        .contentDisposition, .contentEncoding, .transferEncoding, .strictTransportSecurity, .wwwAuthenticate,
    ]

    private static func fieldName(_ name: String) -> HTTPField.Name? {
        if name.utf8.count > 15 {
            for common in Self.longCommonNames where common.rawName == name {
                return common
            }
        }
        return HTTPField.Name(name)
    }

    /// Lets a connection read up to 256 KiB at a time where NIO's default allocator stops at 64 KiB: a large
    /// body arrives in a quarter of the reads (and of the engine's work per read), while small responses keep
    /// small buffers (the allocator grows only after reads that filled the buffer).
    private static func allowLargeReads(on channel: any Channel) throws {
        try channel.syncOptions?.setOption(
            ChannelOptions.recvAllocator,
            value: AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 2048, maximum: 256 << 10)
        )
    }

    func shutdown() async throws(KiteError) {
        guard self.canShutDown else { return }
        do {
            try await self.clients.shutdown()
        } catch let error as HTTPClientError where error == .alreadyShutdown {
            return
        } catch {
            throw KiteError(
                code: .sessionShutDown,
                message: "the session's connections could not be shut down cleanly",
                underlyingError: error
            )
        }
    }

    func shutdownInBackground() {
        guard self.canShutDown else { return }
        self.clients.shutdownInBackground()
    }
}

/// Reads a response body for the pipeline, turning engine errors into ``KiteError``: one object
/// per body (a closure over a captured iterator would cost a box and a context).
private final class BodyReader {
    private var iterator: HTTPClientResponse.Body.AsyncIterator
    private let transport: AHCTransport
    private let proxied: ProxyClients.Proxied?
    private let authority: String?

    init(
        iterator: HTTPClientResponse.Body.AsyncIterator,
        transport: AHCTransport,
        proxied: ProxyClients.Proxied?,
        authority: String?
    ) {
        self.iterator = iterator
        self.transport = transport
        self.proxied = proxied
        self.authority = authority
    }

    func next() async throws -> ByteBuffer? {
        do {
            return try await self.iterator.next()
        } catch {
            throw self.transport.failure(from: error, through: self.proxied, authority: self.authority)
        }
    }
}
