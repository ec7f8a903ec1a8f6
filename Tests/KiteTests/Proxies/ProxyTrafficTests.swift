import Foundation
import HTTPTypes
import KiteOpenAPI
import KiteTestServer
import OpenAPIRuntime
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
        Self.headers(echoedIn: try await session.request(url).validate().serializingJSON().value)
    }

    /// The header fields in the server's `/headers` echo.
    private static func headers(echoedIn echo: JSONValue) -> [String: String] {
        guard case .object(let fields) = echo["headers"] ?? .null else { return [:] }
        return fields.compactMapValues { if case .string(let value) = $0 { value } else { nil } }
    }

    private func authenticatingProxy() async throws -> ProxyProcess {
        try await ProxyProcess.start(.tinyproxy(user: Self.user, password: Self.password))
    }

    /// The authenticating proxy, and the in-process server's base URL and port behind it.
    private func proxyAndOrigin() async throws -> (proxy: ProxyProcess, base: String, origin: Int) {
        let proxy = try await self.authenticatingProxy()
        do {
            let base = try await Backend.inProcess.baseURL()
            return (proxy, base, try #require(URL(string: base)?.port))
        } catch {
            proxy.stop()
            throw error
        }
    }

    /// `proxy` as an HTTP proxy with the credentials it asks for.
    private func withCredentials(_ proxy: ProxyProcess) -> ProxyConfiguration {
        .http(host: "127.0.0.1", port: proxy.port, authorization: Credential(user: Self.user, password: Self.password))
    }

    /// tinyproxy's log line for a request it was handed in absolute form.
    static func forwarded(_ path: String, origin: Int) -> String {
        "GET http://127.0.0.1:\(origin)\(path) HTTP/1.1"
    }

    @Test func plainHTTPGoesToTheProxyInAbsoluteFormAndTheCredentialStaysWithTheProxy() async throws {
        let (proxy, base, origin) = try await self.proxyAndOrigin()
        defer { proxy.stop() }
        let session = self.session(self.withCredentials(proxy))
        defer { Task { try? await session.shutdown() } }
        let headers = try await self.originHeaders(session, base + "/headers?twice")
        #expect(headers.header("Proxy-Authorization") == nil)
        #expect(headers.header("Host") == "127.0.0.1:\(origin)")
        try await proxy.waitForLog(containing: Self.forwarded("/headers?twice", origin: origin))
        #expect(!proxy.log.contains("CONNECT 127.0.0.1"))
    }

    @Test func aGeneratedClientsTransportGoesThroughTheProxy() async throws {
        let (proxy, base, origin) = try await self.proxyAndOrigin()
        defer { proxy.stop() }
        let session = self.session(self.withCredentials(proxy))
        defer { Task { try? await session.shutdown() } }
        let (response, body) = try await KiteClientTransport(session: session).send(
            HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/headers?transport"),
            body: nil,
            baseURL: try #require(URL(string: base)),
            operationID: "headers"
        )
        #expect(response.status == .ok)
        let data = try await Data(collecting: try #require(body), upTo: 1 << 20)
        let headers = Self.headers(echoedIn: try JSONDecoder().decode(JSONValue.self, from: data))
        #expect(headers.header("Proxy-Authorization") == nil, "the proxy's credential stays with the proxy")
        #expect(headers.header("Host") == "127.0.0.1:\(origin)")
        try await proxy.waitForLog(containing: Self.forwarded("/headers?transport", origin: origin))
    }

    @Test func tunnelsPlainHTTPSendsPlainHTTPThroughCONNECT() async throws {
        let (proxy, base, origin) = try await self.proxyAndOrigin()
        defer { proxy.stop() }
        let credential = Credential(user: Self.user, password: Self.password)
        let session = self.session(
            .http(host: "127.0.0.1", port: proxy.port, authorization: credential, tunnelsPlainHTTP: true)
        )
        defer { Task { try? await session.shutdown() } }
        let headers = try await self.originHeaders(session, base + "/headers")
        #expect(headers.header("Proxy-Authorization") == nil)
        try await proxy.waitForLog(containing: "CONNECT 127.0.0.1:\(origin) HTTP/1.1")
        #expect(!proxy.log.contains("GET http://"))
    }

    @Test func aDownloadGoesThroughTheProxy() async throws {
        let (proxy, base, origin) = try await self.proxyAndOrigin()
        defer { proxy.stop() }
        let session = self.session(self.withCredentials(proxy))
        defer { Task { try? await session.shutdown() } }
        let fileURL = try await session.download(base + "/range/300000").validate().serializingDownloadedFileURL().value
        defer { try? FileManager.default.removeItem(at: fileURL) }
        #expect(try Data(contentsOf: fileURL) == DownloadTests.rangeBody(300_000))
        try await proxy.waitForLog(containing: Self.forwarded("/range/300000", origin: origin))
    }

    /// A body streamed in slices (over 64 KiB) goes to the proxy in absolute form and reaches the server whole.
    @Test func anUploadGoesThroughTheProxyInAbsoluteForm() async throws {
        let (proxy, base, origin) = try await self.proxyAndOrigin()
        defer { proxy.stop() }
        let session = self.session(self.withCredentials(proxy))
        defer { Task { try? await session.shutdown() } }
        let body = String(repeating: "kite-proxy ", count: 30_000)
        let echo = try await session.upload(Data(body.utf8), to: base + "/post", headers: [.contentType: "text/plain"])
            .validate().serializingJSON().value
        #expect(echo["data"] == .string(body))
        try await proxy.waitForLog(containing: "POST http://127.0.0.1:\(origin)/post HTTP/1.1")
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

        // Through the same proxy, a server the session does not trust is still refused, with the reason read over
        // a second connection that goes through the proxy too: a second tunnel to that server.
        let (_, untrusted) = try await TrustServers.shared.server(.selfSigned)
        let untrustedTunnel = "CONNECT 127.0.0.1:\(try #require(URL(string: untrusted)?.port)) HTTP/1.1"
        let refused = await session.request(untrusted + "/get").serializingData().response
        #expect(refused.error?.code == .serverTrustEvaluationFailed)
        #expect(refused.error?.message.contains("its certificate is self-signed (") == true, "\(refused)")
        try await proxy.waitForLog(containing: untrustedTunnel, times: 2)
    }

    @Test func withoutTheDiagnosisATrustFailureOpensNoSecondConnection() async throws {
        let proxy = try await self.authenticatingProxy()
        defer { proxy.stop() }
        let (authority, base) = try await TrustServers.shared.server(.leaf)
        let (_, untrusted) = try await TrustServers.shared.server(.selfSigned)
        let session = self.session(self.withCredentials(proxy)) {
            $0.tls.trustRoots = .certificates([authority.root.certificate])
            $0.tls.diagnosesTrustFailures = false
        }
        defer { Task { try? await session.shutdown() } }
        let refused = await session.request(untrusted + "/get").serializingData().response
        #expect(refused.error?.code == .serverTrustEvaluationFailed)
        #expect(refused.error?.message == "the server 127.0.0.1 is not trusted: its certificate failed verification")
        // A request after it marks the log: by then, a second connection would have been logged.
        _ = try await self.originHeaders(session, base + "/headers")
        try await proxy.waitForLog(containing: "CONNECT 127.0.0.1:\(try #require(URL(string: base)?.port))")
        #expect(proxy.logLines(containing: "CONNECT 127.0.0.1:\(try #require(URL(string: untrusted)?.port))") == 1)
    }

    @Test func aProxyAskingForCredentialsFailsTheRequestWithProxyFailed() async throws {
        let proxy = try await self.authenticatingProxy()
        defer { proxy.stop() }
        let url = try await Backend.inProcess.url("/get")
        let (_, secure) = try await TrustServers.shared.server(.leaf)
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
        // The proxy's 407, to a CONNECT (https) and to a request in absolute form (http) alike.
        for target in [url, secure + "/get"] {
            let first = await without.request(target).serializingData().response.error
            #expect(first?.code == .proxyFailed, "\(target)")
            #expect(
                first?.message
                    == "the proxy http://127.0.0.1:\(proxy.port) asks for credentials (407): give them in the proxy URL or as its authorization",
                "\(target)"
            )
        }
        // tinyproxy answers a wrong password with 401, not 407. To a CONNECT, the engine tells only that it was not
        // 2xx; to plain http it is the answer, as curl shows it, and the server never saw the request.
        let secureOrigin = try #require(URL(string: secure)?.port)
        let second = await wrong.request(secure + "/get").serializingData().response.error
        #expect(second?.code == .proxyFailed)
        #expect(
            second?.message
                == "the proxy http://127.0.0.1:\(proxy.port) refused the tunnel to 127.0.0.1:\(secureOrigin) (its answer to CONNECT was not 2xx)"
        )
        #expect(second?.description.contains("nope") == false)
        let plain = await wrong.request(url).serializingString().response
        #expect(plain.response?.status == .unauthorized)
        #expect(plain.value?.contains("tinyproxy") == true)
    }

    @Test func theEnvironmentChoosesTheProxyAndNoProxyBypassesIt() async throws {
        let (proxy, base, origin) = try await self.proxyAndOrigin()
        defer { proxy.stop() }
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
        let tunnel = Self.forwarded("/headers", origin: origin)
        // The bypassed and CGI sessions go first: the proxy's log must still have no request afterwards.
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

extension SOCKSProxyTests {
    /// A trust failure's diagnosis reaches the server the way the request did: through the SOCKS proxy.
    @Test func theTrustDiagnosisGoesThroughTheSOCKSProxy() async throws {
        let proxy = try await ProxyProcess.start(.socks5)
        defer { proxy.stop() }
        let (_, untrusted) = try await TrustServers.shared.server(.selfSigned)
        let origin = try #require(URL(string: untrusted)?.port)
        var configuration = Session.Configuration()
        configuration.proxy = .socks(host: "127.0.0.1", port: proxy.port)
        let session = Session(configuration: configuration)
        defer { Task { try? await session.shutdown() } }
        let refused = await session.request(untrusted + "/get").serializingData().response
        #expect(refused.error?.code == .serverTrustEvaluationFailed)
        #expect(refused.error?.message.contains("its certificate is self-signed (") == true, "\(refused)")
        try await proxy.waitForLog(containing: "-> 127.0.0.1:\(origin)", times: 2)
    }
}

/// The fault server as a hostile HTTP proxy: each misbehaviour ends the request with a clear error, in bounded
/// time, never a crash or a hang. `https` goes through `CONNECT`; plain `http` goes to the proxy in absolute form,
/// where the proxy's answer is the response (a `403` is a response like a server's; a `407` is the proxy's own).
@Suite(.timeLimit(.minutes(1))) struct HostileProxyTests {
    /// What a plain `http` request through the proxy ends with.
    enum Outcome: Sendable, CustomStringConvertible {
        case failure(Set<KiteError.Code>)
        case status(Int)

        var description: String {
            switch self {
            case .failure(let codes): "a failure with one of \(codes.map(\.description).sorted())"
            case .status(let status): "status \(status)"
            }
        }
    }

    /// The fault server's misbehaviour (picked by the target's host) and what a request may end with. Where the
    /// proxy closes the connection, the engine reports what it saw first (the closed channel, its CONNECT handler
    /// removed, or for `https` the TLS handshake cut), so several codes are right; each error must name the proxy.
    static let cases: [(host: String, http: Outcome, https: Set<KiteError.Code>)] = [
        ("proxy-407.test", .failure([.proxyFailed]), [.proxyFailed]),
        ("proxy-403.test", .status(403), [.proxyFailed]),
        // The 200 head opens the tunnel; for https the body bytes then reach the TLS handshake. In absolute form,
        // the proxy sends 5 of 100 bytes and closes.
        ("proxy-body.test", .failure([.connectionLost]), [.proxyFailed, .connectionLost, .tlsFailed]),
        ("proxy-silent.test", .failure([.timedOut]), [.timedOut]),
        ("proxy-fin.test", .failure([.connectionLost, .invalidResponse]), [.proxyFailed, .connectionLost]),
        ("proxy-rst.test", .failure([.connectionLost]), [.proxyFailed, .connectionLost]),
        ("proxy-garbage.test", .failure([.connectionLost, .invalidResponse]), [.proxyFailed, .connectionLost]),
        ("proxy-drop.test", .failure([.connectionLost]), [.tlsFailed, .connectionLost]),
    ]

    @Test(arguments: Self.cases)
    func aHostileProxyEndsTheRequestWithAClearError(
        host: String,
        http: Outcome,
        https: Set<KiteError.Code>
    ) async throws {
        _ = try await FaultServer.shared.baseURL()
        let port = try #require(await FaultServer.shared.port)
        var configuration = Session.Configuration()
        configuration.proxy = .http(host: "127.0.0.1", port: port)
        // 3 s: the silent proxy's case waits that long (for https to open the tunnel, for http for the response);
        // with 1 s, a loaded machine once let the timeout fire before the fault server's answer arrived in
        // another case.
        configuration.timeouts.connect = .seconds(3)
        configuration.timeouts.idleRead = .seconds(3)
        let session = Session(configuration: configuration)
        defer { Task { try? await session.shutdown() } }
        let plain = await session.request("http://\(host)/get").serializingData().response
        switch http {
        case .failure(let codes):
            let said = plain.error.map(String.init(describing:)) ?? "no error"
            #expect(plain.error.map { codes.contains($0.code) } == true, "http: \(said)")
            #expect(said.contains("proxy http://127.0.0.1:\(port)"), "http: \(said)")
        case .status(let status):
            #expect(plain.error == nil && plain.response?.status.code == status, "http: \(plain)")
        }
        let error = await session.request("https://\(host)/get").serializingData().response.error
        let said = error.map(String.init(describing:)) ?? "no error"
        #expect(error.map { https.contains($0.code) } == true, "https: \(said)")
        #expect(said.contains("proxy http://127.0.0.1:\(port)"), "https: \(said)")
    }
}
