import AsyncHTTPClient
import NIOCore
import NIOHTTP1

/// The idle-read timeout of every exchange on a connection, whatever reads its body: fails the exchange when
/// nothing arrived for `timeout` while the engine was asking for more.
///
/// async-http-client's own read timeout restarts only when bytes arrive and keeps counting while the reader holds
/// the body back, so a download or stream whose reader was suspended for longer than the timeout failed when
/// resumed, though the server had been waiting the whole time. Kite therefore turns AHC's off and adds this
/// handler to every HTTP/1 connection and HTTP/2 stream (behind AHC's codec, in front of its request handler),
/// so that data requests, downloads and streams share one connection pool. It counts from the request's end
/// (as AHC does) until the response's end, restarts with every part that arrives, and stops counting while no
/// read is pending: AHC passes a read on only when the body's reader wants more.
final class IdleReadHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias InboundOut = HTTPClientResponsePart
    typealias OutboundIn = HTTPClientRequestPart
    typealias OutboundOut = HTTPClientRequestPart

    private let timeout: TimeAmount
    /// From the request's end until the response's end.
    private var waiting = false
    /// The current request's response has ended (it may end before the request does).
    private var responded = false
    /// The engine asked for a read that has not been answered yet. A connection reads from the start (its first
    /// read was asked for before this handler was added); after each read, only if the engine passes one on.
    private var readPending = true
    /// When something last arrived, or the engine last asked for more after a pause.
    private var lastActivity = NIODeadline.now()
    private var check: Scheduled<Void>?

    init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch self.unwrapOutboundIn(data) {
        case .head:
            self.responded = false
        case .body:
            break
        case .end:
            if !self.responded {
                self.waiting = true
                self.lastActivity = .now()
                self.schedule(context, at: self.lastActivity + self.timeout)
            }
        }
        context.write(data, promise: promise)
    }

    func read(context: ChannelHandlerContext) {
        if !self.readPending {
            self.readPending = true
            self.lastActivity = .now()
        }
        context.read()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        self.lastActivity = .now()
        if case .end = self.unwrapInboundIn(data) {
            self.responded = true
            self.stop()
        }
        context.fireChannelRead(data)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        self.readPending = false
        context.fireChannelReadComplete()
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.stop()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.stop()
    }

    private func stop() {
        self.waiting = false
        self.check?.cancel()
        self.check = nil
    }

    /// Checks at `deadline` (one timer per wait, moved only when it fires, not with every part).
    private func schedule(_ context: ChannelHandlerContext, at deadline: NIODeadline) {
        self.check?.cancel()
        self.check = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) {
            self.fire(context)
        }
    }

    private func fire(_ context: ChannelHandlerContext) {
        self.check = nil
        guard self.waiting else { return }
        let now = NIODeadline.now()
        let due = self.lastActivity + self.timeout
        guard self.readPending, due <= now else {
            // Held back by the reader (no read pending), or something arrived since.
            self.schedule(context, at: self.readPending ? due : now + self.timeout)
            return
        }
        self.stop()
        // Toward AHC's request handler, which fails the exchange with AHC's own read timeout and closes.
        context.fireErrorCaught(HTTPClientError.readTimeout)
        context.close(promise: nil)
    }
}
