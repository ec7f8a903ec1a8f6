import Foundation
import HTTPTypes
import NIOConcurrencyHelpers
import Testing

@testable import Kite

/// An OAuth 2 credential, as in the ``AuthenticationInterceptor`` documentation.
private struct OAuthCredential: AuthenticationCredential, Equatable {
    let accessToken: String
    let refreshToken: String
    let expiration: Date

    var requiresRefresh: Bool { Date(timeIntervalSinceNow: 5 * 60) > self.expiration }

    static func valid(_ token: String) -> OAuthCredential {
        OAuthCredential(accessToken: token, refreshToken: "r-\(token)", expiration: Date(timeIntervalSinceNow: 3600))
    }

    static func expiring(_ token: String) -> OAuthCredential {
        OAuthCredential(accessToken: token, refreshToken: "r-\(token)", expiration: Date(timeIntervalSinceNow: 60))
    }
}

private struct RefreshFailure: Error, Equatable {}

/// The authenticator of the ``AuthenticationInterceptor`` documentation, word for word.
private final class DocumentedOAuthAuthenticator: Authenticator {
    struct Tokens: Decodable, Sendable {
        let access_token: String
        let refresh_token: String
        let expires_in: Double
    }

    func apply(_ credential: OAuthCredential, to request: inout HTTPRequest) {
        request.headerFields[.authorization] = "Bearer \(credential.accessToken)"
    }

    func refresh(_ credential: OAuthCredential, for session: Session) async throws -> OAuthCredential {
        let tokens = try await session.request(
            "https://auth.example.com/token",
            method: .post,
            parameters: ["grant_type": "refresh_token", "refresh_token": credential.refreshToken]
        )
        .validate()
        .serializingDecodable(Tokens.self)
        .value
        return OAuthCredential(
            accessToken: tokens.access_token,
            refreshToken: tokens.refresh_token,
            expiration: Date(timeIntervalSinceNow: tokens.expires_in)
        )
    }

    func didRequest(
        _ request: HTTPRequest,
        with response: HTTPResponse,
        failDueToAuthenticationError error: KiteError
    ) -> Bool {
        response.status == .unauthorized
    }

    func isRequest(_ request: HTTPRequest, authenticatedWith credential: OAuthCredential) -> Bool {
        request.headerFields[.authorization] == "Bearer \(credential.accessToken)"
    }
}

/// Bearer tokens; counts refreshes, can hold them until released, and can fail them.
private final class TestAuthenticator: Authenticator {
    struct State {
        var refreshCount = 0
        var refreshedFrom: [String] = []
        var isHeld = false
        var held: [CheckedContinuation<Void, Never>] = []
        var failure: RefreshFailure?
    }

    let state = NIOLockedValueBox(State())

    /// Yields the refresh count each time a refresh starts.
    let refreshStarts: AsyncStream<Int>
    private let refreshStartsContinuation: AsyncStream<Int>.Continuation

    init(held: Bool = false, failing: Bool = false) {
        (self.refreshStarts, self.refreshStartsContinuation) = AsyncStream.makeStream()
        self.state.withLockedValue { state in
            state.isHeld = held
            state.failure = failing ? RefreshFailure() : nil
        }
    }

    var refreshCount: Int { self.state.withLockedValue { $0.refreshCount } }

    /// Lets held refreshes, and those to come, finish.
    func release() {
        let held = self.state.withLockedValue { state in
            state.isHeld = false
            defer { state.held = [] }
            return state.held
        }
        for continuation in held { continuation.resume() }
    }

    func apply(_ credential: OAuthCredential, to request: inout HTTPRequest) {
        request.headerFields[.authorization] = "Bearer \(credential.accessToken)"
    }

    func refresh(_ credential: OAuthCredential, for session: Session) async throws -> OAuthCredential {
        let count = self.state.withLockedValue { state in
            state.refreshCount += 1
            state.refreshedFrom.append(credential.accessToken)
            return state.refreshCount
        }
        self.refreshStartsContinuation.yield(count)
        await withCheckedContinuation { continuation in
            let held = self.state.withLockedValue { state in
                if state.isHeld { state.held.append(continuation) }
                return state.isHeld
            }
            if !held { continuation.resume() }
        }
        if let failure = self.state.withLockedValue({ $0.failure }) { throw failure }
        return .valid("refreshed-\(count)")
    }

    func didRequest(
        _ request: HTTPRequest,
        with response: HTTPResponse,
        failDueToAuthenticationError error: KiteError
    ) -> Bool {
        response.status == .unauthorized
    }

    func isRequest(_ request: HTTPRequest, authenticatedWith credential: OAuthCredential) -> Bool {
        request.headerFields[.authorization] == "Bearer \(credential.accessToken)"
    }
}

/// A clock the test moves.
private final class TestClock: Sendable {
    private let instant = NIOLockedValueBox(ContinuousClock.now)

    var now: ContinuousClock.Instant { self.instant.withLockedValue { $0 } }

    func advance(by duration: Duration) {
        self.instant.withLockedValue { $0 = $0.advanced(by: duration) }
    }
}

@Suite(.timeLimit(.minutes(1))) struct AuthenticationInterceptorTests {
    private typealias TestInterceptor = AuthenticationInterceptor<TestAuthenticator>

    private let head = HTTPRequest(method: .get, scheme: "http", authority: "127.0.0.1:1", path: "/x")

    private func unauthorized() -> KiteError {
        KiteError(
            code: .responseValidationFailed,
            message: "response status 401 is not in 200..<300",
            response: HTTPResponse(status: .unauthorized)
        )
    }

    /// A request that was sent (it is not: nothing is attached) with `token`.
    private func request(sentWith token: String?) -> DataRequest {
        let request = Session.suite.request("http://127.0.0.1:1/x")
        var sent = self.head
        if let token { sent.headerFields[.authorization] = "Bearer \(token)" }
        request.machine.withLockedValue { $0.record.sentRequest = sent }
        return request
    }

    private func isRetry(_ result: RetryResult) -> Bool {
        if case .retry = result { return true }
        return false
    }

    private func isDoNotRetry(_ result: RetryResult) -> Bool {
        if case .doNotRetry = result { return true }
        return false
    }

    /// Returns once `count` calls wait for the running refresh.
    private func waitUntil(_ interceptor: TestInterceptor, hasWaiters count: Int) async {
        while interceptor.waiterCount < count { await Task.yield() }
    }

    @Test func adaptAppliesBearerToken() async throws {
        let interceptor = TestInterceptor(authenticator: TestAuthenticator(), credential: .valid("a"))
        let adapted = try await interceptor.adapt(self.head, for: .default)
        #expect(adapted.headerFields[.authorization] == "Bearer a")
        #expect(adapted.path == "/x")
        #expect(interceptor.authenticator.refreshCount == 0)
    }

    @Test func documentedAuthenticatorUsesBearerTokens() async throws {
        let authenticator = DocumentedOAuthAuthenticator()
        let interceptor = AuthenticationInterceptor(authenticator: authenticator, credential: .valid("doc"))
        let adapted = try await interceptor.adapt(self.head, for: .default)
        #expect(adapted.headerFields[.authorization] == "Bearer doc")
        #expect(authenticator.isRequest(adapted, authenticatedWith: .valid("doc")))
        #expect(!authenticator.isRequest(adapted, authenticatedWith: .valid("other")))
        let unauthorized = self.unauthorized()
        #expect(
            authenticator.didRequest(
                adapted,
                with: HTTPResponse(status: .unauthorized),
                failDueToAuthenticationError: unauthorized
            )
        )
        #expect(
            !authenticator.didRequest(
                adapted,
                with: HTTPResponse(status: .forbidden),
                failDueToAuthenticationError: unauthorized
            )
        )
        #expect(OAuthCredential.expiring("e").requiresRefresh)
        #expect(!OAuthCredential.valid("v").requiresRefresh)
    }

    @Test func adaptWithoutCredentialThrowsMissingCredential() async {
        let interceptor = TestInterceptor(authenticator: TestAuthenticator())
        await #expect(throws: AuthenticationError.missingCredential) {
            try await interceptor.adapt(self.head, for: .default)
        }
        #expect(AuthenticationError.missingCredential.description.contains("no credential"))
    }

    @Test func retryWithoutCredentialFailsWithMissingCredential() async {
        let interceptor = TestInterceptor(authenticator: TestAuthenticator())
        let result = await interceptor.retry(self.request(sentWith: "a"), for: .default, dueTo: self.unauthorized())
        #expect(result.error as? AuthenticationError == .missingCredential)
    }

    @Test func concurrentUnauthorizedRetriesShareOneRefresh() async throws {
        let authenticator = TestAuthenticator(held: true)
        let interceptor = TestInterceptor(authenticator: authenticator, credential: .valid("old"))
        var starts = authenticator.refreshStarts.makeAsyncIterator()
        let results = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<50 {
                group.addTask {
                    let result = await interceptor.retry(
                        self.request(sentWith: "old"),
                        for: .default,
                        dueTo: self.unauthorized()
                    )
                    return self.isRetry(result)
                }
            }
            #expect(await starts.next() == 1)
            await self.waitUntil(interceptor, hasWaiters: 50)
            #expect(interceptor.credential?.accessToken == "old")
            authenticator.release()
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results == Array(repeating: true, count: 50))
        #expect(authenticator.refreshCount == 1)
        #expect(authenticator.state.withLockedValue { $0.refreshedFrom } == ["old"])
        #expect(interceptor.credential?.accessToken == "refreshed-1")
        #expect(interceptor.waiterCount == 0)
    }

    @Test func requestSentWithReplacedTokenIsRetriedWithoutRefresh() async {
        let authenticator = TestAuthenticator()
        let interceptor = TestInterceptor(authenticator: authenticator, credential: .valid("new"))
        let result = await interceptor.retry(self.request(sentWith: "old"), for: .default, dueTo: self.unauthorized())
        #expect(self.isRetry(result))
        #expect(authenticator.refreshCount == 0)
        #expect(interceptor.credential?.accessToken == "new")
    }

    @Test func failedRefreshFailsEveryWaiter() async throws {
        let authenticator = TestAuthenticator(held: true, failing: true)
        let interceptor = TestInterceptor(authenticator: authenticator, credential: .valid("old"))
        let errors = await withTaskGroup(of: RefreshFailure?.self) { group in
            for _ in 0..<50 {
                group.addTask {
                    let result = await interceptor.retry(
                        self.request(sentWith: "old"),
                        for: .default,
                        dueTo: self.unauthorized()
                    )
                    return result.error as? RefreshFailure
                }
            }
            await self.waitUntil(interceptor, hasWaiters: 50)
            authenticator.release()
            return await group.reduce(into: [RefreshFailure?]()) { $0.append($1) }
        }
        #expect(errors == Array(repeating: RefreshFailure(), count: 50))
        #expect(authenticator.refreshCount == 1)
        #expect(interceptor.credential?.accessToken == "old")
    }

    @Test func concurrentAdaptsWithExpiringCredentialShareOneRefresh() async throws {
        let authenticator = TestAuthenticator(held: true)
        let interceptor = TestInterceptor(authenticator: authenticator, credential: .expiring("old"))
        let tokens = try await withThrowingTaskGroup(of: String?.self) { group in
            for _ in 0..<50 {
                group.addTask {
                    try await interceptor.adapt(self.head, for: .default).headerFields[.authorization]
                }
            }
            await self.waitUntil(interceptor, hasWaiters: 50)
            #expect(authenticator.refreshCount == 1)
            authenticator.release()
            return try await group.reduce(into: [String?]()) { $0.append($1) }
        }
        #expect(tokens == Array(repeating: "Bearer refreshed-1", count: 50))
        #expect(authenticator.refreshCount == 1)
        #expect(authenticator.state.withLockedValue { $0.refreshedFrom } == ["old"])
    }

    @Test func failedRefreshFailsAdapt() async {
        let authenticator = TestAuthenticator(failing: true)
        let interceptor = TestInterceptor(authenticator: authenticator, credential: .expiring("old"))
        await #expect(throws: RefreshFailure()) {
            try await interceptor.adapt(self.head, for: .default)
        }
        #expect(authenticator.refreshCount == 1)
    }

    @Test func refreshWindowRefusesExcessiveRefreshesUntilItPasses() async throws {
        let clock = TestClock()
        let authenticator = TestAuthenticator()
        let interceptor = TestInterceptor(
            authenticator: authenticator,
            credential: .valid("t0"),
            refreshWindow: .init(interval: .seconds(30), maximumAttempts: 5),
            now: { clock.now }
        )
        for attempt in 1...5 {
            let token = interceptor.credential?.accessToken
            let result = await interceptor.retry(
                self.request(sentWith: token),
                for: .default,
                dueTo: self.unauthorized()
            )
            #expect(self.isRetry(result), "refresh \(attempt)")
            clock.advance(by: .seconds(5))
        }
        #expect(authenticator.refreshCount == 5)

        // Five refreshes started within the last 30 seconds (at 0, 5, …, 20 s; now is 25 s).
        let token = interceptor.credential?.accessToken
        #expect(token == "refreshed-5")
        let refused = await interceptor.retry(self.request(sentWith: token), for: .default, dueTo: self.unauthorized())
        #expect(refused.error as? AuthenticationError == .excessiveRefresh)
        interceptor.credential = .expiring("expiring")
        await #expect(throws: AuthenticationError.excessiveRefresh) {
            try await interceptor.adapt(self.head, for: .default)
        }
        #expect(authenticator.refreshCount == 5)

        // At 31 s the refresh at 0 s has left the window; the one at 31 s fills it again.
        clock.advance(by: .seconds(6))
        let adapted = try await interceptor.adapt(self.head, for: .default)
        #expect(adapted.headerFields[.authorization] == "Bearer refreshed-6")
        #expect(authenticator.refreshCount == 6)
        interceptor.credential = .expiring("expiring")
        await #expect(throws: AuthenticationError.excessiveRefresh) {
            try await interceptor.adapt(self.head, for: .default)
        }
        #expect(authenticator.refreshCount == 6)
    }

    @Test(
        arguments: [
            (HTTPResponse.Status?.some(.forbidden), "a"),
            (.some(.internalServerError), "a"),
            (nil, "a"),
            (.some(.unauthorized), nil),
        ] as [(HTTPResponse.Status?, String?)]
    )
    func otherFailuresAreNotRetried(status: HTTPResponse.Status?, sentToken: String?) async {
        let authenticator = TestAuthenticator()
        let interceptor = TestInterceptor(authenticator: authenticator, credential: .valid("a"))
        let error = KiteError(
            code: status == nil ? .connectionFailed : .responseValidationFailed,
            message: "failed",
            response: status.map { HTTPResponse(status: $0) }
        )
        let request = Session.suite.request("http://127.0.0.1:1/x")
        if let sentToken {
            var sent = self.head
            sent.headerFields[.authorization] = "Bearer \(sentToken)"
            request.machine.withLockedValue { $0.record.sentRequest = sent }
        }
        let result = await interceptor.retry(request, for: .default, dueTo: error)
        #expect(self.isDoNotRetry(result))
        #expect(authenticator.refreshCount == 0)
    }

    @Test func settingCredentialDuringRefreshResumesWaitersWithIt() async throws {
        let authenticator = TestAuthenticator(held: true)
        let interceptor = TestInterceptor(authenticator: authenticator, credential: .expiring("old"))
        let tokens = try await withThrowingTaskGroup(of: String?.self) { group in
            for _ in 0..<3 {
                group.addTask {
                    try await interceptor.adapt(self.head, for: .default).headerFields[.authorization]
                }
            }
            await self.waitUntil(interceptor, hasWaiters: 3)
            interceptor.credential = .valid("set")
            return try await group.reduce(into: [String?]()) { $0.append($1) }
        }
        #expect(tokens == Array(repeating: "Bearer set", count: 3))

        // The refresh from "old" is still held; its result must not replace a later credential.
        interceptor.credential = .expiring("again")
        let adapting = Task { try await interceptor.adapt(self.head, for: .default) }
        await self.waitUntil(interceptor, hasWaiters: 1)
        authenticator.release()
        #expect(try await adapting.value.headerFields[.authorization] == "Bearer refreshed-2")
        #expect(authenticator.state.withLockedValue { $0.refreshedFrom } == ["old", "again"])
        #expect(interceptor.credential?.accessToken == "refreshed-2")
    }

    @Test func cancelledWaiterStopsWaitingWhileRefreshGoesOn() async throws {
        let authenticator = TestAuthenticator(held: true)
        let interceptor = TestInterceptor(authenticator: authenticator, credential: .expiring("old"))
        let cancelled = Task { try await interceptor.adapt(self.head, for: .default) }
        let waiting = Task { try await interceptor.adapt(self.head, for: .default) }
        await self.waitUntil(interceptor, hasWaiters: 2)
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        #expect(interceptor.waiterCount == 1)
        authenticator.release()
        #expect(try await waiting.value.headerFields[.authorization] == "Bearer refreshed-1")
        #expect(authenticator.refreshCount == 1)
    }
}
