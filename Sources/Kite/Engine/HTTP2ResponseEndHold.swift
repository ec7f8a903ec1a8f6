import NIOCore
import NIOHTTP1
import NIOHTTP2

/// Holds back the end of an HTTP/2 answer of 200...299 that arrives before the request's end was written, until it
/// is written, so that async-http-client's stream handler never sees an answer end while it still sends a body.
///
/// RFC 9110 §15 lets a server answer before it has read the whole request, and RFC 9113 §8.1 lets it then reset the
/// stream with `NO_ERROR`. async-http-client 1.37 (its issue #922) drops its request when such an answer ends
/// (`HTTP2ClientRequestHandler`, `.forwardResponseEnd`) though its state machine still streams the body: the body's
/// later parts and end are thrown away, the stream stays open, and the next event for it (the server's
/// `RST_STREAM`, the connection's close, the session's shutdown, a `WINDOW_UPDATE` that resumes the body)
/// force-unwraps the missing request and traps (`HTTP2ClientRequestHandler.swift:249` and `:228`).
///
/// This handler sits in front of async-http-client's, behind Kite's other stream handlers (they see the answer as it
/// came). It passes everything on, except the answer's end in that case, which it keeps with its trailers: the body
/// goes on, and once its end is written the handler hands the end over, so the engine ends the exchange as it does
/// for an answer that comes after the body. If the stream fails or closes first, the held end is dropped and the
/// failure reaches the engine with its request in place, which fails the exchange (a `RST_STREAM` with `NO_ERROR`
/// too: the engine cannot finish an answer and leave a body unfinished without losing track of it). An answer of
/// 300 or more passes untouched: the engine stops the body and ends that exchange itself.
final class HTTP2ResponseEndHold: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias InboundOut = HTTPClientResponsePart
    typealias OutboundIn = HTTPClientRequestPart
    typealias OutboundOut = HTTPClientRequestPart

    enum State: Equatable {
        /// The request's end is not written yet, and no final answer head came.
        case sending
        /// The request's end is not written yet, and the final answer head is in 200...299.
        case sendingAnswered
        /// The answer ended before the request did: its end, with these trailers, waits for the request's end.
        case holding(trailers: HTTPHeaders?)
        /// The request's end is being written; the held end follows it, and then the stream's close, if it `closed`
        /// meanwhile.
        case releasing(trailers: HTTPHeaders?, closed: Bool)
        /// The request's end was written, or the answer is 300 or more, or the stream failed or closed: everything
        /// passes.
        case passing
    }

    private(set) var state = State.sending

    /// Adds the handler to an HTTP/2 stream right after its HTTP/1-style codec. Install it before Kite's other
    /// handlers that go there: each of them is then added between the codec and this one.
    static func install(onStream stream: any Channel) throws {
        let operations = stream.pipeline.syncOperations
        let codec = try operations.handler(type: HTTP2FramePayloadToHTTP1ClientCodec.self)
        try operations.addHandler(HTTP2ResponseEndHold(), position: .after(codec))
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .end = self.unwrapOutboundIn(data) else {
            context.write(data, promise: promise)
            return
        }
        guard case .holding(let trailers) = self.state else {
            self.state = .passing
            context.write(data, promise: promise)
            return
        }
        // The request's end goes out first (the engine has marked it as sent already), so that the exchange is not
        // over for the engine, and a session shutting down then cannot cut it off. Sending it closes the stream,
        // whose answer has ended: that close waits until the held end has passed.
        self.state = .releasing(trailers: trailers, closed: false)
        context.write(data, promise: promise)
        context.flush()
        guard case .releasing(_, let closed) = self.state else { return }
        self.state = .passing
        context.fireChannelRead(self.wrapInboundOut(.end(trailers)))
        context.fireChannelReadComplete()
        if closed { context.fireChannelInactive() }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch (self.state, self.unwrapInboundIn(data)) {
        case (.sending, .head(let head)):
            // An interim head (1xx) leaves the final one to come.
            if head.status.code >= 300 {
                self.state = .passing
            } else if head.status.code >= 200 {
                self.state = .sendingAnswered
            }
        case (.sendingAnswered, .end(let trailers)):
            self.state = .holding(trailers: trailers)
            return
        case (.sending, .body), (.sending, .end), (.sendingAnswered, .head), (.sendingAnswered, .body),
            (.holding, _), (.releasing, _), (.passing, _):
            break
        }
        context.fireChannelRead(data)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A held end is dropped: the engine fails the exchange with its request in place.
        self.state = .passing
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if case .releasing(let trailers, _) = self.state {
            self.state = .releasing(trailers: trailers, closed: true)
            return
        }
        self.state = .passing
        context.fireChannelInactive()
    }
}
