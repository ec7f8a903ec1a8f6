import Foundation
import HTTPTypes
import InMemoryTracing
import Kite
import Logging
import MetricsTestKit
import Testing
import Tracing

/// Connection metrics, logs, metrics and spans when the server misbehaves: each failure is reported once,
/// the in-flight meter returns to zero, and a broken connection is never reported as reused.
@Suite struct ObservabilityFaultTests {
    /// A session that collects connection metrics, logs at `.info`, reports metrics and traces.
    struct Observed {
        let session: Session
        let logs = RecordingLogHandler.Recorder()
        let metrics = TestMetrics()
        let tracer = W3CTestTracer()

        init(idleRead: Duration? = nil) {
            var configuration = Session.Configuration()
            configuration.collectsConnectionMetrics = true
            configuration.metrics = .enabled(factory: self.metrics)
            configuration.tracing = .tracer(self.tracer)
            if let idleRead { configuration.timeouts.idleRead = idleRead }
            self.session = Session(configuration: configuration, logger: self.logs.logger(level: .info))
        }

        /// Every in-flight meter is back to zero.
        var nothingInFlight: Bool {
            self.metrics.meters(label: "http.client.active_requests").allSatisfy { $0.lastValue == 0 }
        }
    }

    @Test(arguments: ["fin", "rst"])
    func aConnectionCutMidBodyIsReportedOnceAndNotReused(mode: String) async throws {
        let observed = Observed()
        let base = try await FaultServer.shared.baseURL()
        let cut = await observed.session.request(base + "/close-after?bytes=1000&length=8000&mode=\(mode)")
            .serializingData().response
        #expect(cut.error?.code == .connectionLost, "\(String(describing: cut.error))")
        let broken = try #require(cut.metrics?.connection)
        #expect(!broken.isReused && broken.httpVersion == "http/1.1")

        // The next requests (complete, keep-alive: a Range answer) get a fresh connection, then reuse it.
        var headers = HTTPFields()
        headers[.range] = "bytes=0-"
        var after: [ConnectionMetrics] = []
        for _ in 0..<2 {
            let response = await observed.session.request(base + "/close-after?length=8000", headers: headers)
                .serializingData().response
            #expect(response.response?.status.code == 206 && response.data?.count == 8000)
            after.append(try #require(response.metrics?.connection))
        }
        #expect(after[0].id != broken.id && !after[0].isReused)
        #expect(after[1].id == after[0].id && after[1].isReused)

        let entries = observed.logs.all
        #expect(entries.map { $0.metadata["error.type"]?.description } == ["connectionLost", nil, nil])
        let spans = observed.tracer.finishedSpans
        #expect(spans.count == 3)
        #expect(spans.first?.status?.code == .error)
        #expect(spans.first?.attributes["error.type"]?.toSpanAttribute() == "connectionLost")
        let lost = observed.metrics.counters(label: "http.client.requests").filter {
            $0.dimensions.contains { $0 == ("error.type", "connectionLost") }
        }
        #expect(lost.map(\.totalValue) == [1])
        #expect(observed.nothingInFlight)
        try await observed.session.shutdown()
    }

    @Test func aSilentServerTimesOutWithItsConnectionKnown() async throws {
        let observed = Observed(idleRead: .milliseconds(300))
        let base = try await FaultServer.shared.baseURL()
        let response = await observed.session.request(base + "/silence").serializingData().response
        #expect(response.error?.timeout == .idleRead)
        #expect(response.metrics?.connection?.isReused == false)
        #expect(observed.logs.all.map { $0.metadata["error.type"]?.description } == ["timedOut"])
        #expect(observed.tracer.finishedSpans.first?.attributes["error.type"]?.toSpanAttribute() == "timedOut")
        #expect(observed.nothingInFlight)
        try await observed.session.shutdown()
    }

    @Test func anAnswerBeforeTheBodyIsReadKeepsTheProbeTagOffTheWire() async throws {
        let observed = Observed()
        let base = try await FaultServer.shared.baseURL()
        let response = await observed.session.upload(Data(count: 2 * 1024 * 1024), to: base + "/early-status")
            .serializingData(emptyResponseCodes: [413]).response
        // The kernel may discard the unread 413 when the server closes: either outcome, reported once.
        let code = response.response?.status.code
        #expect(code == 413 || response.error?.code == .connectionLost, "\(String(describing: response.error))")
        #expect(response.metrics?.connection?.isReused == false)
        #expect(observed.logs.all.count == 1)
        #expect(observed.tracer.finishedSpans.count == 1)
        #expect(observed.nothingInFlight)
        try await observed.session.shutdown()
    }

    @Test func aCancelInFlightEndsTheSpanAndTheMeter() async throws {
        let observed = Observed()
        let base = try await FaultServer.shared.baseURL()
        let request = observed.session.request(base + "/silence?max_s=10")
        let task = request.serializingData()
        request.cancel()
        #expect(await task.response.error?.code == .cancelled)
        #expect(observed.logs.all.map { $0.metadata["error.type"]?.description } == ["cancelled"])
        let spans = observed.tracer.finishedSpans
        #expect(spans.count <= 1)  // none when the cancel came before the pipeline started
        #expect(spans.allSatisfy { $0.attributes["error.type"]?.toSpanAttribute() == "cancelled" })
        #expect(observed.nothingInFlight)
        try await observed.session.shutdown()
    }
}
