import Foundation
import HTTPTypes
import Testing

@testable import Kite

/// Reusing stored responses: fresh, stale, or validate first (RFC 9111 §4, §4.2.4, §5.2; RFC 5861).
struct CacheRulesReuseTests {
    /// A stored response received at `t0` with `Date: t0`, a request, and the decision at `t0 + age`.
    struct ReuseCase: Sendable, CustomTestStringConvertible {
        var name: String
        /// The stored response's `Cache-Control`.
        var response: String
        /// The stored response's other fields.
        var extra: [(String, String)]
        var request: [(String, String)]
        var age: Double
        var shared: Bool
        var expected: CacheRules.Reuse
        var testDescription: String { self.name }

        /// A case whose request has `Cache-Control: request`, or the fields `requestFields`.
        init(
            _ name: String,
            _ response: String,
            request: String? = nil,
            requestFields: [(String, String)] = [],
            extra: [(String, String)] = [],
            age: Double,
            shared: Bool = false,
            _ expected: CacheRules.Reuse
        ) {
            self.name = name
            self.response = response
            self.extra = extra
            self.request = request.map { [("Cache-Control", $0)] } ?? requestFields
            self.age = age
            self.shared = shared
            self.expected = expected
        }
    }

    static let reuseCases: [ReuseCase] = [
        // §4.2: fresh while age < lifetime.
        ReuseCase("fresh", "max-age=100", age: 50, .fresh),
        ReuseCase("age equal to lifetime is stale", "max-age=100", age: 100, .mustValidate),
        ReuseCase("stale", "max-age=100", age: 150, .mustValidate),
        ReuseCase("invalid max-age is stale at once", "max-age=-1", age: 0, .mustValidate),
        // §5.2.1.4, §5.4: request no-cache and Pragma.
        ReuseCase("request no-cache", "max-age=100", request: "no-cache", age: 50, .mustValidate),
        ReuseCase(
            "request no-cache beats max-stale",
            "max-age=100",
            request: "max-stale, no-cache",
            age: 150,
            .mustValidate
        ),
        ReuseCase(
            "request Pragma: no-cache",
            "max-age=100",
            requestFields: [("Pragma", "no-cache")],
            age: 50,
            .mustValidate
        ),
        ReuseCase(
            "Pragma ignored beside Cache-Control",
            "max-age=100",
            requestFields: [("Pragma", "no-cache"), ("Cache-Control", "max-stale=0")],
            age: 50,
            .fresh
        ),
        ReuseCase(
            "request no-cache on a fresh immutable response",
            "max-age=100, immutable",
            request: "no-cache",
            age: 50,
            .mustValidate
        ),
        // §5.2.2.4: response no-cache.
        ReuseCase("response no-cache", "no-cache, max-age=100", age: 50, .mustValidate),
        ReuseCase(
            "no-cache naming a present field",
            "no-cache=\"Set-Cookie\", max-age=100",
            extra: [("Set-Cookie", "a=1")],
            age: 50,
            .mustValidate
        ),
        ReuseCase("no-cache naming an absent field", "no-cache=\"Set-Cookie\", max-age=100", age: 50, .fresh),
        // §5.2.1.1: request max-age.
        ReuseCase("request max-age below age", "max-age=100", request: "max-age=30", age: 50, .mustValidate),
        ReuseCase("request max-age equal to age", "max-age=100", request: "max-age=50", age: 50, .fresh),
        ReuseCase("request max-age=0", "max-age=100", request: "max-age=0", age: 1, .mustValidate),
        ReuseCase("request max-age invalid", "max-age=100", request: "max-age=x", age: 1, .mustValidate),
        ReuseCase(
            "request max-age bounds max-stale",
            "max-age=100",
            request: "max-age=120, max-stale",
            age: 150,
            .mustValidate
        ),
        ReuseCase(
            "request max-age with max-stale",
            "max-age=100",
            request: "max-age=200, max-stale",
            age: 150,
            .stale(.maxStale)
        ),
        // §5.2.1.3: min-fresh.
        ReuseCase("min-fresh above remaining", "max-age=100", request: "min-fresh=60", age: 50, .mustValidate),
        ReuseCase("min-fresh equal to remaining", "max-age=100", request: "min-fresh=50", age: 50, .fresh),
        ReuseCase("min-fresh below remaining", "max-age=100", request: "min-fresh=40", age: 50, .fresh),
        ReuseCase("min-fresh invalid is ignored", "max-age=100", request: "min-fresh=x", age: 50, .fresh),
        ReuseCase(
            "min-fresh beats max-stale",
            "max-age=100",
            request: "min-fresh=0, max-stale",
            age: 150,
            .mustValidate
        ),
        // §5.2.1.2: max-stale.
        ReuseCase("max-stale without value", "max-age=100", request: "max-stale", age: 1_000_000, .stale(.maxStale)),
        ReuseCase("max-stale within", "max-age=100", request: "max-stale=60", age: 150, .stale(.maxStale)),
        ReuseCase("max-stale at its limit", "max-age=100", request: "max-stale=60", age: 160, .stale(.maxStale)),
        ReuseCase("max-stale exceeded", "max-age=100", request: "max-stale=60", age: 170, .mustValidate),
        ReuseCase("max-stale invalid", "max-age=100", request: "max-stale=x", age: 150, .mustValidate),
        ReuseCase("max-stale on a fresh response", "max-age=100", request: "max-stale", age: 50, .fresh),
        // §4.2.4, §5.2.2.2, §5.2.2.8, §5.2.2.10: directives that forbid stale use.
        ReuseCase(
            "must-revalidate beats max-stale",
            "max-age=100, must-revalidate",
            request: "max-stale",
            age: 150,
            .mustValidate
        ),
        ReuseCase("must-revalidate while fresh", "max-age=100, must-revalidate", age: 50, .fresh),
        ReuseCase(
            "proxy-revalidate, private cache",
            "max-age=100, proxy-revalidate",
            request: "max-stale",
            age: 150,
            .stale(.maxStale)
        ),
        ReuseCase(
            "proxy-revalidate, shared cache",
            "max-age=100, proxy-revalidate",
            request: "max-stale",
            age: 150,
            shared: true,
            .mustValidate
        ),
        ReuseCase(
            "s-maxage, private cache",
            "max-age=100, s-maxage=100",
            request: "max-stale",
            age: 150,
            .stale(.maxStale)
        ),
        ReuseCase(
            "s-maxage, shared cache",
            "max-age=100, s-maxage=100",
            request: "max-stale",
            age: 150,
            shared: true,
            .mustValidate
        ),
        ReuseCase("s-maxage fresh in a shared cache only", "max-age=10, s-maxage=100", age: 50, shared: true, .fresh),
        ReuseCase("s-maxage not used by a private cache", "max-age=10, s-maxage=100", age: 50, .mustValidate),
        // RFC 5861 §3: stale-while-revalidate.
        ReuseCase(
            "stale-while-revalidate within",
            "max-age=100, stale-while-revalidate=60",
            age: 150,
            .stale(.whileRevalidate)
        ),
        ReuseCase(
            "stale-while-revalidate at its limit",
            "max-age=100, stale-while-revalidate=60",
            age: 160,
            .stale(.whileRevalidate)
        ),
        ReuseCase("stale-while-revalidate exceeded", "max-age=100, stale-while-revalidate=60", age: 161, .mustValidate),
        ReuseCase("stale-while-revalidate fresh", "max-age=100, stale-while-revalidate=60", age: 50, .fresh),
        ReuseCase(
            "stale-while-revalidate without value",
            "max-age=100, stale-while-revalidate",
            age: 150,
            .mustValidate
        ),
        ReuseCase(
            "stale-while-revalidate and must-revalidate",
            "max-age=100, stale-while-revalidate=60, must-revalidate",
            age: 150,
            .mustValidate
        ),
        ReuseCase(
            "stale-while-revalidate and proxy-revalidate, shared",
            "max-age=100, stale-while-revalidate=60, proxy-revalidate",
            age: 150,
            shared: true,
            .mustValidate
        ),
        ReuseCase(
            "stale-while-revalidate and no-cache",
            "max-age=100, stale-while-revalidate=60, no-cache",
            age: 150,
            .mustValidate
        ),
        ReuseCase(
            "stale-while-revalidate against request max-age",
            "max-age=100, stale-while-revalidate=60",
            request: "max-age=200",
            age: 150,
            .mustValidate
        ),
        ReuseCase(
            "stale-while-revalidate against request min-fresh",
            "max-age=100, stale-while-revalidate=60",
            request: "min-fresh=0",
            age: 150,
            .mustValidate
        ),
        ReuseCase(
            "max-stale first, then stale-while-revalidate",
            "max-age=100, stale-while-revalidate=60",
            request: "max-stale=60",
            age: 150,
            .stale(.maxStale)
        ),
        ReuseCase(
            "stale-while-revalidate past an exceeded max-stale",
            "max-age=100, stale-while-revalidate=60",
            request: "max-stale=10",
            age: 150,
            .stale(.whileRevalidate)
        ),
        ReuseCase(
            "stale-while-revalidate with request max-age and max-stale",
            "max-age=100, stale-while-revalidate=60",
            request: "max-age=200, max-stale=10",
            age: 150,
            .stale(.whileRevalidate)
        ),
        ReuseCase(
            "stale-if-error does not allow stale reuse",
            "max-age=100, stale-if-error=600",
            age: 150,
            .mustValidate
        ),
        ReuseCase(
            "request stale-if-error does not allow stale reuse",
            "max-age=100",
            request: "stale-if-error=600",
            age: 150,
            .mustValidate
        ),
        // §5.2.1.7, §5.2.1.5: only-if-cached and no-store leave the decision as it is.
        ReuseCase("request only-if-cached, stale", "max-age=100", request: "only-if-cached", age: 150, .mustValidate),
        ReuseCase("request only-if-cached, fresh", "max-age=100", request: "only-if-cached", age: 50, .fresh),
        ReuseCase("request no-store, fresh", "max-age=100", request: "no-store", age: 50, .fresh),
    ]

    // RFC 9111 §4, §4.2, §4.2.4, §5.2.1, §5.2.2, §5.4; RFC 5861 §3.
    @Test(arguments: Self.reuseCases)
    func reuseDecidesBetweenFreshStaleAndValidation(_ testCase: ReuseCase) {
        let stored = CacheFixture.stored(
            200,
            [("Cache-Control", testCase.response), ("Date", CacheFixture.t0Text)] + testCase.extra
        )
        let request = CacheFixture.request(.get, testCase.request)
        let reuse = CacheRules.reuse(
            of: stored,
            for: request,
            now: CacheFixture.at(testCase.age),
            shared: testCase.shared
        )
        #expect(reuse == testCase.expected)
    }

    // RFC 9111 §4.2.2: a heuristic lifetime (10 % of an hour) makes a response fresh, then stale.
    @Test func heuristicFreshnessExpires() {
        let stored = CacheFixture.stored(
            200,
            [("Date", CacheFixture.t0Text), ("Last-Modified", CacheFixture.t0MinusHour)]
        )
        let request = CacheFixture.request()
        #expect(CacheRules.reuse(of: stored, for: request, now: CacheFixture.at(359), shared: false) == .fresh)
        #expect(CacheRules.reuse(of: stored, for: request, now: CacheFixture.at(360), shared: false) == .mustValidate)
    }
}
