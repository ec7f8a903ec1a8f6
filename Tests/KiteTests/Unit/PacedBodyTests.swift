import Foundation
import NIOCore
import NIOPosix
import Synchronization
import Testing

@testable import Kite

struct PacedBodyTests {
    /// While the engine's event loop is stuck, the paced body hands out `aheadLimit` bytes and then
    /// waits; once the loop runs again, the rest follows, byte for byte.
    @Test func waitsForTheEventLoopEveryAheadLimitBytes() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let chunkSize = 64 * 1024
        let chunkCount = 8
        let chunks = (0..<chunkCount).map { index in
            ByteBuffer(repeating: UInt8(index), count: chunkSize)
        }
        let gate = DispatchSemaphore(value: 0)
        group.next().execute { gate.wait() }  // the loop is busy until the gate opens

        let pulled = Mutex<[ByteBuffer]>([])
        let consumer = Task {
            let paced = PacedBody(ByteChunks(chunks: chunks).makeAsyncIterator(), eventLoops: group)
            while let chunk = try await paced.next() {
                pulled.withLock { $0.append(chunk) }
            }
        }
        let allowed = PacedBody.aheadLimit / chunkSize
        var waited = 0
        while pulled.withLock({ $0.count }) < allowed, waited < 200 {
            try await Task.sleep(for: .milliseconds(10))
            waited += 1
        }
        try await Task.sleep(for: .milliseconds(200))
        #expect(pulled.withLock { $0.count } == allowed)

        gate.signal()
        try await consumer.value
        #expect(pulled.withLock { $0 } == chunks)
        try await group.shutdownGracefully()
    }
}
