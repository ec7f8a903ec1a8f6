import Foundation
import HTTPTypes
import Testing

@testable import Kite

/// Serving a stale response when validation fails with an error (RFC 5861 §4, RFC 9111 §4.2.4).
struct CacheRulesStaleIfErrorTests {
    /// A stored response received at `t0`, a request, and whether stale-if-error allows it at `t0 + age`.
    struct ErrorCase: Sendable, CustomTestStringConvertible {
        var name: String
        var response: String
        var request: String?
        var age: Double
        var shared: Bool
        var expected: Bool
        var testDescription: String { self.name }

        init(
            _ name: String,
            _ response: String,
            request: String? = nil,
            age: Double,
            shared: Bool = false,
            _ expected: Bool
        ) {
            self.name = name
            self.response = response
            self.request = request
            self.age = age
            self.shared = shared
            self.expected = expected
        }
    }

    static let errorCases: [ErrorCase] = [
        ErrorCase("response stale-if-error within", "max-age=100, stale-if-error=60", age: 150, true),
        ErrorCase("response stale-if-error at its limit", "max-age=100, stale-if-error=60", age: 160, true),
        ErrorCase("response stale-if-error exceeded", "max-age=100, stale-if-error=60", age: 161, false),
        ErrorCase("request stale-if-error within", "max-age=100", request: "stale-if-error=60", age: 150, true),
        ErrorCase("request stale-if-error exceeded", "max-age=100", request: "stale-if-error=60", age: 170, false),
        ErrorCase(
            "smaller request limit",
            "max-age=100, stale-if-error=60",
            request: "stale-if-error=10",
            age: 150,
            false
        ),
        ErrorCase(
            "smaller response limit",
            "max-age=100, stale-if-error=10",
            request: "stale-if-error=60",
            age: 150,
            false
        ),
        ErrorCase("both allow", "max-age=100, stale-if-error=60", request: "stale-if-error=60", age: 150, true),
        ErrorCase("no stale-if-error", "max-age=100", age: 150, false),
        ErrorCase("no stale-if-error, request max-stale", "max-age=100", request: "max-stale", age: 150, false),
        ErrorCase("invalid stale-if-error", "max-age=100, stale-if-error=abc", age: 150, false),
        ErrorCase("fresh", "max-age=100, stale-if-error=0", age: 50, true),
        ErrorCase("must-revalidate", "max-age=100, stale-if-error=60, must-revalidate", age: 150, false),
        ErrorCase(
            "must-revalidate beats the request",
            "max-age=100, must-revalidate",
            request: "stale-if-error=60",
            age: 150,
            false
        ),
        ErrorCase(
            "proxy-revalidate, private cache",
            "max-age=100, stale-if-error=60, proxy-revalidate",
            age: 150,
            true
        ),
        ErrorCase(
            "proxy-revalidate, shared cache",
            "max-age=100, stale-if-error=60, proxy-revalidate",
            age: 150,
            shared: true,
            false
        ),
        ErrorCase("s-maxage, private cache", "max-age=100, s-maxage=100, stale-if-error=60", age: 150, true),
        ErrorCase(
            "s-maxage, shared cache",
            "max-age=100, s-maxage=100, stale-if-error=60",
            age: 150,
            shared: true,
            false
        ),
        ErrorCase("no-cache", "max-age=100, stale-if-error=60, no-cache", age: 150, false),
    ]

    // RFC 5861 §4, RFC 9111 §4.2.4.
    @Test(arguments: Self.errorCases)
    func staleIfErrorAllowsBoundedStaleness(_ testCase: ErrorCase) {
        let stored = CacheFixture.stored(200, [("Cache-Control", testCase.response), ("Date", CacheFixture.t0Text)])
        let request = CacheFixture.request(.get, testCase.request.map { [("Cache-Control", $0)] } ?? [])
        let allowed = CacheRules.staleIfErrorAllows(
            stored,
            request: request,
            now: CacheFixture.at(testCase.age),
            shared: testCase.shared
        )
        #expect(allowed == testCase.expected)
    }
}
