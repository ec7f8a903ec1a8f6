import Foundation
import HTTPTypes
import Testing

@testable import Kite

/// What the cache stores and which variant a request selects (RFC 9111 §3, §4.1).
struct CacheRulesTests {
    /// A request and response, and whether a cache may store the response.
    struct StoreCase: Sendable, CustomTestStringConvertible {
        var name: String
        var method: HTTPRequest.Method = .get
        var request: [(String, String)] = []
        var status = 200
        var response: [(String, String)] = []
        var shared = false
        var expected: Bool
        var testDescription: String { self.name }
    }

    static let storeCases: [StoreCase] =
        [
            // §3: method, final and understood status (RFC 9110 §15), at least one permission.
            StoreCase(name: "200 without directives: heuristically cacheable", expected: true),
            StoreCase(
                name: "HEAD is not stored",
                method: .head,
                response: [("Cache-Control", "max-age=60")],
                expected: false
            ),
            StoreCase(
                name: "POST is not stored",
                method: .post,
                response: [("Cache-Control", "max-age=60")],
                expected: false
            ),
            StoreCase(name: "201 without directives", status: 201, expected: false),
            StoreCase(name: "201 max-age", status: 201, response: [("Cache-Control", "max-age=60")], expected: true),
            StoreCase(
                name: "201 invalid max-age is still max-age",
                status: 201,
                response: [("Cache-Control", "max-age=x")],
                expected: true
            ),
            StoreCase(
                name: "201 Expires",
                status: 201,
                response: [("Expires", CacheFixture.t0PlusHour)],
                expected: true
            ),
            StoreCase(
                name: "201 Expires: 0 is still Expires",
                status: 201,
                response: [("Expires", "0")],
                expected: true
            ),
            StoreCase(name: "201 public", status: 201, response: [("Cache-Control", "public")], expected: true),
            StoreCase(
                name: "201 private, private cache",
                status: 201,
                response: [("Cache-Control", "private")],
                expected: true
            ),
            StoreCase(
                name: "201 private, shared cache",
                status: 201,
                response: [("Cache-Control", "private")],
                shared: true,
                expected: false
            ),
            StoreCase(
                name: "201 private=\"x\", private cache",
                status: 201,
                response: [("Cache-Control", "private=\"x\"")],
                expected: true
            ),
            StoreCase(
                name: "201 private=\"x\", shared cache",
                status: 201,
                response: [("Cache-Control", "private=\"x\"")],
                shared: true,
                expected: false
            ),
            StoreCase(
                name: "200 private=\"Set-Cookie\", shared cache",
                response: [("Cache-Control", "private=\"Set-Cookie\"")],
                shared: true,
                expected: true
            ),
            StoreCase(
                name: "201 s-maxage, shared cache",
                status: 201,
                response: [("Cache-Control", "s-maxage=60")],
                shared: true,
                expected: true
            ),
            StoreCase(
                name: "201 s-maxage, private cache",
                status: 201,
                response: [("Cache-Control", "s-maxage=60")],
                expected: false
            ),
            StoreCase(
                name: "201 immutable alone",
                status: 201,
                response: [("Cache-Control", "immutable"), ("ETag", "\"a\"")],
                expected: false
            ),
            StoreCase(
                name: "201 no-cache with validator",
                status: 201,
                response: [("Cache-Control", "no-cache"), ("ETag", "\"a\"")],
                expected: false
            ),
            StoreCase(
                name: "206 is not stored",
                status: 206,
                response: [("Cache-Control", "max-age=60")],
                expected: false
            ),
            StoreCase(
                name: "304 is not stored",
                status: 304,
                response: [("Cache-Control", "max-age=60")],
                expected: false
            ),
            StoreCase(
                name: "1xx is not final",
                status: 103,
                response: [("Cache-Control", "max-age=60")],
                expected: false
            ),
            StoreCase(
                name: "unrecognised 299",
                status: 299,
                response: [("Cache-Control", "max-age=60")],
                expected: false
            ),
            StoreCase(
                name: "unrecognised 418",
                status: 418,
                response: [("Cache-Control", "max-age=60")],
                expected: false
            ),
            StoreCase(
                name: "unrecognised 599",
                status: 599,
                response: [("Cache-Control", "max-age=60")],
                expected: false
            ),
            StoreCase(name: "302 without directives", status: 302, expected: false),
            StoreCase(name: "302 max-age", status: 302, response: [("Cache-Control", "max-age=60")], expected: true),
            StoreCase(name: "500 without directives", status: 500, expected: false),
            // §3, §5.2.1.5, §5.2.2.5, §5.2.2.3.
            StoreCase(
                name: "response no-store",
                response: [("Cache-Control", "max-age=60, no-store")],
                expected: false
            ),
            StoreCase(
                name: "request no-store",
                request: [("Cache-Control", "no-store")],
                response: [("Cache-Control", "max-age=60")],
                expected: false
            ),
            StoreCase(
                name: "no-store on a second line",
                response: [("Cache-Control", "max-age=60"), ("Cache-Control", "NO-STORE")],
                expected: false
            ),
            StoreCase(
                name: "must-understand with understood status overrides no-store",
                response: [("Cache-Control", "no-store, must-understand, max-age=60")],
                expected: true
            ),
            StoreCase(
                name: "must-understand does not lift a request's no-store",
                request: [("Cache-Control", "no-store")],
                response: [("Cache-Control", "no-store, must-understand")],
                expected: false
            ),
            StoreCase(
                name: "must-understand with unrecognised status",
                status: 299,
                response: [("Cache-Control", "no-store, must-understand, max-age=60")],
                expected: false
            ),
            // §3.5: Authorization in a shared cache.
            StoreCase(
                name: "Authorization, shared, plain 200",
                request: [("Authorization", "Basic eA==")],
                shared: true,
                expected: false
            ),
            StoreCase(
                name: "Authorization, shared, max-age only",
                request: [("Authorization", "Basic eA==")],
                response: [("Cache-Control", "max-age=60")],
                shared: true,
                expected: false
            ),
            StoreCase(
                name: "Authorization, shared, public",
                request: [("Authorization", "Basic eA==")],
                response: [("Cache-Control", "public")],
                shared: true,
                expected: true
            ),
            StoreCase(
                name: "Authorization, shared, must-revalidate",
                request: [("Authorization", "Basic eA==")],
                response: [("Cache-Control", "must-revalidate")],
                shared: true,
                expected: true
            ),
            StoreCase(
                name: "Authorization, shared, s-maxage",
                request: [("Authorization", "Basic eA==")],
                response: [("Cache-Control", "s-maxage=5")],
                shared: true,
                expected: true
            ),
            StoreCase(name: "Authorization, private cache", request: [("Authorization", "Basic eA==")], expected: true),
            // §4.1: Vary.
            StoreCase(name: "Vary: *", response: [("Vary", "*"), ("Cache-Control", "max-age=60")], expected: false),
            StoreCase(
                name: "Vary with a * member on a second line",
                response: [("Vary", "Accept"), ("Vary", "Origin, *")],
                expected: false
            ),
            StoreCase(
                name: "Vary of 64 names",
                response: [("Vary", (0..<64).map { "X-F\($0)" }.joined(separator: ", "))],
                expected: true
            ),
            StoreCase(
                name: "Vary of 65 names",
                response: [("Vary", (0..<65).map { "X-F\($0)" }.joined(separator: ", "))],
                expected: false
            ),
            StoreCase(
                name: "Vary of 1,000 names",
                response: [("Vary", (0..<1000).map { "X-F\($0)" }.joined(separator: ","))],
                expected: false
            ),
            StoreCase(
                name: "Vary of 1,000 repeats of one name",
                response: [("Vary", Array(repeating: "Accept", count: 1000).joined(separator: ","))],
                expected: true
            ),
        ]
        + [200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 501].map {
            StoreCase(name: "\($0) is heuristically cacheable (RFC 9110 §15.1)", status: $0, expected: true)
        }
        + [201, 202, 205, 302, 303, 307, 400, 403, 500, 502, 503, 504].map {
            StoreCase(name: "\($0) is not heuristically cacheable", status: $0, expected: false)
        }

    // RFC 9111 §3, §3.5, §4.1, §5.2.2.3; RFC 9110 §15, §15.1.
    @Test(arguments: Self.storeCases)
    func mayStoreFollowsSection3(_ testCase: StoreCase) {
        let request = CacheFixture.request(testCase.method, testCase.request)
        let response = CacheFixture.response(testCase.status, testCase.response)
        #expect(CacheRules.mayStore(response, for: request, shared: testCase.shared) == testCase.expected)
    }

    static let receivedHead = CacheFixture.response(
        200,
        [
            ("Content-Type", "text/plain"),
            ("Connection", "close, X-Secret"),
            ("X-Secret", "s"),
            ("Keep-Alive", "timeout=5"),
            ("Transfer-Encoding", "chunked"),
            ("Upgrade", "h2c"),
            ("TE", "trailers"),
            ("Proxy-Authenticate", "Basic"),
            ("Proxy-Authorization", "Basic eA=="),
            ("Proxy-Connection", "keep-alive"),
            ("Proxy-Authentication-Info", "x"),
            ("Cache-Control", "max-age=60, private=\"Set-Cookie, X-User\", no-cache=\"X-Tracking\""),
            ("Set-Cookie", "a=1"),
            ("Set-Cookie", "b=2"),
            ("X-User", "u"),
            ("X-Tracking", "t"),
        ]
    )

    // RFC 9111 §3.1, RFC 9110 §7.6.1: hop-by-hop and Connection-named fields are not stored; no-cache names are kept.
    @Test func storedHeadDropsConnectionFieldsInAPrivateCache() {
        let head = CacheRules.storedHead(Self.receivedHead, shared: false)
        #expect(head.status == .ok)
        #expect(
            head.headerFields.map(\.name.canonicalName) == [
                "content-type", "cache-control", "set-cookie", "set-cookie", "x-user", "x-tracking",
            ]
        )
    }

    // RFC 9111 §5.2.2.7: a shared cache also drops the fields private="…" names.
    @Test func storedHeadDropsPrivateFieldsInASharedCache() {
        let head = CacheRules.storedHead(Self.receivedHead, shared: true)
        #expect(head.headerFields.map(\.name.canonicalName) == ["content-type", "cache-control", "x-tracking"])
    }

    // RFC 9111 §4.1: the request's values of each name Vary lists, lowercased, deduplicated, lines combined.
    @Test func varyingRequestFieldsCombinesLinesAndRecordsAbsence() {
        let request = CacheFixture.request(
            .get,
            [
                ("Accept-Encoding", "gzip"), ("User-Agent", "UA/1"), ("Accept-Encoding", "br"),
            ]
        )
        let response = CacheFixture.response(
            200,
            [
                ("Vary", "Accept-Encoding, accept-encoding"), ("Vary", " User-Agent ,X-Missing,, *"),
            ]
        )
        let expected: [String: String?] = [
            "accept-encoding": "gzip, br", "user-agent": "UA/1", "x-missing": String?.none,
        ]
        #expect(CacheRules.varyingRequestFields(of: request, for: response) == expected)
        #expect(CacheRules.varyingRequestFields(of: request, for: CacheFixture.response()).isEmpty)
    }

    // The guard against Vary of 1,000 fields: at most 64 names are recorded.
    @Test func varyingRequestFieldsKeepsAtMost64Names() {
        let response = CacheFixture.response(200, [("Vary", (0..<1000).map { "X-F\($0)" }.joined(separator: ","))])
        let recorded = CacheRules.varyingRequestFields(of: CacheFixture.request(), for: response)
        #expect(recorded.count == 64)
        #expect(recorded.keys.contains("x-f0") && recorded.keys.contains("x-f63") && !recorded.keys.contains("x-f64"))
    }

    /// A stored variant's recorded value against a new request's lines.
    struct VariantCase: Sendable, CustomTestStringConvertible {
        var name: String
        var vary = "Accept-Encoding"
        var recorded: [String: String?]
        var presented: [(String, String)]
        var expected: Bool
        var testDescription: String { self.name }
    }

    static let variantCases: [VariantCase] = [
        VariantCase(
            name: "same value",
            recorded: ["accept-encoding": "gzip, br"],
            presented: [("Accept-Encoding", "gzip, br")],
            expected: true
        ),
        VariantCase(
            name: "no space after comma",
            recorded: ["accept-encoding": "gzip, br"],
            presented: [("Accept-Encoding", "gzip,br")],
            expected: true
        ),
        VariantCase(
            name: "spaces and tabs around comma",
            recorded: ["accept-encoding": "gzip, br"],
            presented: [("Accept-Encoding", " gzip \t,  br ")],
            expected: true
        ),
        VariantCase(
            name: "two lines",
            recorded: ["accept-encoding": "gzip, br"],
            presented: [("Accept-Encoding", "gzip"), ("Accept-Encoding", "br")],
            expected: true
        ),
        VariantCase(
            name: "other order",
            recorded: ["accept-encoding": "gzip, br"],
            presented: [("Accept-Encoding", "br, gzip")],
            expected: false
        ),
        VariantCase(
            name: "other case",
            recorded: ["accept-encoding": "gzip, br"],
            presented: [("Accept-Encoding", "GZIP, br")],
            expected: false
        ),
        VariantCase(
            name: "inner whitespace is kept",
            recorded: ["accept-encoding": "gzip;q=1"],
            presented: [("Accept-Encoding", "gzip; q=1")],
            expected: false
        ),
        VariantCase(
            name: "present against absent",
            recorded: ["accept-encoding": "gzip"],
            presented: [],
            expected: false
        ),
        VariantCase(
            name: "absent against absent",
            recorded: ["accept-encoding": String?.none],
            presented: [],
            expected: true
        ),
        VariantCase(
            name: "absent against empty",
            recorded: ["accept-encoding": String?.none],
            presented: [("Accept-Encoding", "")],
            expected: false
        ),
        VariantCase(name: "unrecorded name", recorded: [:], presented: [], expected: false),
        VariantCase(name: "Vary: *", vary: "*", recorded: [:], presented: [], expected: false),
        VariantCase(
            name: "Vary with * among names",
            vary: "Accept-Encoding, *",
            recorded: ["accept-encoding": "gzip"],
            presented: [("Accept-Encoding", "gzip")],
            expected: false
        ),
        VariantCase(
            name: "Vary names compared case-insensitively",
            vary: "ACCEPT-encoding",
            recorded: ["accept-encoding": "gzip"],
            presented: [("accept-encoding", "gzip")],
            expected: true
        ),
        VariantCase(name: "no Vary", vary: "", recorded: [:], presented: [("Accept-Encoding", "gzip")], expected: true),
        VariantCase(
            name: "quoted whitespace is kept",
            vary: "X-Q",
            recorded: ["x-q": "\"a , b\""],
            presented: [("X-Q", "\"a,b\"")],
            expected: false
        ),
        VariantCase(
            name: "whitespace after quoted string",
            vary: "X-Q",
            recorded: ["x-q": "\"a , b\", c"],
            presented: [("X-Q", "\"a , b\" ,c")],
            expected: true
        ),
    ]

    // RFC 9111 §4.1: whitespace and line combining are normalised, values are otherwise compared exactly.
    @Test(arguments: Self.variantCases)
    func matchesVariantComparesNominatedFields(_ testCase: VariantCase) {
        let pairs = testCase.vary.isEmpty ? [] : [("Vary", testCase.vary)]
        let stored = CacheFixture.stored(200, pairs, vary: testCase.recorded)
        let request = CacheFixture.request(.get, testCase.presented)
        #expect(CacheRules.matchesVariant(stored, request: request) == testCase.expected)
    }

    // What varyingRequestFields records, matchesVariant accepts for the same request, and not for another.
    @Test func recordedFieldsMatchTheirOwnRequest() {
        let response = CacheFixture.response(200, [("Vary", "Accept-Language, X-Absent")])
        let request = CacheFixture.request(.get, [("Accept-Language", "de,  en;q=0.5")])
        var stored = CacheFixture.stored(200, [("Vary", "Accept-Language, X-Absent")])
        stored.varyingRequestFields = CacheRules.varyingRequestFields(of: request, for: response)
        #expect(CacheRules.matchesVariant(stored, request: request))
        #expect(!CacheRules.matchesVariant(stored, request: CacheFixture.request(.get, [("Accept-Language", "fr")])))
        let withExtra = CacheFixture.request(.get, [("Accept-Language", "de, en;q=0.5"), ("X-Absent", "1")])
        #expect(!CacheRules.matchesVariant(stored, request: withExtra))
    }
}
