import Dispatch
import Foundation
import Kite
import NIOConcurrencyHelpers
import Testing

@Suite struct LifecycleTests {
    @Test func aRequestKeepsOneIdentifierFromFirstReadToAfterItIsOver() async throws {
        let url = try #require(URL(string: "http://127.0.0.1:1/never-sent"))
        let first = Session.suite.request(url)
        let second = Session.suite.request(url)
        let before = first.id
        #expect(first.id == before, "the identifier is made once, on first read")
        #expect(second.id != before, "every request has its own identifier")
        // Read from many tasks at once: all see the one identifier.
        let ids = await withTaskGroup(of: UUID.self) { group in
            for _ in 0..<16 { group.addTask { second.id } }
            return await group.reduce(into: Set<UUID>()) { $0.insert($1) }
        }
        // Run the first request (it fails: nothing listens on port 1); its identifier stays.
        _ = await first.serializingData().result
        #expect(first.id == before)
        #expect(ids == [second.id])
    }

    @Test(arguments: Backend.available)
    func aRequestStartsOnlyWhenItsFirstHandlerIsAttached(backend: Backend) async throws {
        let request = Session.suite.request(try await backend.url("/get"))
        try await Task.sleep(for: .milliseconds(100))
        #expect(request.state == .initialized)
        #expect(request.request == nil, "nothing was sent")
        let data = try await request.serializingData().value
        #expect(!data.isEmpty)
        #expect(request.state == .finished)
    }

    @Test(arguments: Backend.available)
    func withoutStartRequestsImmediatelyOnlyResumeStarts(backend: Backend) async throws {
        var configuration = Session.Configuration()
        configuration.startRequestsImmediately = false
        let session = Session(configuration: configuration)
        let request = session.request(try await backend.url("/get"))
        let task = request.serializingData()
        try await Task.sleep(for: .milliseconds(100))
        #expect(request.state == .initialized)
        request.resume()
        #expect(!(try await task.value).isEmpty)
        #expect(request.state == .finished)
        try await session.shutdown()
    }

    @Test(arguments: Backend.available)
    func suspendStopsTheByteFlowUntilResume(backend: Backend) async throws {
        // The server drips 4 bytes over 1 s; the request is suspended well before that (a loaded
        // machine may oversleep the 50 ms) and stays so until 1 s after the server is done, so the
        // response must not complete while suspended.
        let request = Session.suite.request(try await backend.url("/drip?duration=1&numbytes=4&delay=0"))
        let task = request.serializingData()
        try await Task.sleep(for: .milliseconds(50))
        request.suspend()
        #expect(request.state == .suspended)
        try await Task.sleep(for: .milliseconds(2000))
        #expect(request.state == .suspended)
        #expect(request.response == nil, "no response may be delivered while suspended")
        request.resume()
        let data = try await task.value
        #expect(data == Data("****".utf8))
        #expect(request.state == .finished)
    }

    @Test(arguments: Backend.available)
    func suspendBeforeStartHoldsTheRequestBack(backend: Backend) async throws {
        let request = Session.suite.request(try await backend.url("/get")).suspend()
        let task = request.serializingData()
        try await Task.sleep(for: .milliseconds(100))
        #expect(request.state == .suspended)
        #expect(request.request == nil)
        request.resume()
        #expect(!(try await task.value).isEmpty)
    }

    @Test(arguments: Backend.available)
    func cancelStopsARunningRequestWithACancelledError(backend: Backend) async throws {
        let url = try await backend.url("/delay/5")
        let request = Session.suite.request(url)
        let task = request.serializingData()
        try await Task.sleep(for: .milliseconds(100))
        let started = ContinuousClock.now
        request.cancel()
        let response = await task.response
        #expect(started.duration(to: .now) < .seconds(3))
        let error = try #require(response.error)
        #expect(error.code == .cancelled)
        #expect(error.description == "GET \(url) failed: the request was cancelled")
        #expect(request.state == .cancelled)
        request.resume()
        #expect(request.state == .cancelled, "cancelled is final")
    }

    @Test func cancelBeforeStartDeliversAtOnceWithoutSending() async throws {
        let request = Session.suite.request("http://127.0.0.1:9/never").cancel()
        let response = await request.serializingData().response
        #expect(response.error?.code == .cancelled)
        #expect(response.request == nil)
        #expect(request.state == .cancelled)
    }

    @Test(arguments: Backend.available)
    func cancellingTheAwaitingTaskCancelsTheRequest(backend: Backend) async throws {
        let request = Session.suite.request(try await backend.url("/delay/5"))
        let awaiting = Task { await request.serializingData().response }
        try await Task.sleep(for: .milliseconds(100))
        awaiting.cancel()
        let response = await awaiting.value
        #expect(response.error?.code == .cancelled)
        #expect(request.state == .cancelled)
    }

    @Test(arguments: Backend.available)
    func automaticCancellingCanBeTurnedOff(backend: Backend) async throws {
        let request = Session.suite.request(try await backend.url("/delay/0.3"))
        let awaiting = Task { await request.serializingData(automaticallyCancelling: false).response }
        awaiting.cancel()
        let response = await awaiting.value
        #expect(response.error == nil)
        #expect(request.state == .finished)
    }

    @Test(arguments: Backend.available)
    func everyHandlerRunsExactlyOnceIncludingLateOnes(backend: Backend) async throws {
        let request = Session.suite.request(try await backend.url("/get"))
        let calls = NIOLockedValueBox([String: Int]())
        let group = DispatchGroup()
        for name in ["data", "string", "json"] {
            group.enter()
            switch name {
            case "data":
                request.responseData { _ in
                    calls.withLockedValue { $0[name, default: 0] += 1 }
                    group.leave()
                }
            case "string":
                request.responseString { _ in
                    calls.withLockedValue { $0[name, default: 0] += 1 }
                    group.leave()
                }
            default:
                request.responseJSON { _ in
                    calls.withLockedValue { $0[name, default: 0] += 1 }
                    group.leave()
                }
            }
        }
        _ = await request.serializingData().response
        await withCheckedContinuation { continuation in group.notify(queue: .global()) { continuation.resume() } }
        let late = await request.serializingString().response
        #expect(late.value?.isEmpty == false)
        try await Task.sleep(for: .milliseconds(100))
        #expect(calls.withLockedValue { $0 } == ["data": 1, "string": 1, "json": 1])
    }

    @Test func aFinishedRequestIgnoresSuspendResumeAndCancel() async throws {
        let request = Session.suite.request("ftp://invalid")
        _ = await request.serializingData().response
        #expect(request.state == .finished)
        request.suspend()
        request.resume()
        request.cancel()
        #expect(request.state == .finished)
        #expect(request.error?.code == .invalidURL)
    }
}
