import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// The event loop of the HTTP/1 connection that last started a request, so that a stream's engine delegate can run
/// on it.
///
/// AHC's delegate API runs a request's delegate on the event loop it was given (`eventLoopGroup.any()` when
/// indifferent) while the pooled connection that serves it may be on the other one; then every callback hops
/// between the two loops, a thread wake-up each (seen as 0.9 loop-to-loop wake-ups per `getJSON` of the generated
/// client, where AHC's async API has none). Given this loop as the delegate's, the pool also prefers an idle
/// connection on it, so a caller that sends one request after another keeps to one loop.
final class ConnectionLoops: Sendable {
    private let latest = NIOLockedValueBox<(any EventLoop)?>(nil)

    /// The loop of the connection that last started a request, or `nil` before the first.
    var last: (any EventLoop)? {
        self.latest.withLockedValue { $0 }
    }

    /// Adds the handler that notes each request's loop to an HTTP/1 connection, after its response decoder.
    func install(on channel: any Channel) throws {
        let operations = channel.pipeline.syncOperations
        let decoder = try operations.handler(type: ByteToMessageHandler<HTTPResponseDecoder>.self)
        try operations.addHandler(Noting(loops: self), position: .after(decoder))
    }

    private func note(_ loop: any EventLoop) {
        self.latest.withLockedValue { $0 = loop }
    }

    /// Notes the connection's loop as each request head goes out.
    private final class Noting: ChannelOutboundHandler, RemovableChannelHandler {
        typealias OutboundIn = HTTPClientRequestPart
        typealias OutboundOut = HTTPClientRequestPart

        private let loops: ConnectionLoops

        init(loops: ConnectionLoops) {
            self.loops = loops
        }

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            if case .head = self.unwrapOutboundIn(data) { self.loops.note(context.eventLoop) }
            context.write(data, promise: promise)
        }
    }
}
