import Foundation
import KiteTestServer
import Testing

@testable import Kite

/// Proxies as users meet them: Squid with Debian's default configuration, and tinyproxy with its sample
/// configuration's `ConnectPort 443` and `ConnectPort 563` and Basic authentication. Both allow `CONNECT` to port
/// 443 only, so plain `http` must reach them in absolute form and `https` to another port is refused.
@Suite(
    .enabled(if: ProxyProcess.squidAvailable && ProxyProcess.tinyproxyAvailable, "squid or tinyproxy is missing"),
    .timeLimit(.minutes(1))
)
struct RestrictedProxyTests {
    enum Peer: String, CaseIterable, Sendable {
        case squid
        case tinyproxy
    }

    static let user = "kite"
    static let password = "pass"

    /// The proxy and a session that goes through it (with the credential tinyproxy asks for), trusting `roots`.
    private func start(
        _ peer: Peer,
        trusting authority: TestCertificateAuthority? = nil
    ) async throws -> (ProxyProcess, Session) {
        let proxy: ProxyProcess
        var configuration = Session.Configuration()
        switch peer {
        case .squid:
            proxy = try await ProxyProcess.start(.squid)
            configuration.proxy = .http(host: "127.0.0.1", port: proxy.port)
        case .tinyproxy:
            proxy = try await ProxyProcess.start(
                .tinyproxy(user: Self.user, password: Self.password, connectPorts: [443, 563])
            )
            let credential = Credential(user: Self.user, password: Self.password)
            configuration.proxy = .http(host: "127.0.0.1", port: proxy.port, authorization: credential)
        }
        configuration.timeouts.connect = .seconds(5)
        configuration.collectsConnectionMetrics = true
        if let authority { configuration.tls.trustRoots = .certificates([authority.root.certificate]) }
        return (proxy, Session(configuration: configuration))
    }

    @Test(arguments: Peer.allCases)
    func plainHTTPGoesThroughInAbsoluteForm(_ peer: Peer) async throws {
        let (proxy, session) = try await self.start(peer)
        defer {
            proxy.stop()
            Task { try? await session.shutdown() }
        }
        let base = try await Backend.inProcess.baseURL()
        let origin = try #require(URL(string: base)?.port)
        let response = await session.request(base + "/headers?via=proxy").validate().serializingJSON().response
        guard case .object(let fields) = response.value?["headers"] ?? .null else {
            Issue.record("no headers in \(response)")
            return
        }
        let headers = fields.compactMapValues { if case .string(let value) = $0 { value } else { nil } }
        #expect(headers.header("Host") == "127.0.0.1:\(origin)")
        #expect(headers.header("Proxy-Authorization") == nil)
        // The exchange was with the proxy, which handed the request on.
        #expect(response.metrics?.connection?.remoteAddress == "127.0.0.1:\(proxy.port)")
        if peer == .tinyproxy {
            try await proxy.waitForLog(containing: "GET http://127.0.0.1:\(origin)/headers?via=proxy HTTP/1.1")
        }
    }

    @Test(arguments: Peer.allCases)
    func httpsToAPortOtherThan443IsRefusedWithTheProxysAnswer(_ peer: Peer) async throws {
        let (authority, base) = try await TrustServers.shared.server(.leaf)
        let (proxy, session) = try await self.start(peer, trusting: authority)
        defer {
            proxy.stop()
            Task { try? await session.shutdown() }
        }
        let origin = try #require(URL(string: base)?.port)
        let error = await session.request(base + "/get").serializingData().response.error
        #expect(error?.code == .proxyFailed)
        #expect(
            error?.message
                == "the proxy http://127.0.0.1:\(proxy.port) refused the tunnel to 127.0.0.1:\(origin) (its answer to CONNECT was not 2xx)"
        )
    }

    @Test(.enabled(if: getuid() == 0, "binding port 443 needs root (CI runs as root)"), arguments: Peer.allCases)
    func httpsToPort443GoesThroughCONNECT(_ peer: Peer) async throws {
        let (authority, base) = try await Port443Server.shared.start()
        let (proxy, session) = try await self.start(peer, trusting: authority)
        defer {
            proxy.stop()
            Task { try? await session.shutdown() }
        }
        let response = await session.request(base + "/get?over=tls").validate().serializingJSON().response
        #expect(response.value?["args"]?["over"] == .string("tls"), "\(response)")
        if peer == .tinyproxy { try await proxy.waitForLog(containing: "CONNECT 127.0.0.1:443 HTTP/1.1") }
    }

    /// Connections to a proxy are pooled per proxy: requests in absolute form to two servers share one.
    @Test(arguments: Peer.allCases)
    func requestsToTwoServersShareTheConnectionToTheProxy(_ peer: Peer) async throws {
        let (proxy, session) = try await self.start(peer)
        defer {
            proxy.stop()
            Task { try? await session.shutdown() }
        }
        let second = try await KiteTestServer.start()
        defer { Task { try? await second.shutdown() } }
        let first = try await Backend.inProcess.baseURL()
        let one = await session.request(first + "/get").validate().serializingData().response
        let two = await session.request(second.baseURL + "/get").validate().serializingData().response
        #expect(one.error == nil && two.error == nil, "\(one) \(two)")
        let connections = try [#require(one.metrics?.connection), #require(two.metrics?.connection)]
        #expect(connections.map(\.remoteAddress) == Array(repeating: "127.0.0.1:\(proxy.port)", count: 2))
        switch peer {
        case .squid:
            #expect(connections[1].isReused && connections[1].id == connections[0].id, "\(connections)")
        case .tinyproxy:
            // tinyproxy closes each client connection after its request (it does not keep clients alive), so the
            // second request needs a connection of its own.
            #expect(!connections[1].isReused, "\(connections)")
        }
    }
}

/// A TLS server with the test authority's leaf certificate on 127.0.0.1:443: the only port that proxies with
/// their default configuration tunnel to. Started once, by the first test that needs it.
actor Port443Server {
    static let shared = Port443Server()
    private var starting: Task<(TestCertificateAuthority, KiteTestServer), any Error>?

    /// The authority and the server's base URL, `https://127.0.0.1:443`.
    func start() async throws -> (TestCertificateAuthority, String) {
        let task =
            self.starting
            ?? Task {
                let authority = try TestCertificateAuthority()
                let server = try await KiteTestServer.start(
                    host: "127.0.0.1",
                    port: 443,
                    tls: KiteTestServer.TLSOptions(authority: authority, certificate: .leaf)
                )
                return (authority, server)
            }
        self.starting = task
        let (authority, server) = try await task.value
        return (authority, server.baseURL)
    }
}
