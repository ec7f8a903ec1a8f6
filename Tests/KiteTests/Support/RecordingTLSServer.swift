import Foundation
import KiteTestServer
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL
import SwiftASN1
import X509

/// An HTTPS/1.1 server that records every application byte it receives (after decryption) and answers each
/// request `200 ok`: the proof that a refused server never sees a request byte.
final class RecordingTLSServer: Sendable {
    let port: Int
    private let channel: any Channel
    private let received = NIOLockedValueBox<[UInt8]>([])

    /// Every byte received so far, on all connections.
    var receivedBytes: [UInt8] { self.received.withLockedValue { $0 } }

    /// The types of the HTTP/2 frames received (after the client preface), for a server on one connection.
    var receivedHTTP2FrameTypes: [UInt8] {
        let bytes = self.receivedBytes
        var types: [UInt8] = []
        var offset = 24  // the client preface, "PRI * HTTP/2.0" and so on
        while offset + 9 <= bytes.count {
            let length = Int(bytes[offset]) << 16 | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2])
            types.append(bytes[offset + 3])
            offset += 9 + length
        }
        return types
    }

    /// - Parameters:
    ///   - credential: The certificate and key the server presents.
    ///   - maximumTLSVersion: The newest TLS version it speaks.
    ///   - http2: Whether it speaks HTTP/2 (ALPN `h2` only) instead of HTTP/1.1.
    init(
        presenting credential: TestCertificateAuthority.Credential,
        maximumTLSVersion: TLSVersion? = nil,
        http2: Bool = false
    ) async throws {
        let chain = try credential.chain.map { certificate -> NIOSSLCertificateSource in
            var serializer = DER.Serializer()
            try serializer.serialize(certificate)
            return .certificate(try NIOSSLCertificate(bytes: serializer.serializedBytes, format: .der))
        }
        let key = try NIOSSLPrivateKey(bytes: Array(credential.privateKeyPEM.utf8), format: .pem)
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain,
            privateKey: .privateKey(key)
        )
        configuration.maximumTLSVersion = maximumTLSVersion
        if http2 { configuration.applicationProtocols = ["h2"] }
        let context = try NIOSSLContext(configuration: configuration)
        let received = self.received
        self.channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                    try channel.pipeline.syncOperations.addHandler(Recorder(received: received))
                    if !http2 {
                        try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                        try channel.pipeline.syncOperations.addHandler(OK())
                    }
                }.flatMap {
                    guard http2 else { return channel.eventLoop.makeSucceededVoidFuture() }
                    return channel.configureHTTP2Pipeline(mode: .server) { stream in
                        stream.eventLoop.makeCompletedFuture {
                            try stream.pipeline.syncOperations.addHandlers([
                                HTTP2FramePayloadToHTTP1ServerCodec(), OK(),
                            ])
                        }
                    }.map { _ in }
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        self.port = self.channel.localAddress?.port ?? 0
    }

    func shutdown() async throws {
        try await self.channel.close()
    }

    private final class Recorder: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        let received: NIOLockedValueBox<[UInt8]>
        init(received: NIOLockedValueBox<[UInt8]>) { self.received = received }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let buffer = self.unwrapInboundIn(data)
            self.received.withLockedValue { $0 += buffer.readableBytesView }
            context.fireChannelRead(data)
        }
    }

    private final class OK: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard case .end = self.unwrapInboundIn(data) else { return }
            var headers = HTTPHeaders()
            headers.add(name: "content-length", value: "2")
            context.write(
                self.wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))),
                promise: nil
            )
            context.write(self.wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: "ok")))), promise: nil)
            context.writeAndFlush(self.wrapOutboundOut(.end(nil)), promise: nil)
        }
    }
}
