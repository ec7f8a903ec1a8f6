import NIOCore
import NIOHTTP1

/// On every HTTP/1 connection, right after the response decoder: refuses the response heads async-http-client must
/// never see, before it sees them, and follows the exchanges for ``StaleConnectionWatch``. ``HTTP2ResponseHeadGuard``
/// does the first for HTTP/2 streams.
///
/// async-http-client 1.37 takes a head whose status is below 200 (101 aside) for an interim answer and waits for
/// the next head, so a final answer with a status below 100 (`HTTP/1.1 099 X`) left its request state machine
/// waiting for a head while the answer's end arrived, and it trapped (`HTTPRequestStateMachine`: "How can we receive
/// a response end, if we haven't a received a head"), taking the process with it. NIO's decoder reads any three
/// digits, so the status is checked here: one that is not a code in 100...999 fails the exchange as
/// ``KiteError/Code/invalidResponse`` naming it, and the rest of that answer is dropped (the engine closes the
/// connection on the error).
///
/// A `101 Switching Protocols` the request did not ask for (no `Upgrade` field) is refused the same way: RFC 9110
/// §15.2.2 lets a server switch only to a protocol the client offered, and the bytes that follow are not HTTP.
///
/// The stale-connection part turns the close of a reused connection that answered nothing into
/// ``StaleConnectionWatch/ClosedBeforeAnswer``, which async-http-client then fails the exchange with.
final class ResponseHeadGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias InboundOut = HTTPClientResponsePart
    typealias OutboundIn = HTTPClientRequestPart
    typealias OutboundOut = HTTPClientRequestPart

    /// The connection's exchanges, shared with the handler before the decoder.
    private let record: StaleConnectionWatch.Record
    /// The current request's header fields, looked at only when a `101` answers it (for `Upgrade`).
    private var requestHeaders = HTTPHeaders()
    /// An answer was refused: its remaining parts are dropped until the next request.
    private var refusing = false

    init(record: StaleConnectionWatch.Record) {
        self.record = record
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .head(let head) = self.unwrapOutboundIn(data) {
            self.record.exchange = .awaitingAnswer(reused: self.record.hasAnswered)
            self.requestHeaders = head.headers
            self.refusing = false
        }
        context.write(data, promise: promise)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch self.unwrapInboundIn(data) {
        case .head(let head):
            guard !self.refusing else { return }
            if let problem = Self.problem(
                status: Int(head.status.code),
                offersUpgrade: self.requestHeaders.contains(name: "Upgrade")
            ) {
                self.refusing = true
                context.fireErrorCaught(KiteError(code: .invalidResponse, message: problem))
                return
            }
        case .body:
            guard !self.refusing else { return }
        case .end:
            self.record.hasAnswered = true
            self.record.exchange = .idle
            guard !self.refusing else { return }
        }
        context.fireChannelRead(data)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if self.record.takeStaleExchange(), StaleConnectionWatch.isClose(error) {
            context.fireErrorCaught(StaleConnectionWatch.ClosedBeforeAnswer(underlying: error))
            return
        }
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if self.record.takeStaleExchange() {
            context.fireErrorCaught(StaleConnectionWatch.ClosedBeforeAnswer(underlying: nil))
        }
        context.fireChannelInactive()
    }

    /// Why a head with `status` is refused, or `nil` when the engine may have it; `offersUpgrade` is asked only for a
    /// `101`.
    static func problem(status: Int, offersUpgrade: @autoclosure () -> Bool) -> String? {
        switch status {
        case 100...999 where status != 101:
            return nil
        case 101:
            return offersUpgrade()
                ? nil : "the server switched protocols (101) though the request offered no upgrade"
        default:
            let digits = String(status)
            let shown = digits.count < 3 ? String(repeating: "0", count: 3 - digits.count) + digits : digits
            return "the response status \(shown) is not a three-digit code in 100...999"
        }
    }
}
