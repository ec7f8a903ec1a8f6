import NIOConcurrencyHelpers
import NIOCore

/// One attempt's streamed upload body, owned by its request (``RequestRecord/uploadFeed``) and held only weakly
/// by what the engine is given (``BaseRequest/observingUpload(_:)``), so the body's source (its bytes, its open
/// file) lives exactly as long as the request or its attempt.
///
/// async-http-client 1.37 can keep the task that pulls a request body forever: when a response of 300 or more
/// ends the exchange before the body was sent, its `Transaction` stops the body and leaves the task waiting for a
/// demand that nothing resumes once the connection has closed (`Transaction.StateMachine.receiveResponseEnd` keeps
/// the stream `.paused(continuation:)`, and `HTTP1ClientChannelHandler` detaches the request before it closes).
/// That task then keeps only the last chunk it was given.
///
/// Each iteration of the body (a redirect or a retry sends it again) gets a fresh iterator from the source; an
/// older iteration's pulls end the body.
final class UploadFeed: @unchecked Sendable {
    // @unchecked: `current` is only read and written under `lock`; the iterator it holds is taken out while one
    // pull awaits it and put back after, so no two pulls use it at once.
    private let makeChunks: @Sendable () -> ByteChunks
    private let lock = NIOLock()
    private var iteration = 0
    private var current: ByteChunks.AsyncIterator?

    init(_ makeChunks: @escaping @Sendable () -> ByteChunks) {
        self.makeChunks = makeChunks
    }

    /// Starts an iteration of the body from its beginning; earlier iterations end.
    ///
    /// - Returns: The iteration, for ``next(in:)``.
    func start() -> Int {
        let iterator = self.makeChunks().makeAsyncIterator()
        return self.lock.withLock {
            self.iteration += 1
            self.current = iterator
            return self.iteration
        }
    }

    /// The next chunk of `iteration`, or `nil` at its end or once a later iteration started.
    func next(in iteration: Int) async throws -> ByteBuffer? {
        let taken: ByteChunks.AsyncIterator? = self.lock.withLock {
            guard self.iteration == iteration else { return nil }
            defer { self.current = nil }
            return self.current
        }
        guard var iterator = taken else { return nil }
        let chunk = try await iterator.next()
        self.lock.withLock {
            if self.iteration == iteration { self.current = iterator }
        }
        return chunk
    }
}
