import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import X509

/// An HTTPS server on 127.0.0.1 that speaks HTTP/2 by hand (ALPN `h2`): it reads the client's preface and frames,
/// answers SETTINGS, and writes, for each frame the client sends, the bytes its script gives for it (``init(answer:)``:
/// for each stream the client opens with HEADERS), whatever they are. No HTTP/2 library stands between a test and the
/// wire, so a test can send what a correct server never would (`:status: -1`, a DATA frame before any HEADERS, a
/// PUSH_PROMISE before its SETTINGS ACK).
final class RawHTTP2Server: Sendable {
    let port: Int
    /// The server's certificate, PEM, for a client that must trust it.
    let certificatePEM: String
    /// A client TLS configuration that trusts the certificate.
    let trustingConfiguration: TLSConfiguration
    /// Every frame the first connection's client sent after its preface, in the order read; ends when that
    /// connection closes.
    let received: AsyncStream<ClientFrame>
    private let channel: any Channel

    /// A frame a client sent, as a script sees it.
    enum ClientFrame: Sendable, Equatable {
        /// SETTINGS that are not an ACK.
        case settings
        /// HEADERS on `stream`: the request's head, or its trailers (`trailers`: the stream's second HEADERS).
        case headers(stream: UInt32, endStream: Bool, trailers: Bool)
        /// DATA on `stream`, `length` bytes of payload, `total` bytes on the stream so far (this frame's included).
        case data(stream: UInt32, length: Int, total: Int, endStream: Bool)
        case rstStream(stream: UInt32, errorCode: UInt32)
        case windowUpdate(stream: UInt32, increment: UInt32)
        /// Any other frame (a SETTINGS ACK, PING, PRIORITY).
        case other(type: UInt8, stream: UInt32)
    }

    /// - Parameter answer: The bytes to write for a stream the client opened (its ID), frames already serialised.
    convenience init(answer: @escaping @Sendable (UInt32) -> [UInt8]) async throws {
        try await self.init { frame in
            guard case .headers(let stream, _, trailers: false) = frame else { return [] }
            return answer(stream)
        }
    }

    /// - Parameters:
    ///   - acknowledgesSettings: Whether the server acknowledges the client's SETTINGS as they arrive; if not, the
    ///     script writes the ACK (``settingsAck()``) when it likes.
    ///   - script: The bytes to write when a frame of the client's arrives, frames already serialised.
    init(acknowledgesSettings: Bool = true, script: @escaping @Sendable (ClientFrame) -> [UInt8]) async throws {
        let (received, receiving) = AsyncStream<ClientFrame>.makeStream()
        self.received = received
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
                    try channel.pipeline.syncOperations.addHandler(
                        FrameScript(acknowledgesSettings: acknowledgesSettings, script: script, receiving: receiving)
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
        Self.frame(type: 0x1, flags: endStream ? 0x5 : 0x4, stream: stream, payload: Self.block(fields))
    }

    /// A PUSH_PROMISE frame (END_HEADERS) on `stream` promising `promised`, its request's `fields` as in ``headers``.
    static func pushPromise(stream: UInt32, promised: UInt32, _ fields: [(String, String)]) -> [UInt8] {
        Self.frame(type: 0x5, flags: 0x4, stream: stream, payload: Self.bigEndian(promised) + Self.block(fields))
    }

    /// A SETTINGS frame with `settings` (identifier, value).
    static func settings(_ settings: [(UInt16, UInt32)]) -> [UInt8] {
        let payload = settings.flatMap { identifier, value in
            [UInt8(truncatingIfNeeded: identifier >> 8), UInt8(truncatingIfNeeded: identifier)] + Self.bigEndian(value)
        }
        return Self.frame(type: 0x4, flags: 0, stream: 0, payload: payload)
    }

    /// The ACK of the client's SETTINGS.
    static func settingsAck() -> [UInt8] {
        Self.frame(type: 0x4, flags: 0x1, stream: 0)
    }

    /// A RST_STREAM frame.
    static func rstStream(stream: UInt32, errorCode: UInt32) -> [UInt8] {
        Self.frame(type: 0x3, flags: 0, stream: stream, payload: Self.bigEndian(errorCode))
    }

    /// A WINDOW_UPDATE frame.
    static func windowUpdate(stream: UInt32, increment: UInt32) -> [UInt8] {
        Self.frame(type: 0x8, flags: 0, stream: stream, payload: Self.bigEndian(increment))
    }

    private static func block(_ fields: [(String, String)]) -> [UInt8] {
        var block: [UInt8] = []
        for (name, value) in fields {
            block.append(0x00)
            block.append(UInt8(name.utf8.count))
            block += Array(name.utf8)
            block.append(UInt8(value.utf8.count))
            block += Array(value.utf8)
        }
        return block
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        [
            UInt8(truncatingIfNeeded: value >> 24), UInt8(truncatingIfNeeded: value >> 16),
            UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value),
        ]
    }

    /// A DATA frame.
    static func data(stream: UInt32, _ bytes: [UInt8], endStream: Bool) -> [UInt8] {
        Self.frame(type: 0x0, flags: endStream ? 0x1 : 0x0, stream: stream, payload: bytes)
    }
}

/// Reads the client's preface and frames, and plays the script.
private final class FrameScript: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let acknowledgesSettings: Bool
    private let script: @Sendable (RawHTTP2Server.ClientFrame) -> [UInt8]
    private let receiving: AsyncStream<RawHTTP2Server.ClientFrame>.Continuation
    private var buffer: [UInt8] = []
    private var prefaceRead = false
    /// The streams that sent HEADERS, with the DATA bytes each sent so far.
    private var streams: [UInt32: Int] = [:]

    init(
        acknowledgesSettings: Bool,
        script: @escaping @Sendable (RawHTTP2Server.ClientFrame) -> [UInt8],
        receiving: AsyncStream<RawHTTP2Server.ClientFrame>.Continuation
    ) {
        self.acknowledgesSettings = acknowledgesSettings
        self.script = script
        self.receiving = receiving
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
            let payload = Array(self.buffer[9..<(9 + length)])
            self.buffer.removeFirst(9 + length)
            let frame = self.clientFrame(type: type, flags: flags, stream: stream, payload: payload)
            if frame == .settings, self.acknowledgesSettings {
                self.write(RawHTTP2Server.settingsAck(), context: context)
            }
            self.receiving.yield(frame)
            self.write(self.script(frame), context: context)
        }
        context.flush()
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.receiving.finish()
        context.fireChannelInactive()
    }

    private func clientFrame(type: UInt8, flags: UInt8, stream: UInt32, payload: [UInt8]) -> RawHTTP2Server.ClientFrame
    {
        let word = payload.count >= 4 ? payload[0..<4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) } : 0
        switch type {
        case 0x0:
            // The payload without its padding (PADDED: a pad-length byte first).
            let length = flags & 0x8 == 0 ? payload.count : max(0, payload.count - 1 - Int(payload.first ?? 0))
            let total = (self.streams[stream] ?? 0) + length
            self.streams[stream] = total
            return .data(stream: stream, length: length, total: total, endStream: flags & 0x1 != 0)
        case 0x1:
            let trailers = self.streams[stream] != nil
            if !trailers { self.streams[stream] = 0 }
            return .headers(stream: stream, endStream: flags & 0x1 != 0, trailers: trailers)
        case 0x3:
            return .rstStream(stream: stream, errorCode: word)
        case 0x4 where flags & 0x1 == 0:
            return .settings
        case 0x8:
            return .windowUpdate(stream: stream, increment: word & 0x7FFF_FFFF)
        default:
            return .other(type: type, stream: stream)
        }
    }

    private func write(_ bytes: [UInt8], context: ChannelHandlerContext) {
        context.write(self.wrapOutboundOut(context.channel.allocator.buffer(bytes: bytes)), promise: nil)
    }
}
