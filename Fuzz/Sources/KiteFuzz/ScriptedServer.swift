import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL

#if canImport(Glibc)
import Glibc
#endif

/// What the fake server does on one connection, step by step; after the last step it closes the connection.
///
/// A struct rather than an enum with payloads: Swift keeps a multi-payload enum's case in its pointers' spare bits,
/// where LeakSanitizer cannot see them (llvm/llvm-project#56751), so the bytes of a step still held by a closing
/// connection read as leaked.
struct ScriptStep: Sendable, Equatable {
    enum Kind: Sendable, Equatable {
        /// Writes ``bytes``.
        case send
        /// Waits ``milliseconds``.
        case pause
        /// Waits until the client has sent a request head (HTTP/1: the bytes up to an empty line; HTTP/2: a HEADERS
        /// frame, whose stream becomes the current one), or 15 ms have passed.
        case waitForRequest
        /// Reads and drops what the client sends until it has been quiet for 3 ms (or 20 ms have passed).
        case drain
        /// Closes the connection's output (FIN); it still reads.
        case fin
        /// Resets the connection (RST): SO_LINGER 0, then close.
        case rst
        /// Goes silent: holds the connection, reading, until the client closes it or 100 ms have passed (the session's
        /// idle timeouts are 60 ms).
        case hold
        /// HTTP/2: a frame of ``frameType`` with ``flags`` and ``bytes`` as its payload, on ``stream``.
        case frame
    }

    var kind: Kind
    var bytes: [UInt8] = []
    var milliseconds = 0
    var frameType: UInt8 = 0
    var flags: UInt8 = 0
    var stream = StreamReference.current

    static func send(_ bytes: [UInt8]) -> Self { Self(kind: .send, bytes: bytes) }
    static func pause(milliseconds: Int) -> Self { Self(kind: .pause, milliseconds: milliseconds) }
    static let waitForRequest = Self(kind: .waitForRequest)
    static let drain = Self(kind: .drain)
    static let fin = Self(kind: .fin)
    static let rst = Self(kind: .rst)
    static let hold = Self(kind: .hold)
    static func frame(type: UInt8, flags: UInt8, stream: StreamReference, payload: [UInt8]) -> Self {
        Self(kind: .frame, bytes: payload, frameType: type, flags: flags, stream: stream)
    }
}

/// A frame's stream, as a script names it before the client has chosen its stream IDs.
enum StreamReference: UInt8, Sendable, Equatable {
    /// Stream 0, the connection.
    case root
    /// The stream of the client's last HEADERS.
    case current
    /// The client's next stream (current + 2): a stream it has not opened.
    case next
    /// An even stream (current + 1), as a server's pushed stream has.
    case pushed
}

/// A loopback server whose every connection plays the next script of the current input: the bytes a hostile server
/// sends, and where it pauses, closes (FIN) or resets (RST). Plain TCP, or TLS with ALPN `h2` for the HTTP/2 target
/// (the server also sends its SETTINGS after the client's preface, and acknowledges the client's SETTINGS, unless the
/// input says not to).
final class ScriptedServer: Sendable {
    /// The server's own event loop, apart from the client's.
    static let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)

    let port: Int
    private let channel: any Channel
    private let state = NIOLockedValueBox(State())

    private struct State {
        var scripts: [[ScriptStep]] = []
        var next = 0
        var automaticHTTP2 = true
        var open: [ObjectIdentifier: any Channel] = [:]
        var accepted = 0
    }

    /// - Parameter tls: The TLS context for the HTTP/2 target, or `nil` for plain HTTP/1.1.
    init(tls: NIOSSLContext?) throws {
        let state = self.state
        let bootstrap = ServerBootstrap(group: Self.group)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                let (script, automatic) = state.withLockedValue { state -> ([ScriptStep], Bool) in
                    state.accepted += 1
                    state.open[ObjectIdentifier(channel)] = channel
                    defer { state.next += 1 }
                    return (state.next < state.scripts.count ? state.scripts[state.next] : [], state.automaticHTTP2)
                }
                channel.closeFuture.whenComplete { _ in
                    _ = state.withLockedValue { $0.open.removeValue(forKey: ObjectIdentifier(channel)) }
                }
                return channel.eventLoop.makeCompletedFuture {
                    if let tls {
                        try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls))
                    }
                    try channel.pipeline.syncOperations.addHandler(
                        ScriptPlayer(script: script, http2: tls != nil, automatic: automatic)
                    )
                }
            }
        self.channel = try bootstrap.bind(host: "127.0.0.1", port: 0).wait()
        self.port = self.channel.localAddress?.port ?? 0
    }

    /// The scripts of the next input, one per connection in the order the client opens them; connections after
    /// the last get an empty script (closed at once).
    func load(_ scripts: [[ScriptStep]], automaticHTTP2: Bool) {
        self.state.withLockedValue { state in
            state.scripts = scripts
            state.next = 0
            state.accepted = 0
            state.automaticHTTP2 = automaticHTTP2
        }
    }

    /// The connections accepted since the last `load`.
    var accepted: Int { self.state.withLockedValue { $0.accepted } }

    /// Closes every connection still open, and waits until they are closed.
    func closeAll() {
        let open = self.state.withLockedValue { Array($0.open.values) }
        for channel in open {
            try? channel.close().wait()
        }
    }
}

/// Plays one connection's script.
private final class ScriptPlayer: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var steps: ArraySlice<ScriptStep>
    private let http2: Bool
    private let automatic: Bool
    /// What the client sent and the script has not consumed yet.
    private var received: [UInt8] = []
    private var prefaceRead = false
    private var currentStream: UInt32 = 1
    /// A request (HTTP/1 head, HTTP/2 HEADERS) arrived that no `waitForRequest` has taken yet.
    private var requestsSeen = 0
    private var requestsTaken = 0
    private var waiting: Waiting?
    private var context: ChannelHandlerContext?
    private var running = false
    private var finished = false

    private enum Waiting {
        case request(deadline: NIODeadline)
        case pause(until: NIODeadline)
        case quiet(until: NIODeadline, deadline: NIODeadline)
    }

    init(script: [ScriptStep], http2: Bool, automatic: Bool) {
        self.steps = script[...]
        self.http2 = http2
        self.automatic = automatic
    }

    func channelActive(context: ChannelHandlerContext) {
        self.context = context
        context.fireChannelActive()
        // Over TLS the script starts once the handshake is over (the first read); over TCP at once.
        if !self.http2 { self.run() }
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.finished = true
        self.context = nil
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = self.unwrapInboundIn(data)
        self.received += buffer.readBytes(length: buffer.readableBytes) ?? []
        if self.http2 {
            self.readFrames(context)
        } else {
            self.findRequestHeads()
        }
        if case .quiet(_, let deadline) = self.waiting {
            self.waiting = .quiet(until: .now() + .milliseconds(5), deadline: deadline)
        }
        if !self.running { self.run() }
    }

    /// HTTP/1: counts request heads (up to each empty line) and drops the bytes.
    private func findRequestHeads() {
        while let end = Self.emptyLine(in: self.received) {
            self.received.removeFirst(end)
            self.requestsSeen += 1
        }
        // What is not a head (a body) is dropped once it is long.
        if self.received.count > 64 * 1024 { self.received.removeAll() }
    }

    private static func emptyLine(in bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4)
        where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return index + 4
        }
        return nil
    }

    /// HTTP/2: reads the preface and frames; answers SETTINGS when automatic; counts HEADERS.
    private func readFrames(_ context: ChannelHandlerContext) {
        if !self.prefaceRead {
            guard self.received.count >= 24 else { return }
            self.received.removeFirst(24)
            self.prefaceRead = true
            if self.automatic { self.write(HTTP2Bytes.frame(type: 0x4, flags: 0, stream: 0, payload: []), context) }
        }
        while self.received.count >= 9 {
            let length = Int(self.received[0]) << 16 | Int(self.received[1]) << 8 | Int(self.received[2])
            guard self.received.count >= 9 + length else { break }
            let (type, flags) = (self.received[3], self.received[4])
            let stream = self.received[5...8].reduce(UInt32(0)) { $0 << 8 | UInt32($1) } & 0x7FFF_FFFF
            self.received.removeFirst(9 + length)
            if type == 0x4, flags & 0x1 == 0, self.automatic {
                self.write(HTTP2Bytes.frame(type: 0x4, flags: 0x1, stream: 0, payload: []), context)
            } else if type == 0x1 {
                self.currentStream = stream
                self.requestsSeen += 1
            }
        }
        context.flush()
    }

    private func write(_ bytes: [UInt8], _ context: ChannelHandlerContext) {
        context.write(self.wrapOutboundOut(context.channel.allocator.buffer(bytes: bytes)), promise: nil)
    }

    /// Plays steps until one waits.
    private func run() {
        guard let context = self.context, !self.finished else { return }
        self.running = true
        defer { self.running = false }
        while !self.finished {
            if let waiting = self.waiting {
                let now = NIODeadline.now()
                switch waiting {
                case .request(let deadline):
                    if self.requestsSeen > self.requestsTaken {
                        self.requestsTaken += 1
                    } else if now < deadline {
                        self.wake(at: deadline)
                        return
                    }
                case .pause(let until):
                    if now < until {
                        self.wake(at: until)
                        return
                    }
                case .quiet(let until, let deadline):
                    if now < until && now < deadline {
                        self.wake(at: min(until, deadline))
                        return
                    }
                    self.received.removeAll()
                }
                self.waiting = nil
            }
            guard let step = self.steps.popFirst() else {
                self.finished = true
                context.close(promise: nil)
                return
            }
            switch step.kind {
            case .send:
                context.writeAndFlush(
                    self.wrapOutboundOut(context.channel.allocator.buffer(bytes: step.bytes)),
                    promise: nil
                )
            case .frame:
                let stream: UInt32
                switch step.stream {
                case .root: stream = 0
                case .current: stream = self.currentStream
                case .next: stream = self.currentStream &+ 2
                case .pushed: stream = self.currentStream &+ 1
                }
                let frame = HTTP2Bytes.frame(
                    type: step.frameType,
                    flags: step.flags,
                    stream: stream,
                    payload: step.bytes
                )
                context.writeAndFlush(
                    self.wrapOutboundOut(context.channel.allocator.buffer(bytes: frame)),
                    promise: nil
                )
            case .pause:
                self.waiting = .pause(until: .now() + .milliseconds(Int64(step.milliseconds)))
            case .waitForRequest:
                self.waiting = .request(deadline: .now() + .milliseconds(15))
            case .hold:
                self.waiting = .pause(until: .now() + .milliseconds(100))
            case .drain:
                self.waiting = .quiet(until: .now() + .milliseconds(3), deadline: .now() + .milliseconds(20))
            case .fin:
                context.close(mode: .output, promise: nil)
            case .rst:
                self.finished = true
                let channel = context.channel
                if let socket = channel as? any SocketOptionProvider {
                    socket.setSoLinger(linger(l_onoff: 1, l_linger: 0)).whenComplete { _ in channel.close(promise: nil)
                    }
                } else {
                    channel.close(promise: nil)
                }
                return
            }
        }
    }

    private func wake(at deadline: NIODeadline) {
        guard let context = self.context else { return }
        context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [self] in
            if !self.running { self.run() }
        }
    }
}

/// HTTP/2 frames as bytes.
enum HTTP2Bytes {
    static func frame(type: UInt8, flags: UInt8, stream: UInt32, payload: [UInt8]) -> [UInt8] {
        let length = min(payload.count, (1 << 24) - 1)
        return [
            UInt8(truncatingIfNeeded: length >> 16), UInt8(truncatingIfNeeded: length >> 8),
            UInt8(truncatingIfNeeded: length), type, flags,
            UInt8(truncatingIfNeeded: stream >> 24) & 0x7F, UInt8(truncatingIfNeeded: stream >> 16),
            UInt8(truncatingIfNeeded: stream >> 8), UInt8(truncatingIfNeeded: stream),
        ] + payload.prefix(length)
    }

    /// An HPACK block of literal fields without indexing (RFC 7541 §6.2.2), with integers in their prefix encoding.
    static func headerBlock(_ fields: [([UInt8], [UInt8])]) -> [UInt8] {
        var block: [UInt8] = []
        for (name, value) in fields {
            block.append(0x00)
            Self.appendInteger(name.count, prefixBits: 7, to: &block)
            block += name
            Self.appendInteger(value.count, prefixBits: 7, to: &block)
            block += value
        }
        return block
    }

    private static func appendInteger(_ value: Int, prefixBits: Int, to block: inout [UInt8]) {
        let limit = (1 << prefixBits) - 1
        guard value >= limit else {
            block.append(UInt8(value))
            return
        }
        block.append(UInt8(limit))
        var rest = value - limit
        while rest >= 128 {
            block.append(UInt8(rest & 0x7F) | 0x80)
            rest >>= 7
        }
        block.append(UInt8(rest))
    }
}
