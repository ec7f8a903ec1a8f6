import NIOCore
import NIOHPACK
import NIOHTTP2

/// Keeps empty DATA frames away from NIOHTTP2 on streams whose send window a server may have made negative.
///
/// A server may lower `SETTINGS_INITIAL_WINDOW_SIZE` at any time, and each open stream's send window drops by the
/// difference, below zero for a stream that had sent more than the new size (RFC 9113 §6.9.2). swift-nio-http2 1.46
/// traps when it then flushes a zero-length DATA frame on such a stream: a zero-length frame waits for no window, and
/// `OutboundFlowControlBuffer` slices it to the negative window (`readSlice(length:)!` on `nil`, release builds, at
/// `OutboundFlowControlBuffer.swift:463`; an `assert` at `:411` in debug builds). async-http-client 1.37 ends every
/// streamed request body with one: it flushes each part, so the codec's end is an empty `DATA` with `END_STREAM`.
///
/// The connection's ``HTTP2ConnectionErrorHandler`` owns one watch. It tells the watch the server's initial window
/// (each stream's opening carries it, and so does each `SETTINGS`); a `SETTINGS` that lowers it marks the watch for
/// good, and the handler retires the connection, so no new stream starts on it. A ``StreamGuard`` on each stream,
/// before the codec, then rewrites the stream's empty `DATA` with `END_STREAM` into a `HEADERS` frame with
/// `END_STREAM` and no fields (an empty trailer section, RFC 9113 §8.1), which NIOHTTP2 sends without slicing, and
/// drops an empty `DATA` without it (it carries nothing). Connections whose server never lowers its window keep the
/// usual empty `DATA`. An empty frame handed over before the mark may still wait in NIOHTTP2 (behind a connection
/// window the server has not reopened) when the window drops; the guard counts those until they are written, and on
/// the mark it fails their exchange and resets their stream, which drops the frame before NIOHTTP2 reaches it.
///
/// Used on the connection's event loop only, as its handlers are.
final class HTTP2SendWindowWatch {
    /// The server's initial stream window as last told; `nil` before the first stream opened.
    private var initialWindowSize: Int?
    /// The server lowered its initial window while streams could have sent more than the new size.
    private(set) var lowered = false
    /// The stream guards whose empty DATA frames NIOHTTP2 has not written yet.
    private var waiting: [ObjectIdentifier: StreamGuard] = [:]

    /// A stream opened with this initial send window (`NIOHTTP2StreamCreatedEvent.localInitialWindowSize`).
    func streamOpened(initialWindowSize: UInt32?) {
        if let initialWindowSize { self.initialWindowSize = Int(initialWindowSize) }
    }

    /// Takes the server's `SETTINGS`; returns whether they lower its initial window below what streams opened with.
    /// Before any stream opened, no stream has sent anything, so no window can drop below zero.
    func settingsReceived(_ settings: HTTP2Settings) -> Bool {
        guard let value = settings.last(where: { $0.parameter == .initialWindowSize })?.value else { return false }
        defer { self.initialWindowSize = value }
        guard let current = self.initialWindowSize, value < current else { return false }
        self.lowered = true
        return true
    }

    /// Fails the exchanges whose empty DATA frames still wait in NIOHTTP2, and resets their streams.
    func abandonWaitingFrames() {
        let guards = Array(self.waiting.values)
        self.waiting.removeAll()
        for streamGuard in guards { streamGuard.abandon() }
    }

    fileprivate func frameWaits(in streamGuard: StreamGuard) {
        self.waiting[ObjectIdentifier(streamGuard)] = streamGuard
    }

    fileprivate func framesWritten(in streamGuard: StreamGuard) {
        self.waiting[ObjectIdentifier(streamGuard)] = nil
    }

    /// Adds a guard to an HTTP/2 stream of a connection that has an ``HTTP2ConnectionErrorHandler``, right before the
    /// stream's HTTP/1-style codec.
    static func install(onStream stream: any Channel) throws {
        guard let parent = stream.parent,
            let handler = try? parent.pipeline.syncOperations.handler(type: HTTP2ConnectionErrorHandler.self)
        else { return }
        let operations = stream.pipeline.syncOperations
        let codec = try operations.handler(type: HTTP2FramePayloadToHTTP1ClientCodec.self)
        try operations.addHandler(StreamGuard(watch: handler.sendWindow), position: .before(codec))
    }

    /// One stream's side of the watch, between its channel and its codec.
    final class StreamGuard: ChannelOutboundHandler, RemovableChannelHandler {
        typealias OutboundIn = HTTP2Frame.FramePayload
        typealias OutboundOut = HTTP2Frame.FramePayload

        private let watch: HTTP2SendWindowWatch
        private var context: ChannelHandlerContext?
        /// Empty DATA frames handed to NIOHTTP2 and not written yet.
        private var waitingFrames = 0

        init(watch: HTTP2SendWindowWatch) {
            self.watch = watch
        }

        func handlerAdded(context: ChannelHandlerContext) {
            self.context = context
        }

        func handlerRemoved(context: ChannelHandlerContext) {
            self.context = nil
            self.watch.framesWritten(in: self)
        }

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            guard case .data(let payload) = self.unwrapOutboundIn(data), payload.data.readableBytes == 0,
                payload.paddingBytes == nil
            else {
                context.write(data, promise: promise)
                return
            }
            if self.watch.lowered {
                if payload.endStream {
                    let trailers = HTTP2Frame.FramePayload.Headers(headers: HPACKHeaders(), endStream: true)
                    context.write(self.wrapOutboundOut(.headers(trailers)), promise: promise)
                } else {
                    promise?.succeed(())
                }
                return
            }
            let written = promise ?? context.eventLoop.makePromise()
            self.waitingFrames += 1
            self.watch.frameWaits(in: self)
            written.futureResult.assumeIsolated().whenComplete { _ in
                self.waitingFrames -= 1
                if self.waitingFrames == 0 { self.watch.framesWritten(in: self) }
            }
            context.write(data, promise: written)
        }

        /// Fails the exchange and resets the stream: NIOHTTP2 then drops the stream's waiting frames.
        fileprivate func abandon() {
            guard let context else { return }
            context.fireErrorCaught(
                KiteError(
                    code: .connectionLost,
                    message:
                        "the server lowered its HTTP/2 initial window (SETTINGS_INITIAL_WINDOW_SIZE) while the request's "
                        + "end waited to be sent"
                )
            )
            context.close(promise: nil)
        }
    }
}
