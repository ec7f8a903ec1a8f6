import AsyncHTTPClient
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// A response body gathered on the event loop and handed to the reading task: the engine side of a download to a
/// file (in batches) and of a stream (part by part).
///
/// AHC's async API hands a body over one socket read at a time (its stream buffers a single element), so
/// every read wakes the reading task on another thread and the event loop waits for it before reading on:
/// a 1 GiB download made 13,000 to 20,000 context switches. Through AHC's delegate API the event loop keeps
/// reading into this buffer. For a download it wakes the task when ``handOverBytes`` have gathered, when the
/// body ends or fails, or ``batchedHandOverDelay`` after the first part it holds; for a stream, with each part.
/// It stops reading (its future) at ``pauseBytes``. Parts that reached this buffer before a failure are handed
/// over before the failure, so a download writes them. (Parts AHC's connection still holds when the connection
/// closes never reach a delegate or a body stream: AHC drops them, on either API.)
///
/// While it pauses the event loop for the reader, AHC passes no read on, so ``IdleReadHandler`` does not count
/// the pause as the server's silence.
///
/// `@unchecked Sendable`: all mutable state is behind the lock (it holds the engine's errors, `any Error`).
final class BatchedBody: HTTPClientResponseDelegate, @unchecked Sendable {
    typealias Response = Void

    /// Gathered bytes that wake a waiting reader at once.
    static let handOverBytes = 512 << 10
    /// How long a download's waiting reader waits for ``handOverBytes`` before it gets what is there.
    static let batchedHandOverDelay = TimeAmount.milliseconds(1)
    /// Gathered bytes at which the event loop stops reading until the reader has taken half.
    static let pauseBytes = 2 << 20

    /// A waiting reader and what to resume it with.
    private typealias Wake = (CheckedContinuation<ByteBuffer?, any Error>, Result<ByteBuffer?, any Error>)

    private struct State {
        var task: HTTPClient.Task<Void>?
        /// The exchange was cancelled before ``attach(_:)``.
        var cancelled = false
        var head: HTTPResponseHead?
        var headWaiter: CheckedContinuation<HTTPResponseHead, any Error>?
        var parts = CircularBuffer<ByteBuffer>()
        var bytes = 0
        var ended = false
        var failure: (any Error)?
        /// The exchange has ended or failed.
        var isOver: Bool { self.ended || self.failure != nil }
        var bodyWaiter: CheckedContinuation<ByteBuffer?, any Error>?
        /// The future the event loop waits on while ``pauseBytes`` are gathered.
        var paused: EventLoopPromise<Void>?
        var handOverScheduled = false

        /// The first part gathered.
        mutating func takePart() -> ByteBuffer? {
            guard let part = self.parts.popFirst() else { return nil }
            self.bytes -= part.readableBytes
            return part
        }

        /// The paused event loop's future to complete, once the reader has taken half of what stopped it (or
        /// the exchange is over).
        mutating func release() -> EventLoopPromise<Void>? {
            guard let paused = self.paused,
                self.bytes <= BatchedBody.pauseBytes / 2 || self.isOver
            else { return nil }
            self.paused = nil
            return paused
        }

        /// The waiting reader and what it gets now; `nil` when no reader waits or it must wait on.
        mutating func wakeReader() -> Wake? {
            guard let waiter = self.bodyWaiter, let answer = self.answer() else { return nil }
            self.bodyWaiter = nil
            return (waiter, answer)
        }

        /// What a reader gets now: a part, the end (`nil`), the failure, or `nil` when it must wait.
        mutating func answer() -> Result<ByteBuffer?, any Error>? {
            if let part = self.takePart() { return .success(part) }
            if let failure = self.failure { return .failure(failure) }
            if self.ended { return .success(nil) }
            return nil
        }
    }

    private let state = NIOLockedValueBox(State())
    /// How long a waiting reader waits for more than one part; `nil` wakes it with each part at once.
    private let handOverDelay: TimeAmount?

    init(handOverDelay: TimeAmount?) {
        self.handOverDelay = handOverDelay
    }

    /// Hands over the engine's task, which ``cancel()`` cancels.
    func attach(_ task: HTTPClient.Task<Void>) {
        let cancelled = self.state.withLockedValue { state in
            // Kept only while the exchange runs: the engine holds this delegate until then.
            if !state.isOver { state.task = task }
            return state.cancelled
        }
        if cancelled { task.cancel() }
    }

    /// Whether the event loop waits for the reader (``pauseBytes`` gathered); for tests.
    var isPaused: Bool {
        self.state.withLockedValue { $0.paused != nil }
    }

    /// Cancels the exchange; the engine then reports the cancellation through `didReceiveError`.
    ///
    /// The parts gathered are dropped and a paused event loop is let go: async-http-client reports a
    /// cancellation only after the delegate's last `didReceiveBodyPart` future completes when it has already
    /// read the whole body, so a paused exchange whose reader went away (a cancelled download read slowly)
    /// waited for the reader forever, and kept the parts and the engine's buffered rest (found by the soak).
    func cancel() {
        let (task, paused) = self.state.withLockedValue { state -> (HTTPClient.Task<Void>?, EventLoopPromise<Void>?) in
            state.cancelled = true
            state.parts.removeAll()
            state.bytes = 0
            let paused = state.paused
            state.paused = nil
            return (state.isOver ? nil : state.task, paused)
        }
        task?.cancel()
        paused?.succeed()
    }

    /// Whether a part, the end or the failure is there, so ``next()`` returns without waiting.
    var isReady: Bool {
        self.state.withLockedValue { !$0.parts.isEmpty || $0.isOver }
    }

    /// Waits for the response head; cancelling the calling task cancels the exchange.
    func head() async throws -> HTTPResponseHead {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation {
                (continuation: CheckedContinuation<HTTPResponseHead, any Error>) in
                let ready = self.state.withLockedValue { state -> Result<HTTPResponseHead, any Error>? in
                    if let head = state.head { return .success(head) }
                    if let failure = state.failure { return .failure(failure) }
                    state.headWaiter = continuation
                    return nil
                }
                if let ready { continuation.resume(with: ready) }
            }
        } onCancel: {
            self.cancel()
        }
    }

    /// The next part of the body, or `nil` at its end; cancelling the calling task cancels the exchange.
    func next() async throws -> ByteBuffer? {
        let (ready, paused) = self.state.withLockedValue { state in (state.answer(), state.release()) }
        paused?.succeed()
        if let ready { return try ready.get() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<ByteBuffer?, any Error>) in
                let (ready, paused) = self.state.withLockedValue { state in
                    let ready = state.answer()
                    if ready == nil { state.bodyWaiter = continuation }
                    return (ready, state.release())
                }
                paused?.succeed()
                if let ready { continuation.resume(with: ready) }
            }
        } onCancel: {
            self.cancel()
        }
    }

    // MARK: The engine's side, on the event loop

    func didReceiveHead(task: HTTPClient.Task<Void>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        let waiter = self.state.withLockedValue { state in
            state.head = head
            defer { state.headWaiter = nil }
            return state.headWaiter
        }
        waiter?.resume(returning: head)
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Void>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        let (wake, scheduleHandOver, pause) = self.state.withLockedValue {
            state -> (Wake?, Bool, EventLoopFuture<Void>?) in
            // Cancelled: nobody reads what is left, which the engine hands over until it reports the cancellation.
            guard !state.cancelled else { return (nil, false, nil) }
            state.parts.append(buffer)
            state.bytes += buffer.readableBytes
            var wake: Wake?
            var schedule = false
            if state.bodyWaiter != nil {
                // A waiting reader took everything, so nothing is paused here.
                if state.bytes >= Self.handOverBytes || self.handOverDelay == nil {
                    wake = state.wakeReader()
                } else if !state.handOverScheduled {
                    state.handOverScheduled = true
                    schedule = true
                }
            }
            guard state.bytes >= Self.pauseBytes else { return (wake, schedule, nil) }
            let paused = state.paused ?? task.eventLoop.makePromise(of: Void.self)
            state.paused = paused
            return (wake, schedule, paused.futureResult)
        }
        if let (waiter, answer) = wake { waiter.resume(with: answer) }
        if scheduleHandOver, let handOverDelay {
            task.eventLoop.scheduleTask(in: handOverDelay) { self.handOverWhatIsThere() }
        }
        return pause ?? task.eventLoop.makeSucceededVoidFuture()
    }

    /// Wakes a waiting reader with what has gathered, ``handOverDelay`` after the first part.
    private func handOverWhatIsThere() {
        let wake = self.state.withLockedValue { state in
            state.handOverScheduled = false
            return state.wakeReader()
        }
        if let (waiter, answer) = wake { waiter.resume(with: answer) }
    }

    func didFinishRequest(task: HTTPClient.Task<Void>) throws {
        self.finish(failure: nil)
    }

    func didReceiveError(task: HTTPClient.Task<Void>, _ error: any Error) {
        self.finish(failure: error)
    }

    /// The end or the failure: wakes whoever waits (a reader still gets the parts that arrived first).
    private func finish(failure: (any Error)?) {
        let (headWaiter, bodyWaiter, paused) = self.state.withLockedValue { state in
            if let failure {
                state.failure = failure
            } else {
                state.ended = true
            }
            state.task = nil
            let headWaiter = state.headWaiter
            state.headWaiter = nil
            let bodyWaiter = state.wakeReader()
            return (headWaiter, bodyWaiter, state.release())
        }
        if let headWaiter {
            headWaiter.resume(throwing: failure ?? HTTPClientError.remoteConnectionClosed)
        }
        if let (waiter, answer) = bodyWaiter { waiter.resume(with: answer) }
        paused?.succeed()
    }

    /// The body as the pipeline reads it: errors in Kite's terms, and the exchange cancelled when the
    /// pipeline lets go of the body before its end.
    final class Reader: Sendable {
        private let body: BatchedBody
        private let transport: AHCTransport
        private let proxied: ProxyClients.Proxied?
        private let authority: String?

        init(body: BatchedBody, transport: AHCTransport, proxied: ProxyClients.Proxied?, authority: String?) {
            self.body = body
            self.transport = transport
            self.proxied = proxied
            self.authority = authority
        }

        deinit {
            self.body.cancel()
        }

        /// Whether ``next()`` returns without waiting.
        var isReady: Bool { self.body.isReady }

        func next() async throws -> ByteBuffer? {
            do {
                return try await self.body.next()
            } catch {
                throw self.transport.failure(from: error, through: self.proxied, authority: self.authority)
            }
        }
    }
}
