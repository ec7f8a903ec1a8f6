import Foundation
import Kite
import Testing

/// The examples of the "Interceptors, retries and authentication" article, run against the test server.
@Suite struct InterceptorDocumentationExampleTests {
    struct OAuthCredential: AuthenticationCredential {
        let accessToken: String
        let expiration: Date
        var requiresRefresh: Bool { Date(timeIntervalSinceNow: 5 * 60) > expiration }
    }

    final class OAuthAuthenticator: Authenticator {
        func apply(_ credential: OAuthCredential, to request: inout HTTPRequest) {
            request.headerFields[.authorization] = "Bearer \(credential.accessToken)"
        }
        func refresh(_ credential: OAuthCredential, for session: Session) async throws -> OAuthCredential {
            OAuthCredential(accessToken: "fresh", expiration: Date(timeIntervalSinceNow: 3600))
        }
        func didRequest(
            _ request: HTTPRequest,
            with response: HTTPResponse,
            failDueToAuthenticationError error: KiteError
        ) -> Bool {
            response.status.code == 401
        }
        func isRequest(_ request: HTTPRequest, authenticatedWith credential: OAuthCredential) -> Bool {
            request.headerFields[.authorization] == "Bearer \(credential.accessToken)"
        }
    }

    @Test func theArticleExamplesBehaveAsDescribed() async throws {
        let base = try await SharedTestServer.shared.baseURL()

        let token = Adapter { request, session in
            var request = request
            request.headerFields[.authorization] = "Bearer s3cret"
            return request
        }
        let echo = try await Session.suite.request(base + "/headers", interceptor: token).serializingJSON().value
        #expect(echo["headers"]?["Authorization"] == .string("Bearer s3cret"))

        let retrier = Retrier { request, session, error in
            error.responseStatusCode == 503 && request.retryCount < 3
                ? .retryWithDelay(.milliseconds(200)) : .doNotRetry
        }
        let session = Session(
            configuration: .default,
            interceptor: Interceptor(adapters: [token], retriers: [RetryPolicy()])
        )
        defer { Task { try await session.shutdown() } }
        let flaky = session.request(base + "/flaky/\(UUID().uuidString)?failures=2", interceptor: retrier).validate()
        let data = try await flaky.serializingData().value
        #expect(!data.isEmpty)
        #expect(flaky.retryCount == 2)

        let secret = try await Session.suite.request(base + "/digest-auth/auth/kite/s3cret/SHA-256")
            .authenticate(username: "kite", password: "s3cret")
            .validate()
            .serializingJSON()
            .value
        #expect(secret["authenticated"] == .bool(true))

        let interceptor = AuthenticationInterceptor(
            authenticator: OAuthAuthenticator(),
            credential: OAuthCredential(accessToken: "old", expiration: .distantFuture)
        )
        let api = Session(configuration: .default, interceptor: interceptor)
        defer { Task { try await api.shutdown() } }
        let bearer = try await api.request(base + "/bearer").validate().serializingJSON().value
        #expect(bearer["token"] == .string("old"))

        let stay = Session(configuration: .default, redirectHandler: Redirector.doNotFollow)
        defer { Task { try await stay.shutdown() } }
        let response = await stay.request(base + "/redirect/1").serializingData().response
        #expect(response.response?.status.code == 302)

        let tagged = await Session.suite.request(base + "/redirect-to?url=%2Fheaders")
            .redirect(
                using: .modify { _, request, _ in
                    var request = request
                    request.headerFields[HTTPField.Name("X-Redirected")!] = "1"
                    return request
                }
            )
            .serializingJSON()
            .response
        #expect(tagged.value?["headers"]?["X-Redirected"] == .string("1"))
    }
}
