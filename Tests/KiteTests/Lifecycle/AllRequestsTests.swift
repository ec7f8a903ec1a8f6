import Foundation
import Kite
import NIOConcurrencyHelpers
import Testing

/// Alamofire's `Session.cancelAllRequests` and `withAllRequests`.
@Suite struct AllRequestsTests {
    @Test(arguments: Backend.available)
    func cancelAllRequestsCancelsTheRunningAndTheNotYetStarted(backend: Backend) async throws {
        let session = Session()
        let slow = try await backend.url("/drip?duration=10&numbytes=10&delay=0")
        let outcomes = NIOLockedValueBox([KiteError?]())
        let (ended, endedContinuation) = AsyncStream.makeStream(of: Void.self)
        let running = (0..<3).map { _ in
            session.request(slow).responseData { response in
                outcomes.withLockedValue { $0.append(response.error) }
                endedContinuation.yield()
            }
        }
        let notStarted = session.request(try await backend.url("/get"))
        #expect(session.withAllRequests { $0 } == Set(running), "the started ones, not the one without a handler")

        let started = ContinuousClock.now
        await withCheckedContinuation { continuation in
            session.cancelAllRequests { continuation.resume() }
        }
        var endings = ended.makeAsyncIterator()
        for _ in 0..<3 { await endings.next() }
        #expect(started.duration(to: .now) < .seconds(8), "cancelled, not the 10 s drips run out")
        #expect(outcomes.withLockedValue { $0.map { $0?.code } } == [.cancelled, .cancelled, .cancelled])
        #expect(session.withAllRequests { $0.isEmpty }, "finished requests leave the set")

        let late = await notStarted.serializingData().response
        #expect(late.error?.code == .cancelled, "made before the call, started after it: \(late)")
        let after = await session.request(try await backend.url("/get")).serializingData().response
        #expect(after.response?.status.code == 200, "made after the call: \(after)")
        #expect(session.withAllRequests { $0.isEmpty })
        try await session.shutdown()
    }

    @Test func theCompletionRunsOnTheQueueGiven() async throws {
        let session = Session()
        let queue = DispatchQueue(label: "all-requests.completion")
        let key = DispatchSpecificKey<Bool>()
        queue.setSpecific(key: key, value: true)
        let onQueue = await withCheckedContinuation { continuation in
            session.cancelAllRequests(completingOnQueue: queue) {
                continuation.resume(returning: DispatchQueue.getSpecific(key: key) == true)
            }
        }
        #expect(onQueue)
        try await session.shutdown()
    }

    @Test func requestsAreEqualOnlyToThemselves() async throws {
        let url = try await Backend.inProcess.url("/get")
        let first = Session.suite.request(url)
        let second = Session.suite.request(url)
        #expect(first == first)
        #expect(first != second)
        #expect(Set<BaseRequest>([first, second, first]).count == 2)
    }

    /// Every way a started request ends removes it from the session's running requests.
    @Test func everyKindOfEndingLeavesTheSet() async throws {
        let session = Session(interceptor: RetryPolicy(retryLimit: 1, exponentialBackoffScale: 0.01))
        let url = { (path: String) in try await Backend.inProcess.url(path) }
        _ = await session.request(try await url("/get")).validate().serializingData().response
        _ = await session.request(try await url("/status/503")).validate().serializingData().response
        _ = await session.upload(Data(count: 100_000), to: try await url("/post")).serializingData().response
        let download = await session.download(try await url("/bytes/1000")).serializingData().response
        if let file = download.fileURL { try? FileManager.default.removeItem(at: file) }
        for try await _ in session.streamRequest(try await url("/stream/3")).streamingData() {}
        let dripping = try await url("/drip?duration=5&numbytes=5&delay=0")
        let streamEnd: KiteError? = await withCheckedContinuation { continuation in
            session.streamRequest(dripping).responseStream { stream in
                switch stream.event {
                case .data: stream.cancel()
                case .complete(let completion): continuation.resume(returning: completion.error)
                }
            }
        }
        #expect(streamEnd?.code == .cancelled)
        let cancelled = session.request(try await url("/delay/5"))
        cancelled.resume()
        cancelled.cancel()
        _ = await cancelled.serializingData().response
        _ = await session.request("http://127.0.0.1:1/").serializingData().response
        #expect(session.withAllRequests { $0.map(\.description) } == [])
        try await session.shutdown()
    }
}
