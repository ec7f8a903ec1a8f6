import Foundation
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL

/// An HTTPS server on 127.0.0.1 that offers HTTP/2 and HTTP/1.1 through ALPN and answers every
/// request with the protocol it was served over (`h2` or `http/1.1`), with a certificate made for
/// the test that ``trustingConfiguration`` trusts. `/stall` answers with a head that promises 100 bytes, sends 10
/// and then nothing more, leaving the connection open.
final class HTTP2TestServer: Sendable {
    let port: Int
    /// A client TLS configuration that trusts this server's certificate (and nothing else).
    let trustingConfiguration: TLSConfiguration
    private let channel: any Channel

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
        self.channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                }.flatMap {
                    channel.configureHTTP2SecureUpgrade(
                        h2ChannelConfigurator: { channel in
                            channel.configureHTTP2Pipeline(
                                mode: .server,
                                inboundStreamInitializer: { stream in
                                    stream.eventLoop.makeCompletedFuture {
                                        try stream.pipeline.syncOperations.addHandlers([
                                            HTTP2FramePayloadToHTTP1ServerCodec(),
                                            ProtocolEchoHandler(protocolName: "h2"),
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

/// Answers each request with the name of the protocol it came over (`/stall`: see ``HTTP2TestServer``).
private final class ProtocolEchoHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let protocolName: String

    init(protocolName: String) {
        self.protocolName = protocolName
    }

    /// The request's header names, sent back in `x-request-header-names`.
    private var requestHeaderNames = ""
    private var stalls = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = self.unwrapInboundIn(data)
        if case .head(let head) = part {
            self.requestHeaderNames = head.headers.map { $0.name.lowercased() }.joined(separator: ",")
            self.stalls = head.uri == "/stall"
        }
        guard case .end = part else { return }
        if self.stalls {
            let head = HTTPResponseHead(version: .http1_1, status: .ok, headers: ["content-length": "100"])
            context.write(self.wrapOutboundOut(.head(head)), promise: nil)
            context.writeAndFlush(
                self.wrapOutboundOut(.body(.byteBuffer(ByteBuffer(repeating: 0x61, count: 10)))),
                promise: nil
            )
            return
        }
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
        context.writeAndFlush(self.wrapOutboundOut(.end(nil)), promise: nil)
    }
}
