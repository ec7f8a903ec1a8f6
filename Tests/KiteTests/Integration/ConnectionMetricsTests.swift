import Foundation
import HTTPTypes
import NIOSSL
import Testing

@testable import Kite

/// `ResponseMetrics.connection`: which connection served a response, when the session collects it.
@Suite struct ConnectionMetricsTests {
    private func collecting() -> Session.Configuration {
        var configuration = Session.Configuration()
        configuration.collectsConnectionMetrics = true
        return configuration
    }

    @Test func aNewThenAReusedHTTP1Connection() async throws {
        let session = Session(configuration: self.collecting())
        defer { Task { try await session.shutdown() } }
        let base = try await SharedTestServer.shared.baseURL()
        let port = URL(string: base)!.port!
        let first = await session.request(base + "/headers").serializingDecodable(HeadersEcho.self).response
        let second = await session.request(base + "/headers").serializingDecodable(HeadersEcho.self).response
        let one = try #require(first.metrics?.connection)
        let two = try #require(second.metrics?.connection)
        #expect(!one.isReused && two.isReused)
        #expect(one.id == two.id)
        #expect(one.httpVersion == "http/1.1" && one.tlsVersion == nil)
        #expect(one.remoteAddress == "127.0.0.1:\(port)")
        #expect(one.localAddress?.hasPrefix("127.0.0.1:") == true && one.localAddress != one.remoteAddress)
        #expect(one.establishmentDuration.map { $0 > .zero && $0 < .seconds(10) } == true)
        #expect(two.establishmentDuration == nil)
        // The tag that ties a request to its connection never reaches the server.
        for echo in [first.value, second.value] {
            let names = try #require(echo).headers.keys.map { $0.lowercased() }
            #expect(!names.contains("x-kite-connection-probe"), "\(names)")
        }
        #expect(String(describing: second.metrics!).contains("reused connection #\(one.id), http/1.1 to 127.0.0.1:"))
    }

    @Test func redirectsAndRetriesReportTheLastExchangeAndLeaveNoRecordBehind() async throws {
        let session = Session(configuration: self.collecting())
        defer { Task { try await session.shutdown() } }
        let base = try await SharedTestServer.shared.baseURL()
        let redirected = await session.request(base + "/redirect/2").serializingData().response
        #expect(redirected.metrics?.redirectCount == 2)
        // Three exchanges on one keep-alive connection: the last one's is reported, reused.
        #expect(redirected.metrics?.connection?.isReused == true)
        let policy = RetryPolicy(exponentialBackoffScale: 0.01, jitter: .none, retryBudget: nil)
        let retried = await session.request(base + "/flaky/\(UUID().uuidString)?failures=1", interceptor: policy)
            .validate().serializingData().response
        #expect(retried.response?.status.code == 200 && retried.metrics?.connection != nil)
        let probe = try #require(session.transport.connectionProbe)
        #expect(probe.registeredCount == 0)
    }

    @Test func concurrentRequestsUseDistinctConnections() async throws {
        let session = Session(configuration: self.collecting())
        defer { Task { try await session.shutdown() } }
        let base = try await SharedTestServer.shared.baseURL()
        async let a = session.request(base + "/delay/0.3").serializingData().response
        async let b = session.request(base + "/delay/0.3").serializingData().response
        let (ra, rb) = await (a, b)
        let ca = try #require(ra.metrics?.connection)
        let cb = try #require(rb.metrics?.connection)
        #expect(ca.id != cb.id && !ca.isReused && !cb.isReused)
    }

    @Test func offByDefaultAndNoneWithoutAConnection() async throws {
        let plain = Session(configuration: .default)
        defer { Task { try await plain.shutdown() } }
        let base = try await SharedTestServer.shared.baseURL()
        let response = await plain.request(base + "/get").serializingData().response
        #expect(response.metrics != nil && response.metrics?.connection == nil)

        let session = Session(configuration: self.collecting())
        defer { Task { try await session.shutdown() } }
        let port = try Sockets.refusingPort()
        let refused = await session.request("http://127.0.0.1:\(port)/get").serializingData().response
        #expect(refused.error?.code == .connectionFailed)
        #expect(refused.metrics?.connection == nil)
    }

    @Test(arguments: [
        (Session.HTTPVersionPolicy.automatic, "h2"),
        (.http1Only, "http/1.1"),
    ])
    func overTLSWithEitherProtocol(policy: Session.HTTPVersionPolicy, expected: String) async throws {
        let server = try await HTTP2TestServer()
        var configuration = self.collecting()
        configuration.httpVersion = policy
        let session = server.session(configuration)
        let url = "https://127.0.0.1:\(server.port)/protocol"
        var connections: [ConnectionMetrics] = []
        for _ in 0..<2 {
            let response = await session.request(url).validate().serializingString().response
            #expect(response.value == expected, "\(String(describing: response.error))")
            let names = response.response?.headerFields[HTTPField.Name("x-request-header-names")!] ?? "?"
            #expect(!names.contains("x-kite-connection-probe") && names.contains("user-agent"), "\(names)")
            connections.append(try #require(response.metrics?.connection))
        }
        #expect(connections.map(\.httpVersion) == [expected, expected])
        #expect(connections.map(\.isReused) == [false, true])
        #expect(connections[0].id == connections[1].id)
        #expect(connections[0].tlsVersion == "TLSv1.3" || connections[0].tlsVersion == "TLSv1.2")
        #expect(connections[0].remoteAddress == "127.0.0.1:\(server.port)")
        try await session.shutdown()
        try await server.shutdown()
    }
}
