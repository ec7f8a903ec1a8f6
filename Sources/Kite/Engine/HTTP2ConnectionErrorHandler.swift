import NIOCore
import NIOHTTP2

/// Retires an HTTP/2 connection after NIOHTTP2 reports a connection error on it, and reads on past the frame that
/// caused it.
///
/// NIOHTTP2 1.46 answers a connection error (for example a DATA frame for a stream it has closed and no longer
/// lists among its last 32 reset ones, `NoSuchStream`: a server still sending a download the client cancelled)
/// by sending `GOAWAY`, reporting the error and stopping the frame loop of that read. It leaves closing to its
/// user (RFC 9113 §5.4.1: after a connection error, the endpoint closes the connection). async-http-client 1.37
/// does not act on the error: its pool went on opening streams on the connection, and the frames that came after
/// the offending one in the same read (another stream's answer) waited in the decoder for bytes that never came.
/// A soak run held such a connection open for minutes, and a request on it got nothing until its idle-read
/// timeout (RELIABILITY.md, "The descriptor that comes and goes").
///
/// This handler sits between NIOHTTP2's handler and AHC's idle handler. On the first connection error it passes
/// AHC a `GOAWAY` of its own (no stream refused), which is what AHC does for a server's: the pool sends no new
/// stream to the connection, and AHC closes it when its last open stream closes. With no stream open, nothing
/// would close it, so the handler does, a second later if no stream was opened meanwhile (one the pool handed
/// out just before is counted by AHC, which closes after it). Closing a connection with streams open is left to AHC:
/// doing it here made AHC 1.37 trap in `HTTP2ClientRequestHandler` (a force-unwrapped request, once in six runs).
/// After a `NoSuchStream`, whose frame was read whole, it runs NIOHTTP2's frame loop once more on the next turn of
/// the event loop, so the frames behind it are delivered. Errors of one stream (`StreamError`) and errors that are
/// not NIOHTTP2's (TLS, I/O: the connection is closing anyway) pass through untouched.
///
/// It also gives async-http-client's pool back the streams NIOHTTP2 never opened. The pool counts a stream it leases
/// as used until NIOHTTP2 reports it closed (`StreamClosedEvent`), but a stream whose request was cancelled before its
/// head was written closes without NIOHTTP2 ever knowing it, and so without that report: the connection stayed "in
/// use", so its idle timeout never closed it (the soak's 17th descriptor, open through minutes of pauses). When such a
/// stream closes (``watch(stream:)``), this handler reports an opening and a closing of a stream no one has, which
/// AHC's idle handler counts and its multiplexer ignores.
///
/// It also tells the streams a server's `GOAWAY` left unprocessed (above its last stream, as nginx does after 1,000
/// requests on a connection) that they were refused. NIOHTTP2 1.46 closes them with `CANCEL`, which a server's
/// `RST_STREAM` also sends for a stream it may have processed, although its documentation says `REFUSED_STREAM`
/// (`StreamClosedEvent`); with `REFUSED_STREAM` the request is sent again on another connection (RFC 9113 §8.7).
///
/// It refuses server push. Kite's `SETTINGS` say `ENABLE_PUSH = 0`, but NIOHTTP2 1.46 enforces that only once the
/// server has acknowledged them, and accepts a `PUSH_PROMISE` until then. AHC's idle handler counts every stream
/// NIOHTTP2 reports, so the pushed stream's closing made the pool release a stream it never leased, and the request's
/// own closing then trapped (`precondition(usedStreams > 0)`, `HTTPConnectionPool+HTTP2Connections.swift:242`). So a
/// `PUSH_PROMISE` goes no further: the handler resets the promised stream (`REFUSED_STREAM`) before NIOHTTP2 reads the
/// next frame, and it never passes on the opening or closing of a stream the server started (an even ID).
///
/// It also watches the server's initial stream window (``HTTP2SendWindowWatch``, see there): a `SETTINGS` that lowers
/// it retires the connection as a connection error does, and marks its streams, so that none hands NIOHTTP2 the empty
/// `DATA` frame that NIOHTTP2 traps on when the stream's window is below zero.
final class HTTP2ConnectionErrorHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTP2Frame
    typealias InboundOut = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    /// The server's initial stream window and the streams' guards (found here by each stream's guard).
    let sendWindow = HTTP2SendWindowWatch()
    /// Streams opened and not yet closed, as NIOHTTP2 reports them to AHC's idle handler behind this one.
    private var openStreams = 0
    /// Streams opened so far.
    private var createdStreams = 0
    /// A `GOAWAY` was passed on.
    private var retired = false
    /// The last stream the server processed, from its `GOAWAY`.
    private var lastProcessedStream: HTTP2StreamID?

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch self.unwrapInboundIn(data).payload {
        case .goAway(let lastStreamID, _, _):
            self.lastProcessedStream = min(self.lastProcessedStream ?? .maxID, lastStreamID)
        case .pushPromise(let push):
            // Written straight into NIOHTTP2's handler, which closes the promised stream before it reads on: frames
            // the server sends for it are then those of a stream reset a moment ago, which NIOHTTP2 ignores.
            let refusal = HTTP2Frame(streamID: push.pushedStreamID, payload: .rstStream(.refusedStream))
            context.writeAndFlush(self.wrapOutboundOut(refusal), promise: nil)
            return
        case .settings(.settings(let settings)):
            guard self.sendWindow.settingsReceived(settings) else { break }
            // AHC's idle handler reads the settings first (its stream limit), then hears of the retirement.
            context.fireChannelRead(data)
            self.sendWindow.abandonWaitingFrames()
            // The settings' ACK and the abandoned streams' resets go out before AHC closes a connection that the
            // retirement leaves with no stream open.
            context.flush()
            self.retire(context: context)
            self.closeWhenIdle(context: context)
            return
        default:
            break
        }
        context.fireChannelRead(data)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        switch event {
        case let created as NIOHTTP2StreamCreatedEvent:
            // A pushed stream (refused in `channelRead`) is none of the pool's.
            guard !created.streamID.isServerInitiated else { return }
            self.openStreams += 1
            self.createdStreams += 1
            self.sendWindow.streamOpened(initialWindowSize: created.localInitialWindowSize)
        case let closed as StreamClosedEvent:
            guard !closed.streamID.isServerInitiated else { return }
            self.openStreams = max(0, self.openStreams - 1)
            // NIOHTTP2 fires the closures a GOAWAY causes after the GOAWAY frame.
            if closed.reason == .cancel, let last = self.lastProcessedStream, closed.streamID > last {
                let refused = StreamClosedEvent(streamID: closed.streamID, reason: .refusedStream)
                context.fireUserInboundEventTriggered(refused)
                return
            }
        default:
            break
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard error is any NIOHTTP2Error, !(error is NIOHTTP2Errors.StreamError), context.channel.isActive else {
            context.fireErrorCaught(error)
            return
        }
        self.retire(context: context)
        context.fireErrorCaught(error)
        if error is NIOHTTP2Errors.NoSuchStream {
            context.eventLoop.assumeIsolated().execute {
                guard context.channel.isActive else { return }
                Self.readBufferedFrames(context: context)
            }
        }
        self.closeWhenIdle(context: context)
    }

    /// Passes AHC a `GOAWAY` of its own, once: its pool then sends no new stream to the connection.
    private func retire(context: ChannelHandlerContext) {
        guard !self.retired else { return }
        self.retired = true
        let goAway = HTTP2Frame(
            streamID: .rootStream,
            payload: .goAway(lastStreamID: .maxID, errorCode: .noError, opaqueData: nil)
        )
        context.fireChannelRead(self.wrapInboundOut(goAway))
    }

    /// Closes the retired connection in a second if no stream is open then and none opened meanwhile.
    ///
    /// AHC's idle handler does not close a connection that gets a GOAWAY with no stream open. A stream the pool
    /// handed out just before the GOAWAY is created, and counted, only when its head is written, a turn or two of
    /// the event loop later, and closing at once would cut it: a second's grace lets it start, and AHC then
    /// closes after it.
    private func closeWhenIdle(context: ChannelHandlerContext) {
        let created = self.createdStreams
        context.eventLoop.assumeIsolated().scheduleTask(in: .seconds(1)) {
            guard context.channel.isActive, self.openStreams == 0, self.createdStreams == created else { return }
            context.close(promise: nil)
        }
    }

    /// Watches a stream async-http-client's pool leased: when it closes without NIOHTTP2 having opened it (it never
    /// got a stream ID: its request was cancelled before its head was written), the connection's handler gives the
    /// pool its stream back. Call on the stream's event loop.
    static func watch(stream: any Channel) {
        guard let parent = stream.parent else { return }
        stream.closeFuture.assumeIsolated().whenComplete { _ in
            guard (try? stream.syncOptions?.getOption(HTTP2StreamChannelOptions.streamID)) == nil,
                let handler = try? parent.pipeline.syncOperations.handler(type: HTTP2ConnectionErrorHandler.self),
                let context = try? parent.pipeline.syncOperations.context(handler: handler)
            else { return }
            handler.releaseUnopenedStream(context: context)
        }
    }

    /// Reports the opening and closing of a stream that does not exist (`maxID`, which no stream reaches), so that
    /// AHC's idle handler tells the pool a stream closed.
    private func releaseUnopenedStream(context: ChannelHandlerContext) {
        let phantom = HTTP2StreamID.maxID
        context.fireUserInboundEventTriggered(
            NIOHTTP2StreamCreatedEvent(streamID: phantom, localInitialWindowSize: nil, remoteInitialWindowSize: nil)
        )
        context.fireUserInboundEventTriggered(StreamClosedEvent(streamID: phantom, reason: .cancel))
    }

    /// Runs NIOHTTP2's frame loop over the bytes it holds, as a read of no new bytes would: its handler is called
    /// with its own context, as its pipeline calls it.
    private static func readBufferedFrames(context: ChannelHandlerContext) {
        let operations = context.pipeline.syncOperations
        guard let http2 = try? operations.handler(type: NIOHTTP2Handler.self),
            let http2Context = try? operations.context(handler: http2)
        else { return }
        http2.channelRead(context: http2Context, data: NIOAny(ByteBuffer()))
        http2.channelReadComplete(context: http2Context)
    }
}
