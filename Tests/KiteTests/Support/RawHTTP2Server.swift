import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import X509

/// An HTTPS server on 127.0.0.1 that speaks HTTP/2 by hand (ALPN `h2`): it reads the client's preface and frames,
/// answers SETTINGS, and writes, for each stream the client opens with HEADERS, the bytes ``answer`` gives for it,
/// whatever they are. No HTTP/2 library stands between a test and the wire, so a test can send what a correct
/// server never would (`:status: -1`, a DATA frame before any HEADERS).
final class RawHTTP2Server: Sendable {
    let port: Int
    /// The server's certificate, PEM, for a client that must trust it.
    let certificatePEM: String
    /// A client TLS configuration that trusts the certificate.
    let trustingConfiguration: TLSConfiguration
    private let channel: any Channel

    /// - Parameter answer: The bytes to write for a stream the client opened (its ID), frames already serialised.
    init(answer: @escaping @Sendable (UInt32) -> [UInt8]) async throws {
        let (certificate, key) = try TestCertificate.selfSigned(commonName: "Kite raw HTTP/2 server")
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(certificate)],
            privateKey: .privateKey(key)
        )
        configuration.applicationProtocols = ["h2"]
        let context = try NIOSSLContext(configuration: configuration)
        var client = TLSConfiguration.makeClientConfiguration()
        client.trustRoots = .certificates([certificate])
        self.trustingConfiguration = client
        self.certificatePEM = try Certificate(derEncoded: try certificate.toDERBytes()).serializeAsPEM().pemString
        self.channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                    try channel.pipeline.syncOperations.addHandler(FrameScript(answer: answer))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        self.port = self.channel.localAddress?.port ?? 0
    }

    func shutdown() async throws {
        try await self.channel.close()
    }

    /// A frame: the 9-byte header and the payload.
    static func frame(type: UInt8, flags: UInt8, stream: UInt32, payload: [UInt8] = []) -> [UInt8] {
        let length = payload.count
        return [
            UInt8(truncatingIfNeeded: length >> 16), UInt8(truncatingIfNeeded: length >> 8),
            UInt8(truncatingIfNeeded: length), type, flags,
            UInt8(truncatingIfNeeded: stream >> 24) & 0x7F, UInt8(truncatingIfNeeded: stream >> 16),
            UInt8(truncatingIfNeeded: stream >> 8), UInt8(truncatingIfNeeded: stream),
        ] + payload
    }

    /// A HEADERS frame (END_HEADERS, and END_STREAM when `endStream`) whose block holds `fields` as HPACK literals
    /// without indexing (RFC 7541 §6.2.2), each name and value shorter than 127 bytes.
    static func headers(stream: UInt32, _ fields: [(String, String)], endStream: Bool) -> [UInt8] {
        var block: [UInt8] = []
        for (name, value) in fields {
            block.append(0x00)
            block.append(UInt8(name.utf8.count))
            block += Array(name.utf8)
            block.append(UInt8(value.utf8.count))
            block += Array(value.utf8)
        }
        return Self.frame(type: 0x1, flags: endStream ? 0x5 : 0x4, stream: stream, payload: block)
    }

    /// A DATA frame.
    static func data(stream: UInt32, _ bytes: [UInt8], endStream: Bool) -> [UInt8] {
        Self.frame(type: 0x0, flags: endStream ? 0x1 : 0x0, stream: stream, payload: bytes)
    }
}

/// Reads the client's preface and frames, and plays the answers.
private final class FrameScript: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let answer: @Sendable (UInt32) -> [UInt8]
    private var buffer: [UInt8] = []
    private var prefaceRead = false

    init(answer: @escaping @Sendable (UInt32) -> [UInt8]) {
        self.answer = answer
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = self.unwrapInboundIn(data)
        self.buffer += bytes.readBytes(length: bytes.readableBytes) ?? []
        if !self.prefaceRead {
            guard self.buffer.count >= 24 else { return }
            self.buffer.removeFirst(24)
            self.prefaceRead = true
            self.write(RawHTTP2Server.frame(type: 0x4, flags: 0, stream: 0), context: context)
        }
        while self.buffer.count >= 9 {
            let length = Int(self.buffer[0]) << 16 | Int(self.buffer[1]) << 8 | Int(self.buffer[2])
            guard self.buffer.count >= 9 + length else { break }
            let (type, flags) = (self.buffer[3], self.buffer[4])
            let stream = self.buffer[5...8].reduce(UInt32(0)) { $0 << 8 | UInt32($1) } & 0x7FFF_FFFF
            self.buffer.removeFirst(9 + length)
            if type == 0x4, flags & 0x1 == 0 {
                self.write(RawHTTP2Server.frame(type: 0x4, flags: 0x1, stream: 0), context: context)
            } else if type == 0x1 {
                self.write(self.answer(stream), context: context)
            }
        }
        context.flush()
    }

    private func write(_ bytes: [UInt8], context: ChannelHandlerContext) {
        context.write(self.wrapOutboundOut(context.channel.allocator.buffer(bytes: bytes)), promise: nil)
    }
}
