import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// Tells an exchange that failed because the server had given up its keep-alive connection: the request went out on
/// a connection that had already served an answer, and the connection closed (FIN, RST, or TLS without
/// `close_notify`) before a single byte of this request's answer arrived.
///
/// A server may close an idle keep-alive connection at any moment (nginx's `keepalive_timeout`, gunicorn's 2 s),
/// without `Connection: close` on the answer before; a request written just then meets a closed connection. curl,
/// Go's `net/http` and OkHttp send such a request again on a new connection (RFC 9112 §9.3.1), and so does
/// ``AHCTransport``, for idempotent requests whose body can be made again (async-http-client 1.37 does not: its
/// issue #715). Two handlers on each HTTP/1 connection share one record: one before the response decoder notes that
/// bytes arrived; one after it follows the exchanges, and turns the close of a reused connection that answered
/// nothing into ``ClosedBeforeAnswer``, which async-http-client then fails the exchange with.
enum StaleConnectionWatch {
    /// The exchange's request went out on a reused connection that closed before any byte of its answer came.
    struct ClosedBeforeAnswer: Error {
        /// What closed it, when the connection said (a reset, a TLS shutdown without `close_notify`).
        let underlying: (any Error)?
    }

    /// Adds the two handlers to an HTTP/1 connection, around its response decoder.
    static func install(on channel: any Channel) throws {
        let operations = channel.pipeline.syncOperations
        let decoder = try operations.handler(type: ByteToMessageHandler<HTTPResponseDecoder>.self)
        let record = Record()
        try operations.addHandler(Bytes(record: record), position: .before(decoder))
        try operations.addHandler(Exchanges(record: record), position: .after(decoder))
    }

    /// One connection's exchanges, on its event loop only.
    private final class Record {
        enum Exchange {
            /// No request is out.
            case idle
            /// A request went out and nothing of its answer came yet; `reused` when an answer came before on this
            /// connection.
            case awaitingAnswer(reused: Bool)
            /// Bytes of the answer arrived.
            case answering
        }

        var exchange = Exchange.idle
        /// Whether the connection has ended an answer.
        var hasAnswered = false
    }

    /// Notes that bytes of an answer arrived, before the decoder reads them.
    private final class Bytes: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = ByteBuffer
        typealias InboundOut = ByteBuffer

        private let record: Record

        init(record: Record) {
            self.record = record
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            if case .awaitingAnswer = self.record.exchange { self.record.exchange = .answering }
            context.fireChannelRead(data)
        }
    }

    /// Follows the exchanges and reports the close of a reused connection that answered nothing.
    private final class Exchanges: ChannelDuplexHandler, RemovableChannelHandler {
        typealias InboundIn = HTTPClientResponsePart
        typealias InboundOut = HTTPClientResponsePart
        typealias OutboundIn = HTTPClientRequestPart
        typealias OutboundOut = HTTPClientRequestPart

        private let record: Record

        init(record: Record) {
            self.record = record
        }

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            if case .head = self.unwrapOutboundIn(data) {
                self.record.exchange = .awaitingAnswer(reused: self.record.hasAnswered)
            }
            context.write(data, promise: promise)
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            if case .end = self.unwrapInboundIn(data) {
                self.record.hasAnswered = true
                self.record.exchange = .idle
            }
            context.fireChannelRead(data)
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            if self.takeStaleExchange(), Self.isClose(error) {
                context.fireErrorCaught(ClosedBeforeAnswer(underlying: error))
                return
            }
            context.fireErrorCaught(error)
        }

        func channelInactive(context: ChannelHandlerContext) {
            if self.takeStaleExchange() {
                context.fireErrorCaught(ClosedBeforeAnswer(underlying: nil))
            }
            context.fireChannelInactive()
        }

        /// Whether the exchange out is a reused connection's that has had no byte of an answer; it is over then.
        private func takeStaleExchange() -> Bool {
            guard case .awaitingAnswer(reused: true) = self.record.exchange else { return false }
            self.record.exchange = .idle
            return true
        }

        /// Whether `error` says the connection closed: a reset, a broken pipe, an end of input, or a TLS connection
        /// that ended without `close_notify`.
        private static func isClose(_ error: any Error) -> Bool {
            if let error = error as? IOError {
                return [ECONNRESET, EPIPE, ECONNABORTED].contains(error.errnoCode)
            }
            if let error = error as? ChannelError {
                return [.eof, .inputClosed, .outputClosed, .ioOnClosedChannel, .alreadyClosed].contains(error)
            }
            if let error = error as? NIOSSLError, case .uncleanShutdown = error { return true }
            return false
        }
    }
}
