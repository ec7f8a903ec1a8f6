import Foundation
import HTTPTypes
import Kite
import KiteOpenAPI
import KiteTestServer
import OpenAPIRuntime
import Testing

/// Parts of the session's pipeline that KiteOpenAPITests do not reach: Digest challenges,
/// `AuthenticationInterceptor` and trust pinning, each through a generated client's `KiteClientTransport`
/// (proxies: ProxyTrafficTests).
@Suite struct TransportPipelineTests {
    /// Sends `GET path` through `transport` and returns the status and the body.
    static func get(_ path: String, base: String, through transport: KiteClientTransport) async throws -> (Int, Data) {
        let head = HTTPRequest(method: .get, scheme: nil, authority: nil, path: path)
        let (response, body) = try await transport.send(
            head,
            body: nil,
            baseURL: try #require(URL(string: base)),
            operationID: "pipeline"
        )
        guard let body else { return (response.status.code, Data()) }
        return (response.status.code, try await Data(collecting: body, upTo: 1 << 20))
    }

    struct Authenticated: Decodable {
        let authenticated: Bool
        let user: String
    }

    // MARK: Digest

    @Test(arguments: ["MD5", "SHA-256"])
    func theTransportsCredentialAnswersDigestChallenges(algorithm: String) async throws {
        let base = try await Backend.inProcess.baseURL()
        let path = "/digest-auth/auth/kite/s3cret/\(algorithm)"
        let session = Session()
        let answered = KiteClientTransport(session: session, credential: Credential(user: "kite", password: "s3cret"))
        let (status, data) = try await Self.get(path, base: base, through: answered)
        #expect(status == 200)
        let value = try JSONDecoder().decode(Authenticated.self, from: data)
        #expect(value.authenticated && value.user == "kite")
        // Without a credential the challenge is the response, as any status is.
        let (unanswered, _) = try await Self.get(path, base: base, through: KiteClientTransport(session: session))
        #expect(unanswered == 401)
    }

    // MARK: AuthenticationInterceptor

    /// A transport whose session authenticates with `token` (AuthenticationPipelineTests' authenticator: the
    /// server takes only "fresh", and "stale" is refreshed before it is sent).
    static func tokenTransport(
        _ token: String
    ) -> (AuthenticationPipelineTests.TokenAuthenticator, KiteClientTransport, () -> String?) {
        let authenticator = AuthenticationPipelineTests.TokenAuthenticator()
        let interceptor = AuthenticationInterceptor(
            authenticator: authenticator,
            credential: AuthenticationPipelineTests.TokenCredential(token: token)
        )
        let transport = KiteClientTransport(session: Session(interceptor: interceptor))
        return (authenticator, transport, { interceptor.credential?.token })
    }

    @Test func aStaleCredentialIsRefreshedOnceBeforeTheRequestsAreSent() async throws {
        let base = try await Backend.inProcess.baseURL()
        let (authenticator, transport, token) = Self.tokenTransport("stale")
        for _ in 0..<3 {
            let (status, data) = try await Self.get("/basic-auth/kite/fresh", base: base, through: transport)
            #expect(status == 200)
            #expect(try JSONDecoder().decode(Authenticated.self, from: data).authenticated)
        }
        #expect(authenticator.refreshes.withLockedValue { $0 } == 1)
        #expect(token() == "fresh")
    }

    @Test func a401IsTheTypedResponseNotARefresh() async throws {
        // As in Alamofire without `validate()`: a 401 is a response, not a failed attempt, so the interceptor's
        // retry (which refreshes on a 401) is not asked; the generated client gets its typed `.unauthorized`.
        let base = try await Backend.inProcess.baseURL()
        let (authenticator, transport, token) = Self.tokenTransport("revoked")
        let (status, _) = try await Self.get("/basic-auth/kite/fresh", base: base, through: transport)
        #expect(status == 401)
        #expect(authenticator.refreshes.withLockedValue { $0 } == 0)
        #expect(token() == "revoked")
    }

    // MARK: Trust pinning

    @Test func aPinnedCertificateIsRequiredOfTheServer() async throws {
        let (authority, base) = try await TrustServers.shared.server(.leaf)
        /// A transport on a session that trusts the test root and pins `pinned`'s certificate for 127.0.0.1.
        func transport(pinning pinned: TestCertificateAuthority.Credential) -> KiteClientTransport {
            var configuration = Session.Configuration()
            configuration.tls.trustRoots = .certificates([authority.root.certificate])
            configuration.timeouts.connect = .seconds(5)
            let manager = ServerTrustManager(evaluators: [
                "127.0.0.1": PinnedCertificatesTrustEvaluator(certificates: [pinned.certificate])
            ])
            return KiteClientTransport(session: Session(configuration: configuration, serverTrustManager: manager))
        }
        let (status, _) = try await Self.get("/get", base: base, through: transport(pinning: authority.intermediate))
        #expect(status == 200)
        let error = await #expect(throws: KiteError.self) {
            _ = try await Self.get("/get", base: base, through: transport(pinning: authority.selfSigned))
        }
        #expect(error?.code == .serverTrustEvaluationFailed)
    }
}
