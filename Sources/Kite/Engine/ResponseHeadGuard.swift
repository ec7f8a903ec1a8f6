import NIOCore
import NIOHTTP1

/// Refuses HTTP/1 response heads that async-http-client must never see, before it sees them: on every HTTP/1
/// connection, right after the response decoder (``HTTP2ResponseHeadGuard`` does the same for HTTP/2 streams).
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
final class ResponseHeadGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias InboundOut = HTTPClientResponsePart
    typealias OutboundIn = HTTPClientRequestPart
    typealias OutboundOut = HTTPClientRequestPart

    /// The current request offered an upgrade (`Upgrade` field).
    private var offersUpgrade = false
    /// An answer was refused: its remaining parts are dropped until the next request.
    private var refusing = false

    /// Adds the guard to an HTTP/1 connection, right after its response decoder.
    static func install(on channel: any Channel) throws {
        let operations = channel.pipeline.syncOperations
        let decoder = try operations.handler(type: ByteToMessageHandler<HTTPResponseDecoder>.self)
        try operations.addHandler(ResponseHeadGuard(), position: .after(decoder))
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .head(let head) = self.unwrapOutboundIn(data) {
            self.offersUpgrade = head.headers.contains(name: "Upgrade")
            self.refusing = false
        }
        context.write(data, promise: promise)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !self.refusing else { return }
        if case .head(let head) = self.unwrapInboundIn(data),
            let problem = Self.problem(status: Int(head.status.code), offersUpgrade: self.offersUpgrade)
        {
            self.refusing = true
            context.fireErrorCaught(KiteError(code: .invalidResponse, message: problem))
            return
        }
        context.fireChannelRead(data)
    }

    /// Why a head with `status` is refused, or `nil` when the engine may have it.
    static func problem(status: Int, offersUpgrade: Bool) -> String? {
        switch status {
        case 100...999 where status != 101:
            return nil
        case 101:
            return offersUpgrade
                ? nil : "the server switched protocols (101) though the request offered no upgrade"
        default:
            let digits = String(status)
            let shown = digits.count < 3 ? String(repeating: "0", count: 3 - digits.count) + digits : digits
            return "the response status \(shown) is not a three-digit code in 100...999"
        }
    }
}
