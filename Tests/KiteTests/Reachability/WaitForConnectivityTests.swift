import Foundation
import NIOConcurrencyHelpers
import Testing

@testable import Kite

/// A backend whose status the test sets, so waiting for connectivity is tested without a kernel.
private final class ScriptedReachability: NetworkReachabilityManager.Backend {
    private let state = NIOLockedValueBox<
        (
            status: NetworkReachabilityManager.NetworkReachabilityStatus,
            report: (@Sendable (NetworkReachabilityManager.NetworkReachabilityStatus) -> Void)?, started: Int
        )
    >((.notReachable, nil, 0))

    func currentStatus() -> NetworkReachabilityManager.NetworkReachabilityStatus {
        self.state.withLockedValue { $0.status }
    }

    func start(_ report: @escaping @Sendable (NetworkReachabilityManager.NetworkReachabilityStatus) -> Void) -> Bool {
        let status = self.state.withLockedValue { state in
            state.report = report
            state.started += 1
            return state.status
        }
        report(status)
        return true
    }

    func stop() {
        self.state.withLockedValue { $0.report = nil }
    }

    var startCount: Int { self.state.withLockedValue { $0.started } }

    func set(_ status: NetworkReachabilityManager.NetworkReachabilityStatus) {
        let report = self.state.withLockedValue { state in
            state.status = status
            return state.report
        }
        report?(status)
    }
}

@Suite struct WaitForConnectivityTests {
    @Test func aReachableHostIsSentAtOnceWithoutWatching() async throws {
        let backend = ScriptedReachability()
        backend.set(.reachable(.ethernetOrWiFi))
        let waiter = WaitForConnectivity(timeout: .seconds(30)) { _ in NetworkReachabilityManager(backend: backend) }
        let url = try await SharedTestServer.shared.baseURL() + "/get"
        let response = await Session.suite.request(url, interceptor: waiter).serializingData().response
        #expect(response.response?.status.code == 200)
        #expect(backend.startCount == 0)
    }

    @Test func anUnknownStatusDoesNotHoldTheRequest() async throws {
        let backend = ScriptedReachability()
        backend.set(.unknown)
        let waiter = WaitForConnectivity(timeout: .seconds(30)) { _ in NetworkReachabilityManager(backend: backend) }
        let url = try await SharedTestServer.shared.baseURL() + "/get"
        let response = await Session.suite.request(url, interceptor: waiter).serializingData().response
        #expect(response.response?.status.code == 200)
        #expect(backend.startCount == 0)
    }

    @Test func anUnreachableHostWaitsUntilTheNetworkComesBack() async throws {
        let backend = ScriptedReachability()
        let asked = NIOLockedValueBox<[String]>([])
        let waiter = WaitForConnectivity(timeout: .seconds(30)) { host in
            asked.withLockedValue { $0.append(host) }
            return NetworkReachabilityManager(backend: backend)
        }
        let url = try await SharedTestServer.shared.baseURL() + "/get"
        let request = Session.suite.request(url, interceptor: waiter)
        let pending = Task { await request.serializingData().response }
        // The request waits: the network comes back once the waiter watches it.
        while backend.startCount == 0 { await Task.yield() }
        #expect(request.response == nil)
        backend.set(.reachable(.cellular))
        let response = await pending.value
        #expect(response.error == nil)
        #expect(response.response?.status.code == 200)
        #expect(asked.withLockedValue { $0 } == ["127.0.0.1"])
    }

    @Test func aHostThatStaysUnreachableFailsAfterTheTimeoutNamingIt() async throws {
        let backend = ScriptedReachability()
        let waiter = WaitForConnectivity(timeout: .milliseconds(300)) { _ in
            NetworkReachabilityManager(backend: backend)
        }
        let url = try await SharedTestServer.shared.baseURL() + "/get"
        let clock = ContinuousClock()
        let started = clock.now
        let error = try #require(
            await Session.suite.request(url, interceptor: waiter).serializingData().response.error
        )
        #expect(started.duration(to: clock.now) >= .milliseconds(300))
        #expect(error.code == .requestAdaptationFailed, "\(error)")
        let underlying = try #require(error.underlyingError as? KiteError)
        #expect(underlying.code == .connectionFailed)
        #expect(
            underlying.message
                == "the network stayed unreachable for 127.0.0.1 while waiting 0.3 seconds for connectivity"
        )
        #expect(error.message == "the request adapter failed: \(underlying.message)")
    }

    @Test func theSessionConfigurationInstallsTheWaiterFirst() throws {
        var configuration = Session.Configuration()
        configuration.waitsForConnectivity = true
        configuration.connectivityTimeout = .seconds(5)
        let session = Session(configuration: configuration, interceptor: RetryPolicy())
        let interceptor = try #require(session.interceptor as? Interceptor)
        let waiter = try #require(interceptor.adapters.first as? WaitForConnectivity)
        #expect(waiter.timeout == .seconds(5))
        #expect(interceptor.adapters.count == 2)
        #expect(interceptor.retriers.last is RetryPolicy)
        #expect(Session(configuration: Session.Configuration()).interceptor == nil)
    }
}
