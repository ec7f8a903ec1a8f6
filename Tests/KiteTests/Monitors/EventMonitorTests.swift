import Dispatch
import Foundation
import Kite
import NIOConcurrencyHelpers
import Testing

/// The events a monitor sees, in order, for the pipeline's main paths.
@Suite struct EventMonitorTests {
    /// Records event names; `finished` yields when a request finishes.
    final class Recorder: EventMonitor {
        let queue = DispatchQueue(label: "recorder")
        let events = NIOLockedValueBox<[String]>([])
        let finished = AsyncStream<Void>.makeStream()

        private func record(_ event: String) {
            dispatchPrecondition(condition: .onQueue(self.queue))
            self.events.withLockedValue { $0.append(event) }
        }

        func requestDidCreate(_ request: BaseRequest) { self.record("created") }
        func requestDidResume(_ request: BaseRequest) { self.record("resumed") }
        func requestDidSuspend(_ request: BaseRequest) { self.record("suspended") }
        func requestDidCancel(_ request: BaseRequest) { self.record("cancelled") }
        func request(_ request: BaseRequest, didAdaptInitialRequest initial: HTTPRequest, to adapted: HTTPRequest) {
            self.record("adapted")
        }
        func request(
            _ request: BaseRequest,
            didFailToAdaptRequest initial: HTTPRequest,
            withError error: KiteError
        ) {
            self.record("adaptationFailed")
        }
        func request(_ request: BaseRequest, didReceiveResponse response: HTTPResponse) {
            self.record("response \(response.status.code)")
        }
        func request(_ request: BaseRequest, willFollowRedirectTo next: HTTPRequest, for response: HTTPResponse) {
            self.record("redirect \(next.path ?? "")")
        }
        func request(_ request: BaseRequest, didDecideRetry result: RetryResult, dueTo error: KiteError) {
            self.record(result.retryRequired ? "retry decided: yes" : "retry decided: no")
        }
        func requestIsRetrying(_ request: BaseRequest) { self.record("retrying") }
        func requestDidFinish(_ request: BaseRequest) {
            self.record("finished \(request.response?.status.code ?? 0)")
            self.finished.continuation.yield()
        }

        /// The events once the request has finished.
        func eventsAfterFinish() async -> [String] {
            var iterator = self.finished.stream.makeAsyncIterator()
            await iterator.next()
            return self.events.withLockedValue { $0 }
        }
    }

    private func run(
        _ path: String,
        interceptor: (any RequestInterceptor)? = nil,
        configure: (DataRequest) -> Void = { _ in }
    ) async throws -> [String] {
        let recorder = Recorder()
        let session = Session(configuration: .default, eventMonitors: [recorder])
        defer { Task { try await session.shutdown() } }
        let request = session.request(try await SharedTestServer.shared.baseURL() + path, interceptor: interceptor)
        configure(request)
        _ = await request.validate().serializingData().response
        return await recorder.eventsAfterFinish()
    }

    @Test func aSuccess() async throws {
        #expect(try await self.run("/get") == ["created", "resumed", "response 200", "finished 200"])
    }

    @Test func aValidationFailure() async throws {
        #expect(try await self.run("/status/404") == ["created", "resumed", "response 404", "finished 404"])
    }

    @Test func aRedirect() async throws {
        #expect(
            try await self.run("/redirect/1") == [
                "created", "resumed", "response 302", "redirect /get", "response 200", "finished 200",
            ]
        )
    }

    @Test func aRetryAfterAnAdaptedAttempt() async throws {
        let key = UUID().uuidString
        let interceptor = Interceptor(
            adapters: [Adapter { request, _ in request }],
            retriers: [RetryPolicy(exponentialBackoffScale: 0.01, jitter: .none, retryBudget: nil)]
        )
        #expect(
            try await self.run("/flaky/\(key)?failures=1", interceptor: interceptor) == [
                "created", "resumed", "adapted", "response 503", "retry decided: yes", "retrying", "adapted",
                "response 200", "finished 200",
            ]
        )
    }

    @Test func aCancelBeforeStart() async throws {
        let recorder = Recorder()
        let session = Session(configuration: .default, eventMonitors: [recorder])
        defer { Task { try await session.shutdown() } }
        let request = session.request(try await SharedTestServer.shared.baseURL() + "/get")
        request.cancel()
        #expect(await request.serializingData().response.error?.code == .cancelled)
        #expect(await recorder.eventsAfterFinish() == ["created", "cancelled", "finished 0"])
    }

    @Test func aSlowMonitorDoesNotDelayTheRequest() async throws {
        let gate = DispatchSemaphore(value: 0)
        final class Blocking: EventMonitor {
            let queue = DispatchQueue(label: "blocking")
            let gate: DispatchSemaphore
            init(gate: DispatchSemaphore) { self.gate = gate }
            func requestDidCreate(_ request: BaseRequest) { self.gate.wait() }
        }
        let session = Session(configuration: .default, eventMonitors: [Blocking(gate: gate)])
        defer {
            gate.signal()
            Task { try await session.shutdown() }
        }
        let response = await session.request(try await SharedTestServer.shared.baseURL() + "/get")
            .serializingData().response
        #expect(response.response?.status.code == 200, "finished while the monitor's queue was blocked")
    }
}

/// Alamofire-style notifications, posted by the `KiteNotifications` monitor.
@Suite struct KiteNotificationsTests {
    @Test func resumeSuspendCancelAndFinishArePostedWithTheRequest() async throws {
        let session = Session(configuration: .default, eventMonitors: [KiteNotifications()])
        defer { Task { try await session.shutdown() } }
        let request = session.request(try await SharedTestServer.shared.baseURL() + "/delay/5")
        let seen = NIOLockedValueBox<[String]>([])
        let finished = AsyncStream<Void>.makeStream()
        let names = [
            BaseRequest.didResumeNotification, BaseRequest.didSuspendNotification,
            BaseRequest.didCancelNotification, BaseRequest.didFinishNotification,
        ]
        let observers = names.map { name in
            NotificationCenter.default.addObserver(forName: name, object: request, queue: nil) { notification in
                let carried = notification.userInfo?[BaseRequest.notificationKey] as? BaseRequest
                seen.withLockedValue {
                    $0.append("\(notification.name.rawValue.split(separator: ".").last ?? "") \(carried === request)")
                }
                if notification.name == BaseRequest.didFinishNotification { finished.continuation.yield() }
            }
        }
        defer { observers.forEach(NotificationCenter.default.removeObserver) }
        request.resume()
        request.suspend()
        request.cancel()
        var iterator = finished.stream.makeAsyncIterator()
        await iterator.next()
        #expect(
            seen.withLockedValue { $0 }
                == ["didResume true", "didSuspend true", "didCancel true", "didFinish true"]
        )
    }
}
