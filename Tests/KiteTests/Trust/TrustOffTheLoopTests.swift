import Foundation
import HTTPTypes
import NIOConcurrencyHelpers
import Testing

@testable import Kite

/// Server trust evaluators are user code: they run off the event loops, so a slow one (a pin store, OCSP, a log)
/// delays only the requests that wait for it.
@Suite(.timeLimit(.minutes(1))) struct TrustOffTheLoopTests {
    @Test func aSlowEvaluatorForOneHostDoesNotDelayRequestsToAnother() async throws {
        let (authority, base) = try await TrustServers.shared.server(.leaf)
        let port = try #require(URL(string: base)?.port)
        let (started, evaluating) = AsyncStream<Void>.makeStream()
        // Blocks its thread until the other requests are done (at most 5 s), as evaluator code doing I/O blocks;
        // the test's own threads never block. On an event loop, it would hold every connection of that loop.
        let release = DispatchSemaphore(value: 0)
        let outcome = NIOLockedValueBox<DispatchTimeoutResult?>(nil)
        let slow = ClosureTrustEvaluator(handshakeVerification: .withoutHostname) { _, _ in
            evaluating.yield()
            let result = release.wait(timeout: .now() + 5)
            outcome.withLockedValue { $0 = result }
        }
        var configuration = Session.Configuration()
        configuration.tls.trustRoots = .certificates([authority.root.certificate])
        configuration.timeouts.connect = .seconds(5)
        configuration.maximumConnectionsPerHost = 8
        let manager = ServerTrustManager(evaluators: ["localhost": slow, "127.0.0.1": DefaultTrustEvaluator()])
        let session = Session(configuration: configuration, serverTrustManager: manager)
        defer { Task { try? await session.shutdown() } }

        let slowRequest = Task { await session.request("https://localhost:\(port)/get").serializingData().response }
        var iterator = started.makeAsyncIterator()
        await iterator.next()
        // Six requests at once open six connections, spread over the engine's event loops: each loop serves some.
        let errors = await withTaskGroup(of: KiteError?.self) { group in
            for _ in 0..<6 {
                group.addTask { await session.request(base + "/get").validate().serializingData().response.error }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(errors.allSatisfy { $0 == nil }, "\(errors)")
        // All six were answered while the evaluator still held its thread.
        release.signal()
        let slowResponse = await slowRequest.value
        #expect(slowResponse.error == nil && slowResponse.response?.status == .ok)
        #expect(outcome.withLockedValue { $0 } == .success)
    }
}
