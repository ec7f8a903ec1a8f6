import Foundation
import HTTPTypes
import Testing

@testable import Kite

/// Freshness lifetime and age (RFC 9111 §4.2.1–§4.2.3).
struct CacheRulesFreshnessTests {
    /// A stored response and the lifetime it should have.
    struct LifetimeCase: Sendable, CustomTestStringConvertible {
        var name: String
        var status = 200
        var fields: [(String, String)]
        var received: Double = 0
        var shared = false
        var expected: Double
        var testDescription: String { self.name }
    }

    static let lifetimeCases: [LifetimeCase] = [
        // §4.2.1, first match: s-maxage (shared), max-age, Expires - Date, heuristic.
        LifetimeCase(name: "max-age", fields: [("Cache-Control", "max-age=60")], expected: 60),
        LifetimeCase(
            name: "s-maxage first in a shared cache",
            fields: [("Cache-Control", "max-age=60, s-maxage=30")],
            shared: true,
            expected: 30
        ),
        LifetimeCase(
            name: "s-maxage ignored in a private cache",
            fields: [("Cache-Control", "max-age=60, s-maxage=30")],
            expected: 60
        ),
        LifetimeCase(
            name: "invalid s-maxage is stale in a shared cache",
            fields: [("Cache-Control", "max-age=60, s-maxage=-1")],
            shared: true,
            expected: 0
        ),
        LifetimeCase(
            name: "max-age over Expires",
            fields: [
                ("Cache-Control", "max-age=60"), ("Date", CacheFixture.t0Text), ("Expires", CacheFixture.t0PlusHour),
            ],
            expected: 60
        ),
        LifetimeCase(
            name: "invalid max-age over Expires",
            fields: [
                ("Cache-Control", "max-age=abc"), ("Date", CacheFixture.t0Text), ("Expires", CacheFixture.t0PlusHour),
            ],
            expected: 0
        ),
        LifetimeCase(
            name: "max-age huge is capped",
            fields: [("Cache-Control", "max-age=99999999999999999999")],
            expected: 2_147_483_648
        ),
        LifetimeCase(
            name: "duplicated different max-age",
            fields: [("Cache-Control", "max-age=60"), ("Cache-Control", "max-age=120")],
            expected: 0
        ),
        LifetimeCase(
            name: "duplicated equal max-age",
            fields: [("Cache-Control", "max-age=60, max-age=60")],
            expected: 60
        ),
        LifetimeCase(
            name: "Expires less Date",
            fields: [("Date", CacheFixture.t0Text), ("Expires", CacheFixture.t0PlusHour)],
            expected: 3600
        ),
        LifetimeCase(
            name: "Expires less a later Date",
            fields: [("Date", CacheFixture.t0Plus100), ("Expires", CacheFixture.t0PlusHour)],
            expected: 3500
        ),
        LifetimeCase(
            name: "Expires less response time without Date",
            fields: [("Expires", CacheFixture.t0PlusHour)],
            received: 600,
            expected: 3000
        ),
        LifetimeCase(
            name: "Expires less response time with invalid Date",
            fields: [("Date", "yesterday"), ("Expires", CacheFixture.t0PlusHour)],
            received: 100,
            expected: 3500
        ),
        LifetimeCase(
            name: "Expires in RFC 850 form",
            fields: [("Date", CacheFixture.t0Text), ("Expires", "Sunday, 06-Nov-94 09:49:37 GMT")],
            expected: 3600
        ),
        LifetimeCase(
            name: "Expires in asctime form",
            fields: [("Date", CacheFixture.t0Text), ("Expires", "Sun Nov  6 09:49:37 1994")],
            expected: 3600
        ),
        LifetimeCase(
            name: "Expires: 0",
            fields: [("Date", CacheFixture.t0Text), ("Expires", "0"), ("Last-Modified", CacheFixture.t0MinusHour)],
            expected: 0
        ),
        LifetimeCase(
            name: "Expires: yesterday",
            fields: [
                ("Date", CacheFixture.t0Text), ("Expires", "yesterday"), ("Last-Modified", CacheFixture.t0MinusHour),
            ],
            expected: 0
        ),
        LifetimeCase(
            name: "Expires before Date",
            fields: [("Date", CacheFixture.t0Text), ("Expires", CacheFixture.t0MinusHour)],
            expected: 0
        ),
        LifetimeCase(
            name: "two equal Expires lines",
            fields: [
                ("Date", CacheFixture.t0Text), ("Expires", CacheFixture.t0PlusHour),
                ("Expires", CacheFixture.t0PlusHour),
            ],
            expected: 0
        ),
        // §4.2.2 heuristic: 10 % of Date - Last-Modified, at most a day.
        LifetimeCase(
            name: "heuristic 10 %",
            fields: [("Date", CacheFixture.t0Text), ("Last-Modified", CacheFixture.t0MinusHour)],
            expected: 360
        ),
        LifetimeCase(
            name: "heuristic capped at a day",
            fields: [("Date", CacheFixture.t0Text), ("Last-Modified", CacheFixture.t0Minus100Days)],
            expected: 86_400
        ),
        LifetimeCase(
            name: "heuristic from response time without Date",
            fields: [("Last-Modified", CacheFixture.t0MinusHour)],
            received: 3600,
            expected: 720
        ),
        LifetimeCase(
            name: "heuristic 404",
            status: 404,
            fields: [("Date", CacheFixture.t0Text), ("Last-Modified", CacheFixture.t0MinusHour)],
            expected: 360
        ),
        LifetimeCase(
            name: "no heuristic for 201",
            status: 201,
            fields: [("Date", CacheFixture.t0Text), ("Last-Modified", CacheFixture.t0MinusHour)],
            expected: 0
        ),
        LifetimeCase(
            name: "heuristic for public 201",
            status: 201,
            fields: [
                ("Cache-Control", "public"), ("Date", CacheFixture.t0Text), ("Last-Modified", CacheFixture.t0MinusHour),
            ],
            expected: 360
        ),
        LifetimeCase(
            name: "heuristic for private 201 in a private cache",
            status: 201,
            fields: [
                ("Cache-Control", "private"), ("Date", CacheFixture.t0Text),
                ("Last-Modified", CacheFixture.t0MinusHour),
            ],
            expected: 360
        ),
        LifetimeCase(
            name: "no heuristic for private 201 in a shared cache",
            status: 201,
            fields: [
                ("Cache-Control", "private"), ("Date", CacheFixture.t0Text),
                ("Last-Modified", CacheFixture.t0MinusHour),
            ],
            shared: true,
            expected: 0
        ),
        LifetimeCase(name: "no heuristic without Last-Modified", fields: [("Date", CacheFixture.t0Text)], expected: 0),
        LifetimeCase(
            name: "no heuristic with invalid Last-Modified",
            fields: [("Date", CacheFixture.t0Text), ("Last-Modified", "0")],
            expected: 0
        ),
        LifetimeCase(
            name: "no heuristic with future Last-Modified",
            fields: [("Date", CacheFixture.t0Text), ("Last-Modified", CacheFixture.t0PlusHour)],
            expected: 0
        ),
        LifetimeCase(name: "nothing at all", fields: [], expected: 0),
    ]

    // RFC 9111 §4.2.1, §4.2.2, §5.3.
    @Test(arguments: Self.lifetimeCases)
    func freshnessLifetimeTakesTheFirstRuleThatApplies(_ testCase: LifetimeCase) {
        let stored = CacheFixture.stored(testCase.status, testCase.fields, received: testCase.received)
        #expect(CacheRules.freshnessLifetime(of: stored, shared: testCase.shared) == testCase.expected)
    }

    /// A stored response's times and fields, and the age it should have at `now`.
    struct AgeCase: Sendable, CustomTestStringConvertible {
        var name: String
        var fields: [(String, String)]
        var requested: Double = 0
        var received: Double = 0
        var now: Double
        var expected: Double
        var testDescription: String { self.name }
    }

    static let ageCases: [AgeCase] = [
        // apparent_age = max(0, 2 - 1) = 1; corrected_age_value = 10 + 2 = 12; initial 12; resident 100.
        AgeCase(
            name: "Age, delay and residence add up",
            fields: [("Date", CacheFixture.t0Plus1), ("Age", "10")],
            received: 2,
            now: 102,
            expected: 112
        ),
        // apparent_age = 100 beats corrected_age_value = 0 + 0; resident 50.
        AgeCase(
            name: "apparent age wins when larger",
            fields: [("Date", CacheFixture.t0Minus100)],
            now: 50,
            expected: 150
        ),
        // Date ahead of the receiver's clock: apparent age 0; corrected 5 + 3.
        AgeCase(
            name: "future Date gives apparent age 0",
            fields: [("Date", CacheFixture.t0PlusHour), ("Age", "5")],
            requested: -3,
            now: 10,
            expected: 18
        ),
        AgeCase(name: "no Date: response time", fields: [], requested: -4, now: 6, expected: 10),
        AgeCase(name: "invalid Date: response time", fields: [("Date", "yesterday")], now: 6, expected: 6),
        AgeCase(name: "Age -5 ignored", fields: [("Age", "-5")], now: 7, expected: 7),
        AgeCase(name: "Age 1e3 ignored", fields: [("Age", "1e3")], now: 7, expected: 7),
        AgeCase(name: "Age empty ignored", fields: [("Age", "")], now: 7, expected: 7),
        AgeCase(name: "Age with spaces", fields: [("Age", " 10 ")], now: 7, expected: 17),
        AgeCase(name: "Age huge capped", fields: [("Age", "99999999999999999999")], now: 7, expected: 2_147_483_655),
        AgeCase(name: "Age list: the first member", fields: [("Age", "10, 20")], now: 0, expected: 10),
        AgeCase(name: "Age lines: the first line", fields: [("Age", "10"), ("Age", "20")], now: 0, expected: 10),
        AgeCase(
            name: "Age: invalid first member ignores the field",
            fields: [("Age", "-5"), ("Age", "20")],
            now: 0,
            expected: 0
        ),
        AgeCase(name: "clock before response time is 0", fields: [], now: -50, expected: 0),
    ]

    // RFC 9111 §4.2.3, §5.1.
    @Test(arguments: Self.ageCases)
    func currentAgeFollowsSection4_2_3(_ testCase: AgeCase) {
        let stored = CacheFixture.stored(
            200,
            testCase.fields,
            requested: testCase.requested,
            received: testCase.received
        )
        #expect(CacheRules.currentAge(of: stored, now: CacheFixture.at(testCase.now)) == testCase.expected)
    }

    // RFC 9111 §4.2.3: computed in Double, so extreme times neither trap nor go negative.
    @Test func currentAgeSurvivesExtremeTimes() {
        let stored = StoredResponseInfo(
            response: CacheFixture.response(200, [("Age", "2147483648"), ("Date", CacheFixture.t0Text)]),
            requestTime: .distantFuture,
            responseTime: .distantPast,
            requestMethod: .get,
            varyingRequestFields: [:]
        )
        let age = CacheRules.currentAge(of: stored, now: .distantFuture)
        #expect(age.isFinite && age > 0)
        #expect(CacheRules.currentAge(of: stored, now: .distantPast) >= 0)
        #expect(CacheRules.freshnessLifetime(of: stored, shared: false) >= 0)
    }
}
