import NIOCore

/// One attempt's streamed upload body, kept in the request's record (``RequestRecord/uploadFeed``, under the
/// request's one lock) and reached by what the engine is given only through a weak reference to the request
/// (``BaseRequest/observingUpload(_:)``), so the body's source (its bytes, its open file) lives exactly as long as
/// the request, or until the next attempt replaces it.
///
/// async-http-client 1.37 can keep the task that pulls a request body forever: when a response of 300 or more
/// ends the exchange before the body was sent, its `Transaction` stops the body and leaves the task waiting for a
/// demand that nothing resumes once the connection has closed (`Transaction.StateMachine.receiveResponseEnd` keeps
/// the stream `.paused(continuation:)`, and `HTTP1ClientChannelHandler` detaches the request before it closes).
/// That task then keeps only the last chunk it was given.
///
/// Each iteration of the body (a redirect sends it again) gets a fresh iterator from the source; an older
/// iteration's pulls end the body. The iterator is taken out while one pull awaits it and put back after, so no
/// two pulls use it at once.
struct UploadFeed {
    let makeChunks: @Sendable () -> ByteChunks
    var iteration = 0
    var current: ByteChunks.AsyncIterator?

    /// Starts an iteration with `iterator`; earlier iterations end.
    mutating func start(_ iterator: ByteChunks.AsyncIterator) -> Int {
        self.iteration += 1
        self.current = iterator
        return self.iteration
    }

    /// The iterator of `iteration`, taken out for one pull; `nil` once a later iteration started.
    mutating func take(_ iteration: Int) -> ByteChunks.AsyncIterator? {
        guard self.iteration == iteration else { return nil }
        defer { self.current = nil }
        return self.current
    }

    /// Puts back the iterator `take(_:)` gave, unless a later iteration started meanwhile.
    mutating func putBack(_ iterator: ByteChunks.AsyncIterator, _ iteration: Int) {
        if self.iteration == iteration { self.current = iterator }
    }
}
