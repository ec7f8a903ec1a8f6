import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOHTTP2

/// What the engine's connections tell a streamed request body: whether the engine pulled any of it, and whether
/// the server answered with 300 or more before the body was sent.
///
/// async-http-client 1.37 stops pulling a body once such an answer's head arrives, and if the task that pulls the
/// body is then waiting to write a chunk when the answer ends, nothing ever resumes it: the task, its transaction and
/// its connection stay for the life of the process (RELIABILITY.md, "an upload answered early"). That task waits
/// only when it is handed a chunk after the answer's head. So a handler on every connection and HTTP/2 stream
/// (``Registry``) marks the body's watch when such a head arrives, before the engine sees the head, and the body (``PacedBody``)
/// hands over no chunk after the mark: it waits until the engine has taken the answer's end, then fails, which ends
/// the engine's task (the exchange is over by then, so the failure reaches nobody). A chunk handed over just before
/// the mark, or a task already waiting on a connection that had stopped taking writes, is still kept.
final class UploadWatch: Sendable {
    private let state = NIOLockedValueBox(State())

    private struct State {
        var pulled = false
        var answeredEarly = false
        var answerOver = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    /// The value of the tag header that ties an exchange to this watch.
    let tag: String

    fileprivate init(tag: String) {
        self.tag = tag
    }

    /// Whether the engine asked for any of the body.
    var wasPulled: Bool {
        self.state.withLockedValue { $0.pulled }
    }

    func markPulled() {
        self.state.withLockedValue { $0.pulled = true }
    }

    /// Whether the server answered with 300 or more before the body was sent; once it did, returns only after the
    /// engine took the answer's end (or the connection closed).
    func answeredEarly() async -> Bool {
        guard self.state.withLockedValue({ $0.answeredEarly }) else { return false }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let over = self.state.withLockedValue { state in
                if !state.answerOver { state.waiter = continuation }
                return state.answerOver
            }
            if over { continuation.resume() }
        }
        return true
    }

    fileprivate func markAnsweredEarly() {
        self.state.withLockedValue { $0.answeredEarly = true }
    }

    fileprivate func markAnswerOver() {
        let waiter = self.state.withLockedValue { state in
            state.answerOver = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    /// The error a body answered early ends with; the engine reports it nowhere, its exchange being over.
    struct AnsweredEarly: Error {}

    /// The watches of bodies whose request head is about to be written, by tag, and the handler that finds them.
    final class Registry: Sendable {
        /// The header that carries an exchange's tag to the connection's handler, which removes it.
        static let tagName = "X-Kite-Upload-Watch"

        private let watches = TagRegistry<UploadWatch>()

        /// A watch for an exchange about to be sent; its tag goes in the request head.
        func makeWatch() -> UploadWatch {
            self.watches.register { UploadWatch(tag: $0) }
        }

        /// Forgets `watch` (its head was never written: the handler forgets the others).
        func forget(_ watch: UploadWatch) {
            self.watches.remove(watch.tag)
        }

        /// How many watches wait for their head to be written (for tests: none once requests are over).
        var registeredCount: Int { self.watches.count }

        fileprivate func take(_ tag: String) -> UploadWatch? {
            self.watches.remove(tag)
        }

        /// Adds the handler to an HTTP/1 connection, after its response decoder (so it sees each response part
        /// before the engine's handler, and each request part before the encoder).
        func install(on channel: any Channel) throws {
            let operations = channel.pipeline.syncOperations
            let decoder = try operations.handler(type: ByteToMessageHandler<HTTPResponseDecoder>.self)
            try operations.addHandler(Handler(registry: self), position: .after(decoder))
        }

        /// Adds the handler to an HTTP/2 stream (one exchange), after its HTTP/1-style codec.
        func install(onStream stream: any Channel) throws {
            let operations = stream.pipeline.syncOperations
            let codec = try operations.handler(type: HTTP2FramePayloadToHTTP1ClientCodec.self)
            try operations.addHandler(Handler(registry: self), position: .after(codec))
        }
    }

    /// Ties each exchange with a watched body to its watch, marks the watch when a head of 300 or more arrives
    /// before the body's end was written, and tells it when that answer is over.
    private final class Handler: ChannelDuplexHandler, RemovableChannelHandler {
        typealias InboundIn = HTTPClientResponsePart
        typealias InboundOut = HTTPClientResponsePart
        typealias OutboundIn = HTTPClientRequestPart
        typealias OutboundOut = HTTPClientRequestPart

        private let registry: Registry
        /// The watch of the exchange on the connection, until its answer is over.
        private var current: UploadWatch?
        private var bodySent = false
        /// An interim answer (1xx) is on its way: its end does not end the exchange.
        private var interim = false

        init(registry: Registry) {
            self.registry = registry
        }

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            switch self.unwrapOutboundIn(data) {
            case .head(var head):
                guard let tag = head.headers.first(name: Registry.tagName) else { break }
                head.headers.remove(name: Registry.tagName)
                self.finishCurrent(context)
                self.current = self.registry.take(tag)
                self.bodySent = false
                context.write(self.wrapOutboundOut(.head(head)), promise: promise)
                return
            case .end:
                self.bodySent = true
            case .body:
                break
            }
            context.write(data, promise: promise)
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard let current = self.current else {
                context.fireChannelRead(data)
                return
            }
            switch self.unwrapInboundIn(data) {
            case .head(let head):
                self.interim = head.status.code < 200
                if !self.bodySent, head.status.code >= 300 { current.markAnsweredEarly() }
                context.fireChannelRead(data)
            case .body:
                context.fireChannelRead(data)
            case .end:
                // The engine takes the end first: the body fails only once the exchange is over.
                context.fireChannelRead(data)
                if self.interim {
                    self.interim = false
                } else {
                    self.finishCurrent(context)
                }
            }
        }

        func channelInactive(context: ChannelHandlerContext) {
            context.fireChannelInactive()
            self.finishCurrent(context)
        }

        func handlerRemoved(context: ChannelHandlerContext) {
            self.finishCurrent(context)
        }

        /// Tells the current watch its answer is over, in a later turn of the event loop: the engine's handler closes
        /// the connection (and this handler hears `channelInactive`) before it hands the answer's end to the
        /// exchange, in the same turn. A body told at once could fail the exchange while its response still streams.
        private func finishCurrent(_ context: ChannelHandlerContext) {
            guard let current = self.current else { return }
            self.current = nil
            context.eventLoop.execute { current.markAnswerOver() }
        }
    }
}
