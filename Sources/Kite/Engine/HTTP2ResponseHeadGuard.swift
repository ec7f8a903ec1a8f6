import NIOCore
import NIOHPACK
import NIOHTTP2

/// Refuses HTTP/2 response heads whose `:status` the engine cannot take, on every HTTP/2 stream, before NIOHTTP2's
/// HTTP/1-style codec reads it.
///
/// The codec (swift-nio-http2 1.46) reads `:status` with `Int(_:radix:)` and builds NIO's status from it, which traps
/// on a negative value (`:status: -1`, `UInt(statusCode)`); it traps on an empty one too (`first!` on its first
/// character); and it passes any other number on, where async-http-client 1.37 traps on a final answer below 100
/// as it does over HTTP/1 (``ResponseHeadGuard``). So each head before the final one must carry exactly one
/// `:status` of three digits (RFC 9113 §8.3.2, RFC 9110 §15) in 100...999, and never 101 (HTTP/2 has no upgrade,
/// RFC 9113 §8.6); anything else fails the exchange as ``KiteError/Code/invalidResponse`` naming the value, and the
/// rest of the stream is dropped (the engine resets it on the error). Trailers, after the final head, carry no
/// `:status` and pass.
///
/// An interim head that ends the stream is malformed (RFC 9113 §8.1) and refused the same way: the codec passes no
/// end for it, and the request waited for its idle-read timeout. And an answer that has no content by its status
/// (204, 304; RFC 9110 §6.4.1) has its DATA payloads dropped (their ends kept), as NIO's HTTP/1 decoder drops such a
/// body: NIOHTTP2 and async-http-client deliver them (NIOHTTP2 refuses DATA on an answer to `HEAD` itself).
final class HTTP2ResponseHeadGuard: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias InboundOut = HTTP2Frame.FramePayload

    private enum Stage {
        /// Until the final head: interim (1xx) heads may come first.
        case head
        /// After the final head; `content` when the answer may have a body.
        case rest(content: Bool)
        /// A head was refused: the stream's remaining frames are dropped.
        case refused
    }

    private var stage = Stage.head

    /// Adds the guard to an HTTP/2 stream, right before its HTTP/1-style codec.
    static func install(onStream stream: any Channel) throws {
        let operations = stream.pipeline.syncOperations
        let codec = try operations.handler(type: HTTP2FramePayloadToHTTP1ClientCodec.self)
        try operations.addHandler(HTTP2ResponseHeadGuard(), position: .before(codec))
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch self.stage {
        case .refused:
            return
        case .rest(content: true):
            break
        case .rest(content: false):
            if case .data(var payload) = self.unwrapInboundIn(data), payload.data.readableBytes > 0 {
                payload.data = .byteBuffer(context.channel.allocator.buffer(capacity: 0))
                payload.paddingBytes = nil
                context.fireChannelRead(self.wrapInboundOut(.data(payload)))
                return
            }
        case .head:
            if case .headers(let headers) = self.unwrapInboundIn(data) {
                var outcome = Self.status(in: headers.headers)
                if case .success(let status) = outcome, status < 200, headers.endStream {
                    outcome = .failure(Problem(reason: "the server ended the stream after an interim head (\(status))"))
                }
                switch outcome {
                case .failure(let problem):
                    self.stage = .refused
                    context.fireErrorCaught(KiteError(code: .invalidResponse, message: problem.reason))
                    return
                case .success(let status):
                    if status >= 200 { self.stage = .rest(content: status != 204 && status != 304) }
                }
            }
        }
        context.fireChannelRead(data)
    }

    struct Problem: Error {
        let reason: String
    }

    /// The status a response head carries, or why the engine must not read it.
    static func status(in headers: HPACKHeaders) -> Result<Int, Problem> {
        var value: String?
        for (name, field, _) in headers where name == ":status" {
            guard value == nil else { return .failure(Problem(reason: "the response has two :status fields")) }
            value = field
        }
        guard let value else { return .failure(Problem(reason: "the response has no :status")) }
        var status = 0
        for byte in value.utf8 {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9"), status < 100 else {
                return .failure(Problem(reason: "the response status \"\(value)\" is not a three-digit code"))
            }
            status = status * 10 + Int(byte - UInt8(ascii: "0"))
        }
        guard value.utf8.count == 3 else {
            return .failure(Problem(reason: "the response status \"\(value)\" is not a three-digit code"))
        }
        if let problem = ResponseHeadGuard.problem(status: status, offersUpgrade: false) {
            return .failure(Problem(reason: problem))
        }
        return .success(status)
    }
}
