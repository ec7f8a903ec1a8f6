import NIOCore

/// Fails the exchange on an HTTP/1 connection whose channel stays unwritable for `timeout`: the
/// server (or a proxy) has stopped taking request body bytes.
///
/// async-http-client's own write timeout measures the opposite (how long *the client* produces
/// nothing while the channel is writable) and is cleared while the channel is unwritable, so a
/// server that stops reading an upload would stall the request forever. This handler is added
/// to every HTTP/1 connection through AHC's connection initializer (behind AHC's handlers); when
/// it fires, it sends ``IdleWriteTimeoutError`` through the whole pipeline, so AHC fails the
/// request with it and closes the connection.
final class IdleWriteHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    private let timeout: TimeAmount
    private var timer: Scheduled<Void>?

    init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive, !context.channel.isWritable {
            self.startTimer(context: context)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.stopTimer()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            self.stopTimer()
        } else if self.timer == nil {
            self.startTimer(context: context)
        }
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.stopTimer()
        context.fireChannelInactive()
    }

    private func startTimer(context: ChannelHandlerContext) {
        let pipeline = context.pipeline
        let channel = context.channel
        let timeout = self.timeout
        self.timer = context.eventLoop.scheduleTask(in: timeout) {
            guard !channel.isWritable else { return }
            // From the head, so the engine's request handler sees it and fails the request.
            pipeline.fireErrorCaught(IdleWriteTimeoutError(timeout: timeout))
            channel.close(promise: nil)
        }
    }

    private func stopTimer() {
        self.timer?.cancel()
        self.timer = nil
    }
}

/// The channel stayed unwritable for the idle-write timeout.
struct IdleWriteTimeoutError: Error {
    let timeout: TimeAmount
}
