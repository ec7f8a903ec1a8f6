import Foundation
import Kite
import NIOConcurrencyHelpers
import Testing

@testable import Kite

/// `authenticate(username:password:)` and `AuthenticationInterceptor` through the real pipeline.
@Suite struct AuthenticationPipelineTests {
    /// python httpbin's `/digest-auth` sets cookies on 127.0.0.1, which a jar sends to every port: this suite
    /// keeps them in a session of its own, away from the tests that compare echoed headers.
    static let session = Session()

    struct Authenticated: Decodable, Sendable {
        let authenticated: Bool
        let user: String
    }

    @Test(arguments: Backend.available)
    func basicChallengeIsAnswered(backend: Backend) async throws {
        let request = Self.session.request(try await backend.url("/basic-auth/kite/s3cret"))
            .authenticate(username: "kite", password: "s3cret")
            .validate()
        let value = try await request.serializingDecodable(Authenticated.self).value
        #expect(value.authenticated && value.user == "kite")
        #expect(request.request?.headerFields[.authorization] == nil, "nothing is sent before the server asks")
    }

    @Test(arguments: Backend.available, ["MD5", "SHA-256"])
    func digestChallengeIsAnswered(backend: Backend, algorithm: String) async throws {
        let value = try await Self.session.request(
            try await backend.url("/digest-auth/auth/kite/s3cret/\(algorithm)")
        )
        .authenticate(with: Credential(user: "kite", password: "s3cret"))
        .validate()
        .serializingDecodable(Authenticated.self).value
        #expect(value.authenticated && value.user == "kite")
    }

    @Test(arguments: Backend.available)
    func aWrongPasswordEndsWithAuthenticationFailed(backend: Backend) async throws {
        for path in ["/basic-auth/kite/s3cret", "/digest-auth/auth/kite/s3cret/MD5"] {
            let response = await Self.session.request(try await backend.url(path))
                .authenticate(username: "kite", password: "wrong")
                .serializingData().response
            #expect(response.error?.code == .authenticationFailed, "\(path)")
            #expect(response.error?.responseStatusCode == 401, "\(path)")
            #expect(response.error?.description.contains("wrong") == false, "the password is never in the error")
        }
    }

    @Test func aStaleDigestNonceIsAnsweredOnceMore() async throws {
        let base = try await SharedTestServer.shared.baseURL()
        let value = try await Self.session.request(base + "/digest-auth/auth/kite/s3cret/SHA-256/0")
            .authenticate(username: "kite", password: "s3cret")
            .validate()
            .serializingDecodable(Authenticated.self).value
        #expect(value.authenticated)
    }

    @Test func withoutACredentialA401IsTheResponse() async throws {
        let base = try await SharedTestServer.shared.baseURL()
        let response = await Self.session.request(base + "/basic-auth/kite/s3cret").serializingData().response
        #expect(response.error?.code != .authenticationFailed)
        #expect(response.response?.status.code == 401)
    }

    @Test func credentialsNeverLeaveTheirOrigin() async throws {
        let base = try await SharedTestServer.shared.baseURL()
        let port = try #require(URL(string: base)?.port)
        // 127.0.0.1 and localhost are different origins on the same server.
        let elsewhere = "http://localhost:\(port)/basic-auth/kite/s3cret"
        let encoded = elsewhere.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? elsewhere
        let crossOrigin = await Self.session.request(base + "/redirect-to?url=\(encoded)")
            .authenticate(username: "kite", password: "s3cret")
            .serializingData().response
        #expect(crossOrigin.error?.code != .authenticationFailed)
        #expect(crossOrigin.response?.status.code == 401, "the other origin's challenge is not answered")

        let sameOrigin = "/basic-auth/kite/s3cret".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let followed = await Self.session.request(base + "/redirect-to?url=\(sameOrigin)")
            .authenticate(username: "kite", password: "s3cret")
            .serializingData().response
        #expect(followed.response?.status.code == 200, "a challenge at the request's own origin is answered")
    }

    // MARK: AuthenticationInterceptor

    /// A token; "stale" says it needs a refresh before it is sent, any other is sent as it is.
    struct TokenCredential: AuthenticationCredential {
        let token: String
        var requiresRefresh: Bool { self.token == "stale" }
    }

    /// Sends the token as the password of user "kite"; the server only takes "fresh".
    final class TokenAuthenticator: Authenticator {
        let refreshes = NIOLockedValueBox(0)

        func apply(_ credential: TokenCredential, to request: inout HTTPRequest) {
            request.headerFields[.authorization] = Kite.Credential(user: "kite", password: credential.token)
                .basicAuthorization()
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
            request.headerFields[.authorization]
                == Kite.Credential(user: "kite", password: credential.token).basicAuthorization()
        }
    }

    @Test func fiftyConcurrent401sCauseExactlyOneRefresh() async throws {
        let base = try await SharedTestServer.shared.baseURL()
        let authenticator = TokenAuthenticator()
        let interceptor = AuthenticationInterceptor(
            authenticator: authenticator,
            credential: TokenCredential(token: "expired")
        )
        // Room for the fifty at once: with the default 8 connections, the back of the pool's queue can wait out
        // the 10 s connect timeout on a loaded machine (Session.suite says more).
        var configuration = Session.Configuration()
        configuration.maximumConnectionsPerHost = 64
        let session = Session(configuration: configuration, interceptor: interceptor)
        defer { Task { try await session.shutdown() } }
        let statuses = try await withThrowingTaskGroup(of: (Int?, Int).self) { group in
            for _ in 0..<50 {
                group.addTask {
                    let request = session.request(base + "/basic-auth/kite/fresh").validate()
                    let response = await request.serializingData().response
                    return (response.response?.status.code, request.retryCount)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(statuses.count == 50)
        #expect(statuses.allSatisfy { $0.0 == 200 }, "\(statuses)")
        #expect(statuses.allSatisfy { $0.1 <= 1 }, "each request is retried at most once")
        #expect(authenticator.refreshes.withLockedValue { $0 } == 1)
        #expect(interceptor.credential?.token == "fresh")
    }
}
