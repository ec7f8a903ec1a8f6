import Foundation
import HTTPTypes
import NIOConcurrencyHelpers
import Testing

@testable import Kite

/// A ``RetryResult`` that can be compared.
private enum Decision: Equatable {
    case retry
    case retryWithDelay(Duration)
    case doNotRetry
    case doNotRetryWithError

    init(_ result: RetryResult) {
        switch result {
        case .retry: self = .retry
        case .retryWithDelay(let delay): self = .retryWithDelay(delay)
        case .doNotRetry: self = .doNotRetry
        case .doNotRetryWithError: self = .doNotRetryWithError
        }
    }
}

/// `Sun, 06 Nov 1994 08:49:37 GMT`, RFC 9110's example date.
private let exampleDate = Date(timeIntervalSince1970: 784_111_777)

/// A clock for ``RetryBudget`` that moves only when told.
private final class ManualClock: Sendable {
    private let instant = NIOLockedValueBox(ContinuousClock.now)

    var now: ContinuousClock.Instant { self.instant.withLockedValue { $0 } }

    func advance(by duration: Duration) {
        self.instant.withLockedValue { $0 += duration }
    }
}

@Suite struct RetryPolicyTests {
    /// A request that is never sent, after `retryCount` retries.
    private func request(_ method: HTTPRequest.Method = .get, retryCount: Int = 0) -> DataRequest {
        let request = Session.suite.request("http://127.0.0.1:1/x", method: method)
        request.machine.withLockedValue { $0 = BaseRequest.Machine(runningAfterRetries: retryCount) }
        return request
    }

    private func error(status: Int, retryAfter: String? = nil) -> KiteError {
        var fields = HTTPFields()
        if let retryAfter { fields[.retryAfter] = retryAfter }
        return KiteError(
            code: .responseValidationFailed,
            message: "response status \(status) is not in 200..<300",
            response: HTTPResponse(status: .init(code: status), headerFields: fields)
        )
    }

    private func error(_ code: KiteError.Code, timeout: KiteError.TimeoutKind? = nil) -> KiteError {
        KiteError(code: code, message: "failed", timeout: timeout)
    }

    /// A policy without jitter or budget, whose clock reads RFC 9110's example date.
    private func policy(
        retryLimit: Int = RetryPolicy.defaultRetryLimit,
        jitter: RetryPolicy.Jitter = .none,
        maximumDelay: Duration = RetryPolicy.defaultMaximumDelay,
        retryBudget: RetryBudget? = nil,
        now: Date = exampleDate,
        random: @escaping @Sendable (ClosedRange<Double>) -> Double = { Double.random(in: $0) }
    ) -> RetryPolicy {
        RetryPolicy(
            retryLimit: retryLimit,
            jitter: jitter,
            maximumDelay: maximumDelay,
            retryBudget: retryBudget,
            now: { now },
            random: random
        )
    }

    private func decide(
        _ policy: RetryPolicy,
        _ request: BaseRequest,
        _ error: KiteError
    ) async -> Decision {
        Decision(await policy.retry(request, for: Session.default, dueTo: error))
    }

    @Test func defaultsMatchAlamofire() {
        #expect(RetryPolicy.defaultRetryLimit == 2)
        #expect(RetryPolicy.defaultExponentialBackoffBase == 2)
        #expect(RetryPolicy.defaultExponentialBackoffScale == 0.5)
        #expect(RetryPolicy.defaultRetryableHTTPMethods == [.delete, .get, .head, .options, .put, .trace])
        #expect(RetryPolicy.defaultRetryableHTTPStatusCodes == [408, 500, 502, 503, 504])
        #expect(RetryPolicy.defaultRetryableErrorCodes == [.connectionFailed, .connectionLost, .timedOut])
        let policy = RetryPolicy()
        #expect(policy.retryLimit == 2)
        #expect(policy.exponentialBackoffBase == 2)
        #expect(policy.exponentialBackoffScale == 0.5)
        #expect(policy.jitter == .full)
        #expect(policy.maximumDelay == .seconds(60))
        #expect(policy.retryBudget?.ratio == 0.1)
        #expect(policy.retryBudget?.minimumRetriesPerSecond == 10)
    }

    @Test(arguments: [408, 500, 502, 503, 504])
    func defaultStatusCodesAreRetried(status: Int) async {
        let decision = await self.decide(self.policy(), self.request(), self.error(status: status))
        #expect(decision == .retryWithDelay(.milliseconds(500)))
    }

    @Test(arguments: [400, 401, 403, 404, 429, 501, 505])
    func otherStatusCodesAreNotRetried(status: Int) async {
        let decision = await self.decide(self.policy(), self.request(), self.error(status: status))
        #expect(decision == .doNotRetry)
    }

    @Test(arguments: [
        (HTTPRequest.Method.get, true), (.head, true), (.put, true), (.delete, true), (.options, true),
        (.trace, true), (.post, false), (.patch, false),
    ])
    func onlyIdempotentMethodsAreRetried(method: HTTPRequest.Method, retried: Bool) async {
        let decision = await self.decide(self.policy(), self.request(method), self.error(status: 503))
        #expect(decision == (retried ? .retryWithDelay(.milliseconds(500)) : .doNotRetry))
    }

    @Test func theSentMethodWinsOverTheDraftsMethod() async {
        let request = self.request(.get)
        request.machine.withLockedValue {
            $0.record.sentRequest = HTTPRequest(method: .post, scheme: "http", authority: "127.0.0.1:1", path: "/x")
        }
        #expect(await self.decide(self.policy(), request, self.error(status: 503)) == .doNotRetry)
    }

    @Test func theRetryLimitEndsRetries() async {
        let policy = self.policy(retryLimit: 2)
        #expect(
            await self.decide(policy, self.request(retryCount: 1), self.error(.connectionLost))
                == .retryWithDelay(.seconds(1))
        )
        #expect(await self.decide(policy, self.request(retryCount: 2), self.error(.connectionLost)) == .doNotRetry)
        #expect(await self.decide(policy, self.request(retryCount: 5), self.error(.connectionLost)) == .doNotRetry)
        let never = self.policy(retryLimit: 0)
        #expect(await self.decide(never, self.request(), self.error(.connectionLost)) == .doNotRetry)
    }

    @Test(arguments: [
        (0, Duration.milliseconds(500)), (1, .seconds(1)), (2, .seconds(2)), (3, .seconds(4)), (4, .seconds(8)),
    ])
    func backoffDoublesFromHalfASecond(retryCount: Int, delay: Duration) async {
        let policy = self.policy(retryLimit: 10)
        let decision = await self.decide(policy, self.request(retryCount: retryCount), self.error(status: 500))
        #expect(decision == .retryWithDelay(delay))
    }

    @Test(arguments: [3, 4, 50, 5000])
    func backoffIsCappedAtTheMaximumDelay(retryCount: Int) async {
        let policy = self.policy(retryLimit: .max, maximumDelay: .seconds(3))
        let decision = await self.decide(policy, self.request(retryCount: retryCount), self.error(status: 500))
        #expect(decision == .retryWithDelay(.seconds(3)))
    }

    @Test(arguments: [0, 1, 5000])
    func aZeroScaleRetriesAtOnce(retryCount: Int) async {
        let policy = RetryPolicy(retryLimit: .max, exponentialBackoffScale: 0, retryBudget: nil)
        let decision = await self.decide(policy, self.request(retryCount: retryCount), self.error(status: 500))
        #expect(decision == .retry)
    }

    @Test func fullJitterDrawsFromZeroToTheBackoff() async {
        let ranges = NIOLockedValueBox([ClosedRange<Double>]())
        let lowest = self.policy(retryLimit: 10, jitter: .full) { range in
            ranges.withLockedValue { $0.append(range) }
            return range.lowerBound
        }
        #expect(await self.decide(lowest, self.request(retryCount: 1), self.error(status: 503)) == .retry)
        let highest = self.policy(retryLimit: 10, jitter: .full) { range in
            ranges.withLockedValue { $0.append(range) }
            return range.upperBound
        }
        #expect(
            await self.decide(highest, self.request(retryCount: 2), self.error(status: 503))
                == .retryWithDelay(.seconds(2))
        )
        #expect(ranges.withLockedValue { $0 } == [0...1, 0...2])
    }

    @Test func fullJitterIsDrawnFromTheCappedBackoff() async {
        let ranges = NIOLockedValueBox([ClosedRange<Double>]())
        let policy = self.policy(retryLimit: 100, jitter: .full, maximumDelay: .seconds(3)) { range in
            ranges.withLockedValue { $0.append(range) }
            return range.upperBound
        }
        #expect(
            await self.decide(policy, self.request(retryCount: 40), self.error(status: 503))
                == .retryWithDelay(.seconds(3))
        )
        #expect(ranges.withLockedValue { $0 } == [0...3])
    }

    @Test func fullJitterStaysWithinTheBackoff() async {
        let policy = self.policy(retryLimit: 10, jitter: .full)
        var distinct = Set<Duration>()
        for _ in 0..<500 {
            let result = await policy.retry(
                self.request(retryCount: 2),
                for: Session.default,
                dueTo: self.error(status: 503)
            )
            let delay = result.delay ?? .zero
            #expect(result.retryRequired)
            #expect(delay >= .zero && delay <= .seconds(2))
            distinct.insert(delay)
        }
        #expect(distinct.count > 400)
    }

    @Test func retryAfterSecondsReplaceTheBackoffWithoutJitter() async {
        let policy = self.policy(jitter: .full) { $0.lowerBound }
        #expect(
            await self.decide(policy, self.request(), self.error(status: 503, retryAfter: "3"))
                == .retryWithDelay(.seconds(3))
        )
        #expect(await self.decide(policy, self.request(), self.error(status: 503, retryAfter: "0")) == .retry)
        #expect(
            await self.decide(policy, self.request(), self.error(status: 503, retryAfter: " 60 "))
                == .retryWithDelay(.seconds(60))
        )
    }

    @Test(arguments: [
        "Sun, 06 Nov 1994 08:49:42 GMT",
        "Sunday, 06-Nov-94 08:49:42 GMT",
        "Sun Nov  6 08:49:42 1994",
    ])
    func retryAfterDatesAreWaitedFor(value: String) async {
        let decision = await self.decide(self.policy(), self.request(), self.error(status: 503, retryAfter: value))
        #expect(decision == .retryWithDelay(.seconds(5)))
    }

    @Test(arguments: [
        "Sun, 06 Nov 1994 08:49:37 GMT", "Sat, 05 Nov 1994 08:49:42 GMT", "Thu, 01 Jan 1970 00:00:00 GMT",
    ])
    func retryAfterDatesInThePastRetryAtOnce(value: String) async {
        let decision = await self.decide(self.policy(), self.request(), self.error(status: 503, retryAfter: value))
        #expect(decision == .retry)
    }

    @Test(arguments: [
        "", "soon", "-5", "1.5", "+5", "3 s", "Sun, 32 Nov 1994 08:49:42 GMT", "Sun, 06 Nov 1994 24:00:00 GMT",
        "Sun, 06 Nov 1994 08:49:42 UTC", "Sun, 06 Foo 1994 08:49:42 GMT", "Sun, 29 Feb 1994 08:49:42 GMT",
        "06 Nov 1994 08:49:42 GMT",
    ])
    func unreadableRetryAfterFallsBackToTheBackoff(value: String) async {
        let decision = await self.decide(self.policy(), self.request(), self.error(status: 503, retryAfter: value))
        #expect(decision == .retryWithDelay(.milliseconds(500)))
    }

    @Test(arguments: ["61", "3600", "99999999999999999999999999", "Sun, 06 Nov 1994 08:50:38 GMT"])
    func retryAfterLongerThanTheMaximumDelayIsNotWaitedFor(value: String) async {
        let decision = await self.decide(self.policy(), self.request(), self.error(status: 503, retryAfter: value))
        #expect(decision == .doNotRetry)
    }

    @Test func retryAfterDoesNotMakeAStatusRetryable() async {
        let decision = await self.decide(self.policy(), self.request(), self.error(status: 429, retryAfter: "1"))
        #expect(decision == .doNotRetry)
    }

    @Test func rfc850YearsMoreThanFiftyYearsAheadAreInThePastCentury() throws {
        let now = Date(timeIntervalSince1970: 1_767_225_600)  // Thu, 01 Jan 2026 00:00:00 GMT
        let past = try #require(RetryAfter.date(from: "Saturday, 01-Jan-77 00:00:00 GMT", now: now))
        #expect(past == Date(timeIntervalSince1970: 220_924_800))  // 1977
        let future = try #require(RetryAfter.date(from: "Wednesday, 01-Jan-76 00:00:00 GMT", now: now))
        #expect(future == Date(timeIntervalSince1970: 3_345_062_400))  // 2076
    }

    @Test(arguments: [KiteError.TimeoutKind.connect, .idleRead, .idleWrite])
    func connectAndIdleTimeoutsAreRetried(timeout: KiteError.TimeoutKind) async {
        let decision = await self.decide(self.policy(), self.request(), self.error(.timedOut, timeout: timeout))
        #expect(decision == .retryWithDelay(.milliseconds(500)))
    }

    @Test func theTotalTimeoutIsNeverRetried() async {
        let policy = self.policy()
        #expect(await self.decide(policy, self.request(), self.error(.timedOut, timeout: .total)) == .doNotRetry)
        #expect(await self.decide(policy, self.request(), self.error(.timedOut)) == .doNotRetry)
        let withResponse = KiteError(
            code: .timedOut,
            message: "timed out",
            response: HTTPResponse(status: .serviceUnavailable),
            timeout: .total
        )
        #expect(await self.decide(policy, self.request(), withResponse) == .doNotRetry)
    }

    @Test(arguments: [
        (KiteError.Code.connectionFailed, true), (.connectionLost, true), (.tlsFailed, false),
        (.invalidResponse, false), (.cancelled, false), (.responseSerializationFailed, false),
    ])
    func errorCodesAreRetriedByTheSet(code: KiteError.Code, retried: Bool) async {
        let decision = await self.decide(self.policy(), self.request(), self.error(code))
        #expect(decision == (retried ? .retryWithDelay(.milliseconds(500)) : .doNotRetry))
    }

    @Test func failedAdaptationIsNeverRetried() async {
        let policy = RetryPolicy(
            retryableErrorCodes: [.requestAdaptationFailed, .connectionLost],
            jitter: .none,
            retryBudget: nil
        )
        let error = KiteError(
            code: .requestAdaptationFailed,
            message: "the adapter failed",
            response: HTTPResponse(status: .serviceUnavailable)
        )
        #expect(await self.decide(policy, self.request(), error) == .doNotRetry)
    }

    @Test func tenDepositsPayForExactlyOneRetry() {
        let budget = RetryBudget(minimumRetriesPerSecond: 0)
        for _ in 0..<9 { budget.deposit() }
        #expect(!budget.tryWithdraw())
        budget.deposit()
        #expect(budget.tryWithdraw())
        #expect(!budget.tryWithdraw())
    }

    @Test func theBalanceHoldsAtMostAHundredTokens() {
        let budget = RetryBudget(ratio: 1, minimumRetriesPerSecond: 0)
        for _ in 0..<150 { budget.deposit() }
        #expect(budget.tokens.balance == 100)
        for _ in 0..<100 { #expect(budget.tryWithdraw()) }
        #expect(!budget.tryWithdraw())
    }

    @Test func theReserveRefillsAtTheMinimumRatePerSecond() {
        let clock = ManualClock()
        let budget = RetryBudget(ratio: 0.1, minimumRetriesPerSecond: 2, now: { clock.now })
        #expect(budget.tryWithdraw())
        #expect(budget.tryWithdraw())
        #expect(!budget.tryWithdraw())
        clock.advance(by: .milliseconds(499))
        #expect(!budget.tryWithdraw())
        clock.advance(by: .milliseconds(1))
        #expect(budget.tryWithdraw())
        #expect(!budget.tryWithdraw())
        clock.advance(by: .seconds(1))
        #expect(budget.tryWithdraw())
        #expect(budget.tryWithdraw())
        #expect(!budget.tryWithdraw())
        clock.advance(by: .seconds(3600))
        #expect(budget.tokens.reserve == 0)
        #expect(budget.tryWithdraw())
        #expect(budget.tokens.reserve == 1)
    }

    @Test func theBalanceIsSpentBeforeTheReserve() {
        let clock = ManualClock()
        let budget = RetryBudget(ratio: 1, minimumRetriesPerSecond: 1, now: { clock.now })
        budget.deposit()
        #expect(budget.tryWithdraw())
        #expect(budget.tokens.balance == 0)
        #expect(budget.tokens.reserve == 1)
        #expect(budget.tryWithdraw())
        #expect(!budget.tryWithdraw())
    }

    @Test func anEmptyBudgetStopsRetries() async throws {
        let budget = RetryBudget(minimumRetriesPerSecond: 0)
        let policy = self.policy(retryBudget: budget)
        #expect(await self.decide(policy, self.request(), self.error(status: 503)) == .doNotRetry)
        let head = HTTPRequest(method: .get, scheme: "http", authority: "127.0.0.1:1", path: "/x")
        for _ in 0..<10 {
            let adapted = try await policy.adapt(head, using: RequestAdapterState(request: self.request()))
            #expect(adapted == head)
        }
        // Later attempts pay nothing in.
        _ = try await policy.adapt(head, using: RequestAdapterState(request: self.request(retryCount: 1)))
        #expect(budget.tokens.balance == 1)
        #expect(
            await self.decide(policy, self.request(), self.error(status: 503)) == .retryWithDelay(.milliseconds(500))
        )
        #expect(await self.decide(policy, self.request(), self.error(status: 503)) == .doNotRetry)
    }

    @Test func refusedRetriesDoNotSpendTheBudget() async {
        let budget = RetryBudget(ratio: 1, minimumRetriesPerSecond: 0)
        budget.deposit()
        let policy = self.policy(retryBudget: budget)
        #expect(await self.decide(policy, self.request(.post), self.error(status: 503)) == .doNotRetry)
        #expect(await self.decide(policy, self.request(), self.error(status: 503, retryAfter: "600")) == .doNotRetry)
        #expect(budget.tokens.balance == 1)
    }

    @Test func connectionLostRetryPolicyRetriesLostConnectionsOnly() async {
        let policy = ConnectionLostRetryPolicy(jitter: .none, retryBudget: nil)
        #expect(policy.retryableHTTPStatusCodes.isEmpty)
        #expect(policy.retryableErrorCodes == [.connectionLost])
        #expect(
            await self.decide(policy, self.request(), self.error(.connectionLost))
                == .retryWithDelay(.milliseconds(500))
        )
        #expect(await self.decide(policy, self.request(retryCount: 2), self.error(.connectionLost)) == .doNotRetry)
        #expect(await self.decide(policy, self.request(.post), self.error(.connectionLost)) == .doNotRetry)
        #expect(await self.decide(policy, self.request(), self.error(.connectionFailed)) == .doNotRetry)
        #expect(await self.decide(policy, self.request(), self.error(.timedOut, timeout: .connect)) == .doNotRetry)
        #expect(await self.decide(policy, self.request(), self.error(status: 503)) == .doNotRetry)
    }

    @Test func policiesAreStaticMembersOfTheProtocol() {
        func accept(_ interceptor: (any RequestInterceptor)?) -> (any RequestInterceptor)? { interceptor }
        #expect(accept(.retryPolicy) is RetryPolicy)
        #expect((accept(.retryPolicy(retryLimit: 5)) as? RetryPolicy)?.retryLimit == 5)
        #expect(accept(.connectionLostRetryPolicy) is ConnectionLostRetryPolicy)
    }
}

/// Every request a ``RetryPolicy`` may retry pays into its budget once, whatever role the policy has.
@Suite struct RetryBudgetRoleTests {
    /// A policy that retries a 503 once at once, with a budget that only deposits pay for.
    private static func policy() -> RetryPolicy {
        RetryPolicy(
            retryLimit: 1,
            exponentialBackoffScale: 0,
            jitter: .none,
            retryBudget: RetryBudget(ratio: 1, minimumRetriesPerSecond: 0)
        )
    }

    enum Role: String, CaseIterable, CustomTestStringConvertible {
        case sessionInterceptor, retrierBesideAnAdapter, nestedRetrier, bothRoles, requestRetrier
        var testDescription: String { self.rawValue }
    }

    @Test(arguments: Role.allCases)
    func eachRequestPaysOnceAndPaysForRetries(role: Role) async throws {
        let policy = Self.policy()
        let budget = try #require(policy.retryBudget)
        let tokenAdapter = Adapter { request, _ in
            var request = request
            request.headerFields[.authorization] = "Bearer t"
            return request
        }
        let sessionInterceptor: (any RequestInterceptor)? =
            switch role {
            case .sessionInterceptor: policy
            case .retrierBesideAnAdapter: Interceptor(adapter: tokenAdapter, retrier: policy)
            case .nestedRetrier: Interceptor(retriers: [Interceptor(adapters: [tokenAdapter], retriers: [policy])])
            case .bothRoles: Interceptor(adapters: [tokenAdapter], interceptors: [policy])
            case .requestRetrier: nil
            }
        let requestInterceptor: (any RequestInterceptor)? =
            role == .requestRetrier ? Interceptor(adapter: tokenAdapter, retrier: policy) : nil
        let session = Session(configuration: .default, interceptor: sessionInterceptor)
        for _ in 0..<3 {
            _ = try await session.request(try await Backend.inProcess.url("/get"), interceptor: requestInterceptor)
                .validate()
                .serializingData()
                .value
        }
        #expect(budget.tokens.balance == 3, "three requests paid in once each")
        let failing = session.request(try await Backend.inProcess.url("/status/503"), interceptor: requestInterceptor)
        let response = await failing.validate().serializingData().response
        #expect(response.response?.status.code == 503)
        #expect(failing.retryCount == 1, "the budget paid for the retry")
        #expect(budget.tokens.balance == 3, "the failing request paid in one and its retry took one")
        try await session.shutdown()
    }
}
