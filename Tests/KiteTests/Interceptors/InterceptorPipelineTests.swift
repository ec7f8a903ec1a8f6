import Foundation
import Kite
import NIOConcurrencyHelpers
import Testing

@testable import Kite

/// Interceptors, retries and redirect handlers through the real pipeline, against the in-process server.
@Suite struct InterceptorPipelineTests {
    private func url(_ path: String) async throws -> String {
        try await SharedTestServer.shared.baseURL() + path
    }

    /// A key no other test uses, for `/flaky/{key}`.
    private func key() -> String { UUID().uuidString }

    /// A policy that retries quickly and without a budget, so counts are exact.
    private func quickPolicy(limit: Int = 2) -> RetryPolicy {
        RetryPolicy(retryLimit: limit, exponentialBackoffScale: 0.01, jitter: .none, retryBudget: nil)
    }

    /// How many requests `/flaky/{key}` saw before this one (which counts too).
    private func attemptNumber(_ key: String) async throws -> Int {
        let echo = try await Session.suite.request(try await self.url("/flaky/\(key)?failures=0"))
            .serializingDecodable([String: JSONValue].self).value
        guard case .int(let attempt)? = echo["attempt"] else {
            Issue.record("no attempt in \(echo)")
            return -1
        }
        return Int(attempt) - 1
    }

    @Test func adaptersRunSessionFirstThenRequestOnEveryAttempt() async throws {
        let seen = NIOLockedValueBox<[Int]>([])
        let sessionAdapter = Adapter { request, _ in
            var request = request
            request.headerFields[HTTPField.Name("X-Order")!] = "session"
            return request
        }
        let requestAdapter = Interceptor(
            adapters: [
                Adapter { request, _ in
                    var request = request
                    let previous = request.headerFields[HTTPField.Name("X-Order")!] ?? "none"
                    request.headerFields[HTTPField.Name("X-Order")!] = previous + ",request"
                    return request
                }
            ],
            retriers: [
                Retrier { request, _, _ in
                    seen.withLockedValue { $0.append(request.retryCount) }
                    return request.retryCount < 1 ? .retry : .doNotRetry
                }
            ]
        )
        let session = Session(configuration: .default, interceptor: sessionAdapter)
        defer { Task { try await session.shutdown() } }
        let request = session.request(try await self.url("/status/500"), interceptor: requestAdapter).validate()
        let response = await request.serializingData().response
        #expect(response.error?.code == .responseValidationFailed)
        #expect(response.response?.status.code == 500)
        #expect(request.retryCount == 1)
        #expect(seen.withLockedValue { $0 } == [0, 1], "the retrier is asked after each failed attempt")
        #expect(request.request?.headerFields[HTTPField.Name("X-Order")!] == "session,request")

        let echo = try await session.request(try await self.url("/headers"), interceptor: requestAdapter)
            .serializingDecodable(HeadersEcho.self).value
        #expect(echo.headers.header("X-Order") == "session,request")
    }

    struct AdapterFailure: Error, Equatable {}

    @Test func aThrowingAdapterEndsWithRequestAdaptationFailedUnlessARetrierRetries() async throws {
        let failures = NIOLockedValueBox(1)
        let adapter = Adapter { request, _ in
            let fail = failures.withLockedValue { count in
                defer { count -= 1 }
                return count > 0
            }
            if fail { throw AdapterFailure() }
            return request
        }
        let failing = await Session.suite.request(
            try await self.url("/get"),
            interceptor: Adapter { _, _ in
                throw AdapterFailure()
            }
        ).serializingData().response
        #expect(failing.error?.code == .requestAdaptationFailed)
        #expect(failing.error?.underlyingError is AdapterFailure)
        #expect(failing.response == nil, "nothing was sent")

        let retrier = Retrier { _, _, error in
            error.code == .requestAdaptationFailed ? .retry : .doNotRetry
        }
        let request = Session.suite.request(
            try await self.url("/get"),
            interceptor: Interceptor(adapters: [adapter], retriers: [retrier])
        )
        let response = await request.serializingData().response
        #expect(response.response?.status.code == 200, "retried after the adapter failed once")
        #expect(request.retryCount == 1)
    }

    struct RetrierFailure: Error {}

    @Test func doNotRetryWithErrorEndsWithRequestRetryFailedCarryingBothErrors() async throws {
        let request = Session.suite.request(
            try await self.url("/status/503"),
            interceptor: Retrier { _, _, _ in .doNotRetryWithError(RetrierFailure()) }
        ).validate()
        let error = try #require(await request.serializingData().response.error)
        #expect(error.code == .requestRetryFailed)
        #expect(error.underlyingError is RetrierFailure)
        #expect(error.retriedError?.code == .responseValidationFailed)
        #expect(error.retriedError?.responseStatusCode == 503)
        #expect(error.responseStatusCode == 503)
    }

    @Test func retryPolicyRetriesAFlakyGETUntilItSucceeds() async throws {
        let key = self.key()
        let session = Session(configuration: .default, interceptor: self.quickPolicy())
        defer { Task { try await session.shutdown() } }
        let request = session.request(try await self.url("/flaky/\(key)?failures=2")).validate()
        let echo = try await request.serializingDecodable([String: JSONValue].self).value
        #expect(echo["attempt"] == .int(3))
        #expect(request.retryCount == 2)
    }

    @Test func retryPolicyStopsAtItsLimitWithTheLastError() async throws {
        let key = self.key()
        let session = Session(configuration: .default, interceptor: self.quickPolicy(limit: 2))
        defer { Task { try await session.shutdown() } }
        let request = session.request(try await self.url("/flaky/\(key)?failures=10&status=502")).validate()
        let response = await request.serializingData().response
        #expect(response.error?.code == .responseValidationFailed)
        #expect(response.response?.status.code == 502)
        #expect(request.retryCount == 2)
        #expect(try await self.attemptNumber(key) == 3, "one attempt and two retries reached the server")
    }

    @Test func aPOSTIsNotRetriedByDefault() async throws {
        let key = self.key()
        let session = Session(configuration: .default, interceptor: self.quickPolicy())
        defer { Task { try await session.shutdown() } }
        let request = session.request(try await self.url("/flaky/\(key)?failures=1"), method: .post).validate()
        let response = await request.serializingData().response
        #expect(response.response?.status.code == 503)
        #expect(request.retryCount == 0)
        #expect(try await self.attemptNumber(key) == 1)
    }

    @Test func aOneShotStreamUploadIsNeverRetried() async throws {
        let key = self.key()
        let asked = NIOLockedValueBox(0)
        let always = Retrier { _, _, _ in
            asked.withLockedValue { $0 += 1 }
            return .retry
        }
        let chunks = AsyncStream<Data> { continuation in
            continuation.yield(Data("one-shot".utf8))
            continuation.finish()
        }
        let request = Session.suite.upload(
            chunks,
            length: 8,
            to: try await self.url("/flaky/\(key)?failures=1"),
            method: .put,
            interceptor: always
        ).validate()
        let response = await request.serializingData().response
        #expect(response.response?.status.code == 503)
        #expect(request.retryCount == 0)
        #expect(asked.withLockedValue { $0 } == 0, "the retrier is not even asked")
        #expect(try await self.attemptNumber(key) == 1)
    }

    @Test func aDataUploadIsRetriedWithItsBodyAgain() async throws {
        let key = self.key()
        let request = Session.suite.upload(
            Data("again".utf8),
            to: try await self.url("/flaky/\(key)?failures=1"),
            method: .put,
            interceptor: self.quickPolicy()
        ).validate()
        let response = await request.serializingData().response
        #expect(response.response?.status.code == 200)
        #expect(request.retryCount == 1)
        #expect(response.metrics?.bytesSent == 5)
    }

    @Test(arguments: ["", "&form=date"])
    func retryAfterIsHonoured(form: String) async throws {
        // The date form has whole seconds, so 2 s ahead waits between 1 and 2 s.
        let seconds = form.isEmpty ? 1 : 2
        let policy = RetryPolicy(retryLimit: 1, exponentialBackoffScale: 0.01, jitter: .none, retryBudget: nil)
        let request = Session.suite.request(
            try await self.url("/retry-after/\(seconds)?status=503\(form)"),
            interceptor: policy
        ).validate()
        let started = ContinuousClock.now
        let response = await request.serializingData().response
        let elapsed = started.duration(to: .now)
        #expect(response.response?.status.code == 503)
        #expect(request.retryCount == 1)
        #expect(elapsed >= .milliseconds(900), "waited \(elapsed)")
        // Generous: the whole suite runs in parallel on two cores.
        #expect(elapsed < .seconds(seconds + 20), "waited \(elapsed)")
    }

    @Test func aRetryAfterLongerThanTheMaximumDelayIsNotWaitedFor() async throws {
        let policy = RetryPolicy(maximumDelay: .seconds(5), retryBudget: nil)
        let request = Session.suite.request(try await self.url("/retry-after/3600"), interceptor: policy).validate()
        let response = await request.serializingData().response
        #expect(response.response?.status.code == 503)
        #expect(request.retryCount == 0)
    }

    @Test func theRetryBudgetLetsOneRetryPerTenRequestsWithoutAFloor() async throws {
        let policy = RetryPolicy(
            exponentialBackoffScale: 0.01,
            jitter: .none,
            retryBudget: RetryBudget(ratio: 0.1, minimumRetriesPerSecond: 0)
        )
        let session = Session(configuration: .default, interceptor: policy)
        defer { Task { try await session.shutdown() } }
        var retries: [Int] = []
        for _ in 0..<20 {
            let request = session.request(try await self.url("/status/503")).validate()
            _ = await request.serializingData().response
            retries.append(request.retryCount)
        }
        // 0.1 token per request: the 10th and 20th requests find one whole token.
        #expect(retries.reduce(0, +) == 2, "retries per request: \(retries)")
        #expect(retries[9] == 1 && retries[19] == 1, "retries per request: \(retries)")
    }

    @Test func theTotalTimeoutSpansEveryAttemptAndTheWaitsBetween() async throws {
        let key = self.key()
        // Retries forever, 300 ms apart: only a total timeout over all attempts can end it.
        let forever = Retrier { _, _, _ in .retryWithDelay(.milliseconds(300)) }
        let request = Session.suite.request(
            try await self.url("/flaky/\(key)?failures=1000000"),
            interceptor: forever
        ) { $0.timeout = .seconds(2) }.validate()
        let started = ContinuousClock.now
        let response = await request.serializingData().response
        let elapsed = started.duration(to: .now)
        #expect(response.error?.code == .timedOut)
        #expect(response.error?.timeout == .total)
        #expect(elapsed >= .seconds(2), "took \(elapsed)")
        #expect(elapsed < .seconds(20), "took \(elapsed)")
    }

    @Test func cancellingWhileARetryWaitsEndsWithCancelled() async throws {
        let asked = AsyncStream<Void>.makeStream()
        let retrier = Retrier { _, _, _ in
            asked.continuation.yield()
            return .retryWithDelay(.seconds(60))
        }
        let request = Session.suite.request(try await self.url("/status/500"), interceptor: retrier).validate()
        let task = Task { await request.serializingData().response }
        var iterator = asked.stream.makeAsyncIterator()
        await iterator.next()
        request.cancel()
        let response = await task.value
        #expect(response.error?.code == .cancelled)
        #expect(request.retryCount == 0)
    }
}

/// Redirect handlers and the redirect rules, through the pipeline.
@Suite struct RedirectHandlerPipelineTests {
    private func url(_ path: String) async throws -> String {
        try await SharedTestServer.shared.baseURL() + path
    }

    @Test func followIsTheDefaultAndDoNotFollowMakesTheRedirectTheResult() async throws {
        let followed = await Session.suite.request(try await self.url("/redirect/2")).serializingData().response
        #expect(followed.response?.status.code == 200)
        #expect(followed.metrics?.redirectCount == 2)

        let session = Session(configuration: .default, redirectHandler: Redirector.doNotFollow)
        defer { Task { try await session.shutdown() } }
        let stopped = await session.request(try await self.url("/redirect/2")).serializingData().response
        #expect(stopped.response?.status.code == 302)
        #expect(stopped.response?.headerFields[.location] == "/relative-redirect/1")
        #expect(stopped.metrics?.redirectCount == 0)

        let overridden = await session.request(try await self.url("/redirect/2")).redirect(using: .follow)
            .serializingData().response
        #expect(overridden.response?.status.code == 200, "the request's handler replaces the session's")
    }

    @Test func modifyChangesTheNextRequestAndCanStop() async throws {
        let target = try await self.url("/headers")
        let modify = Redirector.modify { _, request, response in
            var request = request
            request.headerFields[HTTPField.Name("X-Redirected-From")!] = String(response.status.code)
            return request
        }
        let encoded = target.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? target
        let echo = try await Session.suite.request(try await self.url("/redirect-to?url=\(encoded)&status_code=307"))
            .redirect(using: modify)
            .serializingDecodable(HeadersEcho.self).value
        #expect(echo.headers.header("X-Redirected-From") == "307")

        let stop = Redirector.modify { _, _, _ in nil }
        let stopped = await Session.suite.request(try await self.url("/redirect/1")).redirect(using: stop)
            .serializingData().response
        #expect(stopped.response?.status.code == 302)
    }

    @Test func redirectRulesStillApplyUnderAHandler() async throws {
        let counting = NIOLockedValueBox(0)
        let handler = Redirector.modify { _, request, _ in
            counting.withLockedValue { $0 += 1 }
            return request
        }
        var configuration = Session.Configuration()
        configuration.maximumRedirects = 3
        let session = Session(configuration: configuration, redirectHandler: handler)
        defer { Task { try await session.shutdown() } }
        let response = await session.request(try await self.url("/redirect/5")).serializingData().response
        #expect(response.error?.code == .tooManyRedirects)
        #expect(counting.withLockedValue { $0 } == 4, "asked for each redirect until the limit")
    }
}

/// httpbin's `/headers` answer.
struct HeadersEcho: Decodable, Sendable {
    let headers: [String: String]
}
