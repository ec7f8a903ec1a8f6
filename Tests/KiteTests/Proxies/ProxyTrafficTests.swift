import Foundation
import HTTPTypes
import KiteTestServer
import Testing

@testable import Kite

/// Real traffic through real proxies: tinyproxy (HTTP, `CONNECT`, Basic authentication) and pproxy (SOCKS5),
/// each test with a proxy of its own whose log shows what went through it; and the fault server as a hostile
/// proxy.
@Suite(.enabled(if: ProxyProcess.tinyproxyAvailable, "tinyproxy is not installed"), .timeLimit(.minutes(1)))
struct ProxyTrafficTests {
    static let user = "kite"
    static let password = "pass"

    private func session(
        _ proxy: ProxyConfiguration,
        configure: (inout Session.Configuration) -> Void = { _ in }
    )
        -> Session
    {
        var configuration = Session.Configuration()
        configuration.proxy = proxy
        configuration.timeouts.connect = .seconds(5)
        configure(&configuration)
        return Session(configuration: configuration)
    }

    /// The in-process server's echo of the request's header fields, as seen at the origin.
    private func originHeaders(_ session: Session, _ url: String) async throws -> [String: String] {
        let echo = try await session.request(url).validate().serializingJSON().value
        guard case .object(let fields) = echo["headers"] ?? .null else { return [:] }
        return fields.compactMapValues { if case .string(let value) = $0 { value } else { nil } }
    }

    private func authenticatingProxy() async throws -> ProxyProcess {
        try await ProxyProcess.start(.tinyproxy(user: Self.user, password: Self.password))
    }

    /// `proxy` as an HTTP proxy with the credentials it asks for.
    private func withCredentials(_ proxy: ProxyProcess) -> ProxyConfiguration {
        .http(host: "127.0.0.1", port: proxy.port, authorization: Credential(user: Self.user, password: Self.password))
    }

    @Test func plainHTTPGoesThroughTheProxysTunnelAndTheCredentialStaysWithTheProxy() async throws {
        let proxy = try await self.authenticatingProxy()
        defer { proxy.stop() }
        let base = try await Backend.inProcess.baseURL()
        let origin = try #require(URL(string: base)?.port)
        let session = self.session(self.withCredentials(proxy))
        defer { Task { try? await session.shutdown() } }
        let headers = try await self.originHeaders(session, base + "/headers")
        #expect(headers.header("Proxy-Authorization") == nil)
        #expect(headers.header("Host") == "127.0.0.1:\(origin)")
        try await proxy.waitForLog(containing: "CONNECT 127.0.0.1:\(origin) HTTP/1.1")
    }

    @Test func aDownloadGoesThroughTheProxy() async throws {
        let proxy = try await self.authenticatingProxy()
        defer { proxy.stop() }
        let base = try await Backend.inProcess.baseURL()
        let origin = try #require(URL(string: base)?.port)
        let session = self.session(self.withCredentials(proxy))
        defer { Task { try? await session.shutdown() } }
        let fileURL = try await session.download(base + "/range/300000").validate().serializingDownloadedFileURL().value
        defer { try? FileManager.default.removeItem(at: fileURL) }
        #expect(try Data(contentsOf: fileURL) == DownloadTests.rangeBody(300_000))
        try await proxy.waitForLog(containing: "CONNECT 127.0.0.1:\(origin) HTTP/1.1")
    }

    @Test func httpsGoesThroughCONNECTAndTheServerIsStillVerified() async throws {
        let proxy = try await self.authenticatingProxy()
        defer { proxy.stop() }
        let (authority, base) = try await TrustServers.shared.server(.leaf)
        let origin = try #require(URL(string: base)?.port)
        let credential = Credential(user: Self.user, password: Self.password)
        let session = self.session(.http(host: "127.0.0.1", port: proxy.port, authorization: credential)) {
            $0.tls.trustRoots = .certificates([authority.root.certificate])
        }
        defer { Task { try? await session.shutdown() } }
        let headers = try await self.originHeaders(session, base + "/headers")
        #expect(headers.header("Proxy-Authorization") == nil)
        try await proxy.waitForLog(containing: "CONNECT 127.0.0.1:\(origin) HTTP/1.1")

        // Through the same proxy, a server the session does not trust is still refused.
        let (_, untrusted) = try await TrustServers.shared.server(.selfSigned)
        let refused = await session.request(untrusted + "/get").serializingData().response
        #expect(refused.error?.code == .serverTrustEvaluationFailed)
    }

    @Test func aProxyAskingForCredentialsFailsTheRequestWithProxyFailed() async throws {
        let proxy = try await self.authenticatingProxy()
        defer { proxy.stop() }
        let url = try await Backend.inProcess.url("/get")
        let without = self.session(.http(host: "127.0.0.1", port: proxy.port))
        let wrong = self.session(
            .http(host: "127.0.0.1", port: proxy.port, authorization: Credential(user: Self.user, password: "nope"))
        )
        defer {
            Task {
                try? await without.shutdown()
                try? await wrong.shutdown()
            }
        }
        let first = await without.request(url).serializingData().response.error
        #expect(first?.code == .proxyFailed)
        #expect(
            first?.message
                == "the proxy http://127.0.0.1:\(proxy.port) asks for credentials (407): give them in the proxy URL or as its authorization"
        )
        let second = await wrong.request(url).serializingData().response.error
        #expect(second?.code == .proxyFailed)
        // tinyproxy answers a wrong password with 401, not 407; the engine tells only that it was not 2xx.
        let origin = try #require(URL(string: url)?.port)
        #expect(
            second?.message
                == "the proxy http://127.0.0.1:\(proxy.port) refused the tunnel to 127.0.0.1:\(origin) (its answer to CONNECT was not 2xx)"
        )
        #expect(second?.description.contains("nope") == false)
    }

    @Test func theEnvironmentChoosesTheProxyAndNoProxyBypassesIt() async throws {
        let proxy = try await self.authenticatingProxy()
        defer { proxy.stop() }
        let base = try await Backend.inProcess.baseURL()
        let origin = try #require(URL(string: base)?.port)
        // The password is percent-decoded ("%73" is "s"; tinyproxy's configuration takes only letters and digits).
        let proxyURL = "http://\(Self.user):pa%73s@127.0.0.1:\(proxy.port)"
        let proxied = self.session(.environment(variables: ["http_proxy": proxyURL]))
        let bypassed = self.session(
            .environment(variables: ["http_proxy": proxyURL, "no_proxy": "localhost,127.0.0.0/8"])
        )
        let cgi = self.session(.environment(variables: ["HTTP_PROXY": proxyURL, "REQUEST_METHOD": "GET"]))
        defer {
            Task {
                try? await proxied.shutdown()
                try? await bypassed.shutdown()
                try? await cgi.shutdown()
            }
        }
        let tunnel = "CONNECT 127.0.0.1:\(origin) HTTP/1.1"
        // The bypassed and CGI sessions go first: the proxy's log must still have no tunnel afterwards.
        #expect(try await self.originHeaders(bypassed, base + "/headers").header("Proxy-Authorization") == nil)
        #expect(try await self.originHeaders(cgi, base + "/headers").header("Proxy-Authorization") == nil)
        #expect(!proxy.log.contains(tunnel))
        #expect(try await self.originHeaders(proxied, base + "/headers").header("Proxy-Authorization") == nil)
        try await proxy.waitForLog(containing: tunnel)
    }

    @Test func aProxyThatIsNotListeningIsNamedInTheError() async throws {
        let port = try Sockets.refusingPort()
        let session = self.session(.http(host: "127.0.0.1", port: port))
        defer { Task { try? await session.shutdown() } }
        let error = await session.request(try await Backend.inProcess.url("/get")).serializingData().response.error
        #expect(error?.code == .connectionFailed)
        #expect(error?.message.hasPrefix("through the proxy http://127.0.0.1:\(port): could not connect to") == true)
    }

    @Test func anUnusableProxyVariableFailsEachRequestItApplies() async throws {
        let session = self.session(
            .environment(variables: ["https_proxy": "https://user:secret@proxy.example:8443", "http_proxy": ""])
        )
        defer { Task { try? await session.shutdown() } }
        let secure = await session.request("https://example.invalid/").serializingData().response.error
        #expect(secure?.code == .proxyFailed)
        #expect(secure?.description.contains("https_proxy") == true)
        #expect(secure?.description.contains("secret") == false)
        // http_proxy is empty, so plain http goes direct, and the in-process server answers.
        let plain = await session.request(try await Backend.inProcess.url("/get")).serializingData().response
        #expect(plain.response?.status == .ok)
    }
}

/// SOCKS5 through pproxy.
@Suite(.enabled(if: ProxyProcess.pproxyAvailable, "pproxy is not installed in .venv"), .timeLimit(.minutes(1)))
struct SOCKSProxyTests {
    @Test(arguments: [false, true])
    func requestsGoThroughASOCKS5Proxy(fromEnvironment: Bool) async throws {
        let proxy = try await ProxyProcess.start(.socks5)
        defer { proxy.stop() }
        let base = try await Backend.inProcess.baseURL()
        let origin = try #require(URL(string: base)?.port)
        var configuration = Session.Configuration()
        configuration.proxy =
            fromEnvironment
            ? .environment(variables: ["all_proxy": "socks5h://127.0.0.1:\(proxy.port)"])
            : .socks(host: "127.0.0.1", port: proxy.port)
        let session = Session(configuration: configuration)
        defer { Task { try? await session.shutdown() } }
        let response = await session.request(base + "/get?via=socks").validate().serializingJSON().response
        #expect(response.value?["args"]?["via"] == .string("socks"))
        try await proxy.waitForLog(containing: "-> 127.0.0.1:\(origin)")
    }
}

/// The fault server as a hostile HTTP proxy: each misbehaviour ends the request with a clear error, in bounded
/// time, never a crash or a hang.
@Suite(.timeLimit(.minutes(1))) struct HostileProxyTests {
    /// The fault server's misbehaviour (picked by the CONNECT target's host) and the codes a request may end
    /// with. Where the proxy closes the connection, the engine reports what it saw first (the closed channel,
    /// its CONNECT handler removed, or for `https` the TLS handshake cut), so several codes are right; each
    /// error must name the proxy.
    static let cases: [(host: String, http: Set<KiteError.Code>, https: Set<KiteError.Code>)] = [
        ("proxy-407.test", [.proxyFailed], [.proxyFailed]),
        ("proxy-403.test", [.proxyFailed], [.proxyFailed]),
        // The 200 head opens the tunnel; for https the body bytes then reach the TLS handshake.
        ("proxy-body.test", [.proxyFailed, .connectionLost], [.proxyFailed, .connectionLost, .tlsFailed]),
        ("proxy-silent.test", [.timedOut], [.timedOut]),
        ("proxy-fin.test", [.proxyFailed, .connectionLost], [.proxyFailed, .connectionLost]),
        ("proxy-rst.test", [.proxyFailed, .connectionLost], [.proxyFailed, .connectionLost]),
        ("proxy-garbage.test", [.proxyFailed, .connectionLost, .invalidResponse], [.proxyFailed, .connectionLost]),
        ("proxy-drop.test", [.connectionLost], [.tlsFailed, .connectionLost]),
    ]

    @Test(arguments: Self.cases)
    func aHostileProxyEndsTheRequestWithAClearError(
        host: String,
        http: Set<KiteError.Code>,
        https: Set<KiteError.Code>
    ) async throws {
        _ = try await FaultServer.shared.baseURL()
        let port = try #require(await FaultServer.shared.port)
        var configuration = Session.Configuration()
        configuration.proxy = .http(host: "127.0.0.1", port: port)
        // 3 s: the silent proxy's case waits that long; with 1 s, a loaded machine once let the timeout fire
        // before the fault server's answer arrived in another case.
        configuration.timeouts.connect = .seconds(3)
        let session = Session(configuration: configuration)
        defer { Task { try? await session.shutdown() } }
        for (scheme, codes) in [("http", http), ("https", https)] {
            let error = await session.request("\(scheme)://\(host)/get").serializingData().response.error
            let said = error.map(String.init(describing:)) ?? "no error"
            #expect(error.map { codes.contains($0.code) } == true, "\(scheme): \(said)")
            #expect(said.contains("proxy http://127.0.0.1:\(port)"), "\(scheme): \(said)")
        }
    }
}
