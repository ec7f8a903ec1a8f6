import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL

/// An HTTPS server on 127.0.0.1 that offers HTTP/2 and HTTP/1.1 through ALPN and answers every
/// request with the protocol it was served over (`h2` or `http/1.1`), with a certificate made for
/// the test that ``trustingConfiguration`` trusts. `/stall` answers with a head that promises 100 bytes, sends 10
/// and then nothing more, leaving the connection open. `/hold` waits (``heldRequests`` tells when one does) until
/// a `/stray` on its connection has been answered; `/stray` answers, then writes a DATA frame for its ended stream
/// around its HTTP/2 handler (a frame for a closed stream, as a server still sending a cancelled download does),
/// and in the same flush the answers of the held requests. `/refuse-once` resets its first request's stream with
/// `REFUSED_STREAM`, `/goaway-once` answers its first request with a `GOAWAY` whose last stream is below it (as nginx
/// does at its `keepalive_requests`), and both answer the requests after; `/reset` resets every request's stream with
/// `INTERNAL_ERROR`.
final class HTTP2TestServer: Sendable {
    let port: Int
    /// A client TLS configuration that trusts this server's certificate (and nothing else).
    let trustingConfiguration: TLSConfiguration
    private let channel: any Channel
    /// One element for each `/hold` request that waits.
    let heldRequests: AsyncStream<Void>
    /// One element for each connection the client closed (or lost), after it was accepted.
    let closedConnections: AsyncStream<Void>
    private let accepted = NIOLockedValueBox(0)
    private let requestCounts: RequestCounts

    /// The connections accepted so far.
    var acceptedConnections: Int { self.accepted.withLockedValue { $0 } }

    /// The requests for `path` received so far (over HTTP/2), refused or reset ones too.
    func requests(to path: String) -> Int { self.requestCounts.count(path) }

    init() async throws {
        let (sslCertificate, key) = try TestCertificate.selfSigned(commonName: "Kite HTTP/2 test server")
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(sslCertificate)],
            privateKey: .privateKey(key)
        )
        configuration.applicationProtocols = ["h2", "http/1.1"]
        let context = try NIOSSLContext(configuration: configuration)
        var client = TLSConfiguration.makeClientConfiguration()
        client.trustRoots = .certificates([sslCertificate])
        self.trustingConfiguration = client
        let (heldRequests, held) = AsyncStream.makeStream(of: Void.self)
        self.heldRequests = heldRequests
        let (closedConnections, closed) = AsyncStream.makeStream(of: Void.self)
        self.closedConnections = closedConnections
        let accepted = self.accepted
        let requestCounts = RequestCounts()
        self.requestCounts = requestCounts
        self.channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                accepted.withLockedValue { $0 += 1 }
                channel.closeFuture.whenComplete { _ in closed.yield() }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                }.flatMap {
                    channel.configureHTTP2SecureUpgrade(
                        h2ChannelConfigurator: { channel in
                            let connection = NIOLoopBound(HeldAnswers(held: held), eventLoop: channel.eventLoop)
                            return channel.configureHTTP2Pipeline(
                                mode: .server,
                                inboundStreamInitializer: { stream in
                                    stream.eventLoop.makeCompletedFuture {
                                        try stream.pipeline.syncOperations.addHandlers([
                                            HTTP2FramePayloadToHTTP1ServerCodec(),
                                            ProtocolEchoHandler(
                                                protocolName: "h2",
                                                connection: connection.value,
                                                requestCounts: requestCounts
                                            ),
                                        ])
                                    }
                                }
                            ).map { _ in }
                        },
                        http1ChannelConfigurator: { channel in
                            channel.eventLoop.makeCompletedFuture {
                                try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                                try channel.pipeline.syncOperations.addHandler(
                                    ProtocolEchoHandler(protocolName: "http/1.1")
                                )
                            }
                        }
                    )
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        self.port = self.channel.localAddress?.port ?? 0
    }

    func shutdown() async throws {
        try await self.channel.close()
    }
}

/// The HTTP/2 requests received, by path.
private final class RequestCounts: Sendable {
    private let counts = NIOLockedValueBox<[String: Int]>([:])

    /// Counts a request for `path`; how many there were, this one included.
    func record(_ path: String) -> Int {
        self.counts.withLockedValue { counts in
            counts[path, default: 0] += 1
            return counts[path, default: 0]
        }
    }

    func count(_ path: String) -> Int { self.counts.withLockedValue { $0[path, default: 0] } }
}

/// The `/hold` requests of one HTTP/2 connection that wait for a `/stray`, on its event loop.
private final class HeldAnswers {
    let held: AsyncStream<Void>.Continuation
    var answers: [() -> Void] = []

    init(held: AsyncStream<Void>.Continuation) {
        self.held = held
    }
}

/// Answers each request with the name of the protocol it came over (`/stall`, `/hold`, `/stray`: see
/// ``HTTP2TestServer``).
private final class ProtocolEchoHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let protocolName: String
    private let connection: HeldAnswers?
    private let requestCounts: RequestCounts?

    init(protocolName: String, connection: HeldAnswers? = nil, requestCounts: RequestCounts? = nil) {
        self.protocolName = protocolName
        self.connection = connection
        self.requestCounts = requestCounts
    }

    /// The request's header names, sent back in `x-request-header-names`.
    private var requestHeaderNames = ""
    private var uri = ""

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = self.unwrapInboundIn(data)
        if case .head(let head) = part {
            self.requestHeaderNames = head.headers.map { $0.name.lowercased() }.joined(separator: ",")
            self.uri = head.uri
        }
        guard case .end = part else { return }
        let count = self.requestCounts?.record(self.uri)
        if let count, self.uri == "/reset" || (self.uri == "/refuse-once" && count == 1) {
            Self.reset(context: context, code: self.uri == "/reset" ? .internalError : .refusedStream)
            return
        }
        if count == 1, self.uri == "/goaway-once", let parent = context.channel.parent {
            // Written around the server's HTTP/2 handler, which would otherwise reset the stream itself: nginx sends
            // its GOAWAY before it takes the streams it refuses.
            context.channel.getOption(HTTP2StreamChannelOptions.streamID).assumeIsolated().whenSuccess { streamID in
                var goAway = ByteBuffer(bytes: [0, 0, 8, 7, 0])  // length 8, GOAWAY, no flags
                goAway.writeInteger(UInt32(0))  // the connection's stream
                goAway.writeInteger(UInt32(max(0, Int32(streamID) - 2)))  // the last stream processed
                goAway.writeInteger(UInt32(0))  // NO_ERROR
                Self.writeAroundHTTP2Handler(goAway, on: parent, flush: true)
            }
            return
        }
        if let connection, self.uri == "/hold" {
            connection.answers.append { self.answer(context: context) }
            connection.held.yield()
            return
        }
        if let connection, self.uri == "/stray", let parent = context.channel.parent {
            // The stream's ID is read first: once the answer has ended, its channel is closed.
            context.channel.getOption(HTTP2StreamChannelOptions.streamID).assumeIsolated().whenSuccess { streamID in
                self.answer(context: context).assumeIsolated().whenSuccess {
                    Self.writeStrayFrame(for: streamID, on: parent)
                    let held = connection.answers
                    connection.answers = []
                    for answer in held { answer() }
                    parent.flush()
                }
            }
            return
        }
        if self.uri == "/stall" {
            let head = HTTPResponseHead(version: .http1_1, status: .ok, headers: ["content-length": "100"])
            context.write(self.wrapOutboundOut(.head(head)), promise: nil)
            context.writeAndFlush(
                self.wrapOutboundOut(.body(.byteBuffer(ByteBuffer(repeating: 0x61, count: 10)))),
                promise: nil
            )
            return
        }
        self.answer(context: context)
    }

    /// Sends the answer: the protocol's name.
    @discardableResult
    private func answer(context: ChannelHandlerContext) -> EventLoopFuture<Void> {
        let body = ByteBuffer(string: self.protocolName)
        var headers = HTTPHeaders()
        headers.add(name: "x-request-header-names", value: self.requestHeaderNames)
        headers.add(name: "content-length", value: "\(body.readableBytes)")
        headers.add(name: "content-type", value: "text/plain")
        context.write(
            self.wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))),
            promise: nil
        )
        context.write(self.wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        return context.writeAndFlush(self.wrapOutboundOut(.end(nil)))
    }

    /// Resets the request's stream with `code`, written below the stream's HTTP/1 codec (which takes only
    /// response parts).
    private static func reset(context: ChannelHandlerContext, code: HTTP2ErrorCode) {
        guard
            let codec = try? context.pipeline.syncOperations.context(
                handlerType: HTTP2FramePayloadToHTTP1ServerCodec.self
            )
        else {
            preconditionFailure("the stream has no HTTP/1 codec")
        }
        codec.writeAndFlush(NIOAny(HTTP2Frame.FramePayload.rstStream(code)), promise: nil)
    }

    /// Writes a DATA frame of one byte for `streamID`, which has ended, below the connection's HTTP/2
    /// handler (which would refuse it), unflushed: the next flush sends it ahead of what the handler writes until then.
    private static func writeStrayFrame(for streamID: HTTP2StreamID, on parent: any Channel) {
        var frame = ByteBuffer(bytes: [0, 0, 1, 0, 0])  // length 1, DATA, no flags
        frame.writeInteger(UInt32(Int32(streamID)))
        frame.writeString("x")
        Self.writeAroundHTTP2Handler(frame, on: parent)
    }

    /// Writes the bytes of a frame below the connection's HTTP/2 handler, and flushes them there when `flush` says so
    /// (the connection's flush passes that handler only once it has written a frame of its own).
    private static func writeAroundHTTP2Handler(_ frame: ByteBuffer, on parent: any Channel, flush: Bool = false) {
        guard let http2 = try? parent.pipeline.syncOperations.context(handlerType: NIOHTTP2Handler.self) else {
            preconditionFailure("the connection has no HTTP/2 handler")
        }
        http2.write(NIOAny(frame), promise: nil)
        if flush { http2.flush() }
    }
}
