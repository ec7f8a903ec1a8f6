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
/// bytes arrived; one after it, ``ResponseHeadGuard``, follows the exchanges, and turns the close of a reused
/// connection that answered nothing into ``ClosedBeforeAnswer``, which async-http-client then fails the exchange with.
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
        try operations.addHandler(ResponseHeadGuard(record: record), position: .after(decoder))
    }

    /// One connection's exchanges, on its event loop only.
    final class Record {
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

        /// Whether the exchange out is a reused connection's that has had no byte of an answer; it is over then.
        func takeStaleExchange() -> Bool {
            guard case .awaitingAnswer(reused: true) = self.exchange else { return false }
            self.exchange = .idle
            return true
        }
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

    /// Whether `error` says the connection closed: a reset, a broken pipe, an end of input, or a TLS connection that
    /// ended without `close_notify`.
    static func isClose(_ error: any Error) -> Bool {
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
