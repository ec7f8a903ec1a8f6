import AsyncHTTPClient
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import NIOHTTP1
import NIOHTTP2
import Testing

@testable import Kite

/// What an HTTP/2 server may do that made async-http-client 1.37 or swift-nio-http2 1.46 trap in Kite's process:
/// each case runs a Kite request in a child process (``Probe``) against a hand-written server (``RawHTTP2Server``),
/// which reports the frames Kite sent, and the exchange now ends with an answer or a `KiteError` naming the cause.
@Suite(.timeLimit(.minutes(1))) struct HTTP2HostileServerTests {
    typealias Frame = RawHTTP2Server.ClientFrame

    // MARK: Server push before the SETTINGS ACK (HTTP2ConnectionErrorHandler)

    /// NIOHTTP2 takes a `PUSH_PROMISE` until the server acknowledges `ENABLE_PUSH = 0`; async-http-client's pool then
    /// counted the pushed stream's closing as one of its own, and trapped at the request's (`usedStreams > 0`). Kite
    /// refuses the promised stream, and the request gets its answer, whether the server then answers the pushed stream
    /// or resets it.
    @Test(arguments: ["answers", "resets"])
    func aPushBeforeTheSettingsAckIsRefusedAndTheRequestAnswered(pushedStream: String) async throws {
        let server = try await RawHTTP2Server(acknowledgesSettings: false) { frame in
            guard case .headers(let stream, _, trailers: false) = frame else { return [] }
            let request = [(":method", "GET"), (":scheme", "https"), (":path", "/pushed"), (":authority", "127.0.0.1")]
            let pushed =
                pushedStream == "answers"
                ? RawHTTP2Server.headers(stream: 2, [(":status", "200")], endStream: false)
                : RawHTTP2Server.rstStream(stream: 2, errorCode: 0x8)
            return RawHTTP2Server.pushPromise(stream: stream, promised: 2, request) + pushed
                + Self.answer(stream: stream) + RawHTTP2Server.settingsAck()
        }
        let (outcome, frames) = try await Self.probe("data", server)
        #expect(outcome.exitedNormally, "\(outcome)")
        #expect(outcome.output == "response 200 2", "\(outcome)")
        // REFUSED_STREAM (0x7) for the promised stream.
        #expect(frames.contains(.rstStream(stream: 2, errorCode: 0x7)), "\(frames)")
    }

    // MARK: A send window below zero (HTTP2SendWindowWatch)

    /// The server lowers `SETTINGS_INITIAL_WINDOW_SIZE` to 0 after the body's first 5 bytes: the stream's window is
    /// -5, and NIOHTTP2 trapped on the empty `DATA` that ends the body. Kite ends it with empty trailers instead.
    @Test(arguments: ["unknown", "known"])
    func aWindowLoweredBelowWhatTheBodySentGetsTheRequestsEndAsEmptyTrailers(length: String) async throws {
        let server = try await RawHTTP2Server { frame in
            switch frame {
            case .data(let stream, let length, let total, _) where length > 0 && total == length:
                // SETTINGS_INITIAL_WINDOW_SIZE (0x4) = 0, then the answer's head: the body ends when it arrives.
                return RawHTTP2Server.settings([(0x4, 0)])
                    + RawHTTP2Server.headers(
                        stream: stream,
                        [(":status", "200"), ("content-length", "2")],
                        endStream: false
                    )
            case .headers(let stream, endStream: true, trailers: true):
                return RawHTTP2Server.data(stream: stream, Array("ok".utf8), endStream: true)
            default:
                return []
            }
        }
        let (outcome, frames) = try await Self.probe("h2-upload-until-head", server, ["--length", length])
        #expect(outcome.exitedNormally, "\(outcome)")
        #expect(outcome.output == "response 200 2", "\(outcome)")
        // The request's frames (the client's WINDOW_UPDATEs for the answer left out).
        let stream1 = frames.filter {
            if case .windowUpdate = $0 { return false }
            return Self.stream(of: $0) == 1
        }
        #expect(
            stream1 == [
                .headers(stream: 1, endStream: false, trailers: false),
                .data(stream: 1, length: 5, total: 5, endStream: false),
                .headers(stream: 1, endStream: true, trailers: true),
            ],
            "\(frames)"
        )
    }

    /// The body's empty end already waits in NIOHTTP2 behind the connection window (the 65,535 bytes before it used
    /// all of it) when the server lowers its initial window to 0: the stream's window is -65,535, and the
    /// `WINDOW_UPDATE` that reopens the connection made NIOHTTP2 trap on that frame. Kite resets the stream first, and
    /// the request fails naming the cause.
    @Test func aWindowLoweredWhileTheRequestsEndWaitsFailsTheRequest() async throws {
        let server = try await RawHTTP2Server { frame in
            guard case .data(_, _, total: 65_535, _) = frame else { return [] }
            return RawHTTP2Server.settings([(0x4, 0)]) + RawHTTP2Server.windowUpdate(stream: 0, increment: 100)
        }
        let (outcome, frames) = try await Self.probe("h2-put-bytes", server, ["--size", "65535"])
        #expect(outcome.exitedNormally, "\(outcome)")
        #expect(
            outcome.output
                == "error connectionLost the server lowered its HTTP/2 initial window (SETTINGS_INITIAL_WINDOW_SIZE) "
                + "while the request's end waited to be sent",
            "\(outcome)"
        )
        // The stream's end never went out. (Its reset may not either: the probe shuts its session down as soon as
        // the request failed, and the pool then closes the connection before it flushed the reset.)
        #expect(!frames.contains { if case .data(1, _, _, true) = $0 { true } else { false } }, "\(frames)")
    }

    // MARK: An answer that ends before the request's body (HTTP2ResponseEndHold)

    /// The server answers 200 in full as soon as the head arrives and waits for the body: the answer's end waits for
    /// the body's, which is sent. async-http-client dropped its request at the answer's end, never sent the body's
    /// end, and trapped when the session shut down with the stream still open.
    @Test func anAnswerBeforeTheBodysEndWaitsForIt() async throws {
        let server = try await RawHTTP2Server { frame in
            guard case .headers(let stream, endStream: false, trailers: false) = frame else { return [] }
            return Self.answer(stream: stream)
        }
        let (outcome, frames) = try await Self.probe("h2-upload-until-head", server)
        #expect(outcome.exitedNormally, "\(outcome)")
        #expect(outcome.output == "response 200 2", "\(outcome)")
        #expect(frames.contains(.data(stream: 1, length: 0, total: 5, endStream: true)), "\(frames)")
    }

    /// The server answers 200 in full, then resets the stream with `NO_ERROR` (RFC 9113 §8.1), as Go's server does
    /// when a handler returns before reading the body: async-http-client trapped on the reset. The exchange fails
    /// naming the reset, since the engine cannot end the answer while the body is unfinished.
    @Test func anAnswerBeforeTheBodysEndThenAResetFailsTheRequest() async throws {
        let server = try await RawHTTP2Server { frame in
            guard case .headers(let stream, endStream: false, trailers: false) = frame else { return [] }
            return Self.answer(stream: stream) + RawHTTP2Server.rstStream(stream: stream, errorCode: 0x0)
        }
        let (outcome, _) = try await Self.probe("h2-upload-until-head", server)
        #expect(outcome.exitedNormally, "\(outcome)")
        #expect(
            outcome.output == "error connectionLost the server reset the request's HTTP/2 stream (NO_ERROR)",
            "\(outcome)"
        )
    }

    /// Each (state, event) pair of the hold that an exchange meets, on a pipeline of its own: the events, what the
    /// handler behind it gets, and the state it ends in.
    @Test(
        arguments: [
            // An answer after the request's end passes as it comes.
            (["request end", "head 200", "body", "end"], ["head 200", "body", "end"], .passing),
            // A 2xx answer that ends first: its end waits for the request's, then follows it.
            (["head 200", "body", "end"], ["head 200", "body"], .holding(trailers: nil)),
            (["head 200", "end", "request end"], ["head 200", "end", "read complete"], .passing),
            // Writing the request's end closes the stream, whose answer is over: the close follows the held end.
            (["head 200", "end", "request end, closing"], ["head 200", "end", "read complete", "inactive"], .passing),
            (["head 200", "request end", "end"], ["head 200", "end"], .passing),
            // Interim heads leave the final one to come.
            (["head 100", "body", "end"], ["head 100", "body", "end"], .sending),
            (["head 100", "head 204", "end"], ["head 100", "head 204"], .holding(trailers: nil)),
            // 300 or more: the engine stops the body and ends the exchange itself.
            (["head 413", "end"], ["head 413", "end"], .passing),
            // A failure or a close drops the held end and passes everything after.
            (["head 200", "end", "error"], ["head 200", "error"], .passing),
            (["head 200", "end", "inactive"], ["head 200", "inactive"], .passing),
            (["head 200", "error", "end"], ["head 200", "error", "end"], .passing),
            (["error", "head 200", "end"], ["error", "head 200", "end"], .passing),
        ] as [([String], [String], HTTP2ResponseEndHold.State)]
    )
    func theHoldPassesEverythingButTheEarlyEndOfA2xxAnswer(
        events: [String],
        delivered: [String],
        state: HTTP2ResponseEndHold.State
    ) throws {
        let recorder = Recorder()
        let closer = CloseOnFlush()
        let hold = HTTP2ResponseEndHold()
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandlers([closer, hold, recorder])
        for event in events {
            switch event {
            case "request end":
                try channel.writeOutbound(HTTPClientRequestPart.end(nil))
            case "request end, closing":
                closer.armed = true
                try channel.writeOutbound(HTTPClientRequestPart.end(nil))
            case "body":
                channel.pipeline.fireChannelRead(HTTPClientResponsePart.body(ByteBuffer(string: "ok")))
            case "end":
                channel.pipeline.fireChannelRead(HTTPClientResponsePart.end(nil))
            case "error":
                channel.pipeline.fireErrorCaught(ChannelError.ioOnClosedChannel)
            case "inactive":
                channel.pipeline.fireChannelInactive()
            default:
                let status = try #require(Int(event.dropFirst("head ".count)), "unknown event \(event)")
                let head = HTTPResponseHead(version: .http2, status: HTTPResponseStatus(statusCode: status))
                channel.pipeline.fireChannelRead(HTTPClientResponsePart.head(head))
            }
        }
        #expect(recorder.events == delivered)
        #expect(hold.state == state)
        _ = try? channel.finish()
    }

    // MARK: The engine's settings (AHCTransport)

    /// The stream initializer completes before it returns, so async-http-client writes the request in the same call
    /// that made the stream: with a future completed a turn later, a connection that closed in that turn failed a
    /// stream whose handler had no request yet, and AHC force-unwrapped it (`HTTP2ClientRequestHandler.swift:249`).
    /// The connection initializers complete at once too.
    @Test func theEnginesInitializersCompleteBeforeTheyReturn() async throws {
        let transport = AHCTransport(configuration: Session.Configuration(), canShutDown: true)
        let configuration = try #require(Self.engineConfiguration(of: transport))
        let loop = EmbeddedEventLoop()
        let stream = EmbeddedChannel(loop: loop)
        try stream.pipeline.syncOperations.addHandler(HTTP2FramePayloadToHTTP1ClientCodec(httpProtocol: .https))
        let streamInitializer = try #require(configuration.http2StreamChannelDebugInitializer)
        let initialized = streamInitializer(stream)
        // The embedded loop runs nothing submitted to it until told: only a future completed already is complete.
        #expect(Self.isComplete(initialized))
        loop.run()
        try await initialized.get()
        _ = try stream.pipeline.syncOperations.handler(type: HTTP2ResponseEndHold.self)
        let connection = EmbeddedChannel(loop: loop)
        let http2Initializer = try #require(configuration.http2ConnectionDebugInitializer)
        let http1Initializer = try #require(configuration.http1_1ConnectionDebugInitializer)
        #expect(Self.isComplete(http2Initializer(connection)))
        #expect(Self.isComplete(http1Initializer(connection)))
        _ = try? stream.finish()
        _ = try? connection.finish()
        try await transport.shutdown()
    }

    /// A connection has 2^30 client stream IDs, and NIOHTTP2 traps when it hands out the last one; the engine retires
    /// each connection after 2^29 streams. Opening 2^30 streams is out of a test's reach, and that async-http-client
    /// retires a connection at its `maximumUsesPerConnection` is its own tested behaviour (`HTTP2IdleHandler`), so
    /// the setting is what this reads.
    @Test func everyConnectionIsRetiredLongBeforeItsStreamIDsRunOut() async throws {
        let transport = AHCTransport(configuration: Session.Configuration(), canShutDown: true)
        let configuration = try #require(Self.engineConfiguration(of: transport))
        #expect(configuration.maximumUsesPerConnection == 1 << 29)
        try await transport.shutdown()
    }

    // MARK: Support

    /// A whole answer on `stream`: 200, `ok`.
    static func answer(stream: UInt32) -> [UInt8] {
        RawHTTP2Server.headers(stream: stream, [(":status", "200"), ("content-length", "2")], endStream: false)
            + RawHTTP2Server.data(stream: stream, Array("ok".utf8), endStream: true)
    }

    /// Runs the probe's `kind` against `server`, and returns how it ended and the frames it sent.
    static func probe(
        _ kind: String,
        _ server: RawHTTP2Server,
        _ options: [String] = []
    ) async throws -> (Probe.Outcome, [Frame]) {
        let ca = FileManager.default.temporaryDirectory.appendingPathComponent("kite-h2-ca-\(UUID()).pem")
        try server.certificatePEM.write(to: ca, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: ca) }
        let outcome = try await Probe.run(kind, "https://127.0.0.1:\(server.port)/", ["--ca", ca.path] + options)
        // The probe has exited, so its connection closes and the server's record ends.
        var frames: [Frame] = []
        for await frame in server.received { frames.append(frame) }
        try await server.shutdown()
        return (outcome, frames)
    }

    static func stream(of frame: Frame) -> UInt32? {
        switch frame {
        case .headers(let stream, _, _), .data(let stream, _, _, _), .rstStream(let stream, _),
            .windowUpdate(let stream, _), .other(_, let stream):
            stream
        case .settings:
            nil
        }
    }

    /// The configuration the transport gave async-http-client (its direct client's, which AHC keeps internal).
    static func engineConfiguration(of transport: AHCTransport) -> HTTPClient.Configuration? {
        guard let clients = Mirror(reflecting: transport).descendant("clients") as? EngineClients else { return nil }
        return Mirror(reflecting: clients.direct).descendant("configuration") as? HTTPClient.Configuration
    }

    /// Whether `future` is complete now (its callbacks run at once, on the embedded loop's thread).
    static func isComplete(_ future: EventLoopFuture<Void>) -> Bool {
        let completed = NIOLockedValueBox(false)
        future.whenComplete { _ in completed.withLockedValue { $0 = true } }
        return completed.withLockedValue { $0 }
    }

    /// Closes the stream when its next flush goes out, as NIOHTTP2 does when the request's end follows the answer's.
    final class CloseOnFlush: ChannelOutboundHandler {
        typealias OutboundIn = HTTPClientRequestPart

        var armed = false

        func flush(context: ChannelHandlerContext) {
            context.flush()
            guard self.armed else { return }
            self.armed = false
            context.fireChannelInactive()
        }
    }

    /// Names what reaches the handler behind the hold.
    final class Recorder: ChannelInboundHandler {
        typealias InboundIn = HTTPClientResponsePart

        private(set) var events: [String] = []

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch self.unwrapInboundIn(data) {
            case .head(let head): self.events.append("head \(head.status.code)")
            case .body: self.events.append("body")
            case .end: self.events.append("end")
            }
        }

        func channelReadComplete(context: ChannelHandlerContext) {
            self.events.append("read complete")
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            self.events.append("error")
        }

        func channelInactive(context: ChannelHandlerContext) {
            self.events.append("inactive")
        }
    }
}
