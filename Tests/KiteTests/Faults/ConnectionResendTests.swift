import AsyncHTTPClient
import Foundation
import MetricsTestKit
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Testing

@testable import Kite

/// The engine's transparent resend (an attempt that failed on a pooled connection the server had closed, before any
/// byte was written) is visible: an event-monitor event and a counter. The race that causes it on a real connection
/// is rare and timing-bound (the stray-bytes test above meets it now and then), so the engine's rule and what the
/// pipeline makes of its report are each driven directly.
@Suite struct ConnectionResendTests {
    /// Records what the engine reports.
    final class Spy: TransportEvents {
        let errors = NIOLockedValueBox<[KiteError.Code]>([])
        func transportWillResend(after error: KiteError) { self.errors.withLockedValue { $0.append(error.code) } }
    }

    /// The engine's rule: once, only when nothing was written and the body may be sent again, and reported.
    @Test func theEngineResendsOnceWhatFailedBeforeAnyByteWasWrittenAndSaysSo() async throws {
        let transport = AHCTransport(configuration: Session.Configuration(), canShutDown: true)
        let client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton)
        defer {
            Task {
                try? await client.shutdown()
                try? await transport.shutdown()
            }
        }
        /// Runs `execute` with attempts that fail with `failures` in turn, then answer 42.
        func run(
            _ failures: [any Error],
            mayResend: Bool = true,
            pulled: Bool = false
        ) async -> (Result<Int, KiteError>, attempts: Int, reported: [KiteError.Code]) {
            let spy = Spy()
            let watch = transport.uploadWatches.makeWatch()
            if pulled { watch.markPulled() }
            let attempts = NIOLockedValueBox(0)
            let result: Result<Int, KiteError>
            do {
                let answer = try await transport.execute(
                    on: client,
                    through: nil,
                    mayResend: mayResend,
                    watch: watch,
                    authority: "example.test",
                    events: spy
                ) { _ in
                    let attempt = attempts.withLockedValue { count in
                        count += 1
                        return count
                    }
                    if attempt <= failures.count { throw failures[attempt - 1] }
                    return 42
                }
                result = .success(answer)
            } catch {
                result = .failure(error)
            }
            return (result, attempts.withLockedValue { $0 }, spy.errors.withLockedValue { $0 })
        }
        let closed = ChannelError.ioOnClosedChannel
        let once = await run([closed])
        #expect(try once.0.get() == 42)
        #expect(once.attempts == 2 && once.reported == [.connectionLost])
        // Never twice: a second closed connection is the request's error.
        let twice = await run([closed, closed])
        #expect(twice.attempts == 2 && twice.reported == [.connectionLost])
        #expect((try? twice.0.get()) == nil)
        // Never a body that cannot be sent again, or one the engine already pulled, or another failure.
        for (failures, mayResend, pulled) in [([closed], false, false), ([closed], true, true)] {
            let refused = await run(failures, mayResend: mayResend, pulled: pulled)
            #expect(refused.attempts == 1 && refused.reported.isEmpty)
        }
        let other = await run([ChannelError.connectTimeout(.seconds(1))])
        #expect(other.attempts == 1 && other.reported.isEmpty)
    }

    /// The pipeline's side: the engine's report reaches event monitors and the metrics.
    @Test func aResendIsAnEventMonitorEventAndACounter() async throws {
        /// The mock, telling the request of a resend before each answer, as the engine does.
        struct Resending: Transport {
            let mock: MockTransport
            nonisolated(nonsending) func send(_ request: TransportRequest) async throws(KiteError) -> TransportResponse
            {
                request.events?.transportWillResend(after: KiteError(code: .connectionLost, message: "closed"))
                return try await self.mock.send(request)
            }
            func shutdown() async throws(KiteError) {}
            func shutdownInBackground() {}
        }
        let mock = MockTransport()
        mock.stub(.any, response: .status(200, body: .string("ok")))
        let metrics = TestMetrics()
        let monitor = ClosureEventMonitor()
        let (heard, hear) = AsyncStream<(String, KiteError.Code)>.makeStream()
        monitor.requestWillResendOnNewConnection = { request, error in
            hear.yield((request.request?.url?.path ?? "", error.code))
        }
        var configuration = Session.Configuration()
        configuration.metrics = .enabled(factory: metrics)
        let session = Session(configuration: configuration, transport: Resending(mock: mock), eventMonitors: [monitor])
        let value = try await session.request("https://api.test:8443/items").serializingString().value
        #expect(value == "ok")
        var events = heard.makeAsyncIterator()
        let event = await events.next()
        #expect(event?.0 == "/items" && event?.1 == .connectionLost)
        let dimensions = [
            ("http.request.method", "GET"), ("server.address", "api.test"), ("server.port", "8443"),
            ("error.type", "connectionLost"),
        ]
        #expect(try metrics.expectCounter("kite.http.client.connection_resends", dimensions).totalValue == 1)
    }
}

/// One connection pool per session: every request kind takes its connections from it, so
/// `maximumConnectionsPerHost` holds across data, upload, download and stream requests.
@Suite(.timeLimit(.minutes(1))) struct SharedConnectionPoolTests {
    @Test func everyRequestKindSharesTheSessionsConnections() async throws {
        let server = FaultServer()
        let base = try await server.baseURL()
        var configuration = Session.Configuration()
        configuration.maximumConnectionsPerHost = 1
        let session = Session(configuration: configuration)
        defer { Task { try? await session.shutdown() } }
        #expect(try await session.request(base + "/ok").serializingString().value == "ok")
        let file = try await session.download(base + "/ok").serializingDownloadedFileURL().value
        defer { try? FileManager.default.removeItem(at: file) }
        #expect(try String(contentsOf: file, encoding: .utf8) == "ok")
        var streamed = Data()
        for try await chunk in session.streamRequest(base + "/ok").streamingData() { streamed.append(chunk) }
        #expect(streamed == Data("ok".utf8))
        #expect(try await session.upload(Data("up".utf8), to: base + "/ok").serializingString().value == "ok")
        let stats = try await session.request(base + "/stats").serializingString().value
        // One connection served all five; with a pool per kind, the download and the stream opened a second.
        #expect(stats == #"{"connections": 1, "requests": 5}"#)
        await server.stop()
    }
}
