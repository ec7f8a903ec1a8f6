import NIOCore

/// Hands a streamed request body to the engine without letting it queue more than
/// ``aheadLimit`` bytes in front of its event loops.
///
/// AHC writes each chunk from the task that pulls the body (an `EventLoop.execute` per chunk) and
/// stops pulling only after its channel handler, on the event loop, has seen the channel turn
/// unwritable. While that event loop is busy the task keeps queueing: a 1 GiB file upload read from
/// the page cache peaked at 40 to 50 MiB of queued chunks. Every ``aheadLimit`` bytes this waits
/// until each loop of the engine's group has run what was queued before, so at most that many bytes
/// (plus the channel's own write buffer, which AHC does respect) wait in memory.
final class PacedBody {
    static let aheadLimit = 256 * 1024

    private var iterator: ByteChunks.AsyncIterator
    private let eventLoops: any EventLoopGroup
    private var bytesSinceBarrier = 0
    /// Told when the engine asks for the first chunk; says when the server answered before the body was sent.
    private let watch: UploadWatch?
    private var markedPulled = false

    init(_ iterator: ByteChunks.AsyncIterator, eventLoops: any EventLoopGroup, watch: UploadWatch? = nil) {
        self.iterator = iterator
        self.eventLoops = eventLoops
        self.watch = watch
    }

    func next() async throws -> ByteBuffer? {
        if !self.markedPulled {
            self.markedPulled = true
            self.watch?.markPulled()
        }
        if self.bytesSinceBarrier >= Self.aheadLimit {
            self.bytesSinceBarrier = 0
            // The engine's writes were queued with `execute` before this; loops run tasks in order.
            for loop in self.eventLoops.makeIterator() {
                try await loop.submit {}.get()
            }
        }
        let chunk = try await self.iterator.next()
        // No chunk after an answer of 300 or more: the engine would wait forever to write it (``UploadWatch``).
        if chunk != nil, let watch = self.watch, await watch.answeredEarly() { throw UploadWatch.AnsweredEarly() }
        self.bytesSinceBarrier += chunk?.readableBytes ?? 0
        return chunk
    }
}
