import Foundation
import HTTPTypes
import Kite
import KiteOpenAPI
import KiteTestServer
import NIOConcurrencyHelpers
import OpenAPIRuntime
import Testing

/// Parts of the session's pipeline that the generated-client tests do not reach: Digest challenges,
/// `AuthenticationInterceptor` and trust pinning, each through `KiteClientTransport`.
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

    struct TokenCredential: AuthenticationCredential {
        let token: String
        var requiresRefresh: Bool { self.token == "expired" }
    }

    /// Sends the token as the password of user "kite"; the server takes only "fresh".
    final class TokenAuthenticator: Authenticator {
        let refreshes = NIOLockedValueBox(0)

        static func authorization(_ credential: TokenCredential) -> String {
            "Basic " + Data("kite:\(credential.token)".utf8).base64EncodedString()
        }

        func apply(_ credential: TokenCredential, to request: inout HTTPRequest) {
            request.headerFields[.authorization] = Self.authorization(credential)
        }

        func refresh(_ credential: TokenCredential, for session: Session) async throws -> TokenCredential {
            self.refreshes.withLockedValue { $0 += 1 }
            return TokenCredential(token: "fresh")
        }

        func didRequest(
            _ request: HTTPRequest,
            with response: HTTPResponse,
            failDueToAuthenticationError error: KiteError
        ) -> Bool {
            response.status.code == 401
        }

        func isRequest(_ request: HTTPRequest, authenticatedWith credential: TokenCredential) -> Bool {
            request.headerFields[.authorization] == Self.authorization(credential)
        }
    }

    @Test func anExpiredCredentialIsRefreshedOnceBeforeTheRequestsAreSent() async throws {
        let base = try await Backend.inProcess.baseURL()
        let authenticator = TokenAuthenticator()
        let interceptor = AuthenticationInterceptor(
            authenticator: authenticator,
            credential: TokenCredential(token: "expired")
        )
        let transport = KiteClientTransport(session: Session(interceptor: interceptor))
        for _ in 0..<3 {
            let (status, data) = try await Self.get("/basic-auth/kite/fresh", base: base, through: transport)
            #expect(status == 200)
            #expect(try JSONDecoder().decode(Authenticated.self, from: data).authenticated)
        }
        #expect(authenticator.refreshes.withLockedValue { $0 } == 1)
        #expect(interceptor.credential?.token == "fresh")
    }

    @Test func a401IsTheTypedResponseNotARefresh() async throws {
        // As in Alamofire without `validate()`: a 401 is a response, not a failed attempt, so the interceptor's
        // retry (which refreshes on a 401) is not asked; the generated client gets its typed `.unauthorized`.
        let base = try await Backend.inProcess.baseURL()
        let authenticator = TokenAuthenticator()
        let interceptor = AuthenticationInterceptor(
            authenticator: authenticator,
            credential: TokenCredential(token: "revoked")
        )
        let transport = KiteClientTransport(session: Session(interceptor: interceptor))
        let (status, _) = try await Self.get("/basic-auth/kite/fresh", base: base, through: transport)
        #expect(status == 401)
        #expect(authenticator.refreshes.withLockedValue { $0 } == 0)
        #expect(interceptor.credential?.token == "revoked")
    }

    // MARK: Trust pinning

    @Test func aPinnedCertificateIsRequiredOfTheServer() async throws {
        let authority = try TestCertificateAuthority()
        let server = try await KiteTestServer.start(
            host: "127.0.0.1",
            port: 0,
            tls: KiteTestServer.TLSOptions(authority: authority, certificate: .leaf)
        )
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
        let (status, _) = try await Self.get(
            "/get",
            base: server.baseURL,
            through: transport(pinning: authority.intermediate)
        )
        #expect(status == 200)
        let error = await #expect(throws: KiteError.self) {
            _ = try await Self.get("/get", base: server.baseURL, through: transport(pinning: authority.selfSigned))
        }
        #expect(error?.code == .serverTrustEvaluationFailed)
        try await server.shutdown()
    }
}
