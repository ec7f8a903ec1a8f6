import Foundation
import HTTPTypes
import Testing

@testable import Kite

/// Validation, updating from 304 responses and invalidation (RFC 9111 §3.2, §4.3, §4.4).
struct CacheRulesValidationTests {
    // RFC 9111 §4.3.1: entity tags and Last-Modified of one stored response.
    @Test func conditionalFieldsCarryEntityTagAndLastModified() {
        let stored = CacheFixture.stored(
            200,
            [
                ("ETag", "\"v1\""), ("Last-Modified", CacheFixture.t0MinusHour), ("Date", CacheFixture.t0Text),
            ]
        )
        let fields = CacheRules.conditionalFields(for: [stored])
        #expect(fields[.ifNoneMatch] == "\"v1\"")
        #expect(fields[.ifModifiedSince] == CacheFixture.t0MinusHour)
        #expect(fields.count == 2)
    }

    // RFC 9111 §4.3.1: every entity tag of several variants, strong and weak, once each; no If-Modified-Since.
    @Test func conditionalFieldsListEveryEntityTagOnce() {
        let stored = [
            CacheFixture.stored(200, [("ETag", "\"a\""), ("Last-Modified", CacheFixture.t0MinusHour)]),
            CacheFixture.stored(200, [("ETag", " W/\"b\" ")]),
            CacheFixture.stored(200, [("ETag", "\"a\"")]),
            CacheFixture.stored(200, [("ETag", "abc")]),
            CacheFixture.stored(200, [("ETag", "w/\"c\"")]),
            CacheFixture.stored(200, [("ETag", "\"a b\"")]),
            CacheFixture.stored(200, []),
        ]
        let fields = CacheRules.conditionalFields(for: stored)
        #expect(fields[.ifNoneMatch] == "\"a\", W/\"b\"")
        #expect(fields[.ifModifiedSince] == nil)
    }

    /// One stored response's fields and the If-Modified-Since it should give.
    struct ModifiedSinceCase: Sendable, CustomTestStringConvertible {
        var name: String
        var fields: [(String, String)]
        var expected: String?
        var testDescription: String { self.name }
    }

    // RFC 9111 §4.3.1, RFC 9110 §13.1.3: Last-Modified, else a valid Date; always sent as an IMF-fixdate.
    @Test(arguments: [
        ModifiedSinceCase(
            name: "Last-Modified",
            fields: [("Last-Modified", CacheFixture.t0MinusHour)],
            expected: CacheFixture.t0MinusHour
        ),
        ModifiedSinceCase(
            name: "RFC 850 Last-Modified",
            fields: [("Last-Modified", "Sunday, 06-Nov-94 07:49:37 GMT")],
            expected: CacheFixture.t0MinusHour
        ),
        ModifiedSinceCase(
            name: "asctime Last-Modified",
            fields: [("Last-Modified", "Sun Nov  6 07:49:37 1994")],
            expected: CacheFixture.t0MinusHour
        ),
        ModifiedSinceCase(
            name: "Date without Last-Modified",
            fields: [("Date", CacheFixture.t0Text)],
            expected: CacheFixture.t0Text
        ),
        ModifiedSinceCase(
            name: "Date when Last-Modified is invalid",
            fields: [("Last-Modified", "0"), ("Date", CacheFixture.t0Text)],
            expected: CacheFixture.t0Text
        ),
        ModifiedSinceCase(name: "invalid Date", fields: [("Date", "yesterday")], expected: nil),
        ModifiedSinceCase(
            name: "two different Last-Modified lines",
            fields: [("Last-Modified", CacheFixture.t0MinusHour), ("Last-Modified", CacheFixture.t0Text)],
            expected: nil
        ),
        ModifiedSinceCase(name: "nothing", fields: [], expected: nil),
    ])
    func conditionalFieldsUseLastModifiedOrDate(_ testCase: ModifiedSinceCase) {
        let fields = CacheRules.conditionalFields(for: [CacheFixture.stored(200, testCase.fields)])
        #expect(fields[.ifModifiedSince] == testCase.expected)
        #expect(fields[.ifNoneMatch] == nil)
    }

    @Test func conditionalFieldsAreEmptyWithoutStoredResponses() {
        #expect(CacheRules.conditionalFields(for: []).isEmpty)
    }

    // RFC 9110 §5.6.7: the IMF-fixdate a cache generates reads back as the same time.
    @Test(arguments: [0, 784_111_777, 951_782_400, 4_107_542_399, -2_208_988_800, 253_402_300_799, -62_167_219_200])
    func imfFixdateRoundTrips(_ seconds: Int) throws {
        let date = Date(timeIntervalSince1970: TimeInterval(seconds))
        let text = try #require(CacheRules.imfFixdate(date))
        #expect(RetryAfter.date(from: text, now: date) == date)
    }

    @Test func imfFixdateNamesTheDay() {
        #expect(CacheRules.imfFixdate(Date(timeIntervalSince1970: 0)) == "Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(CacheRules.imfFixdate(Date(timeIntervalSince1970: 951_782_400)) == "Tue, 29 Feb 2000 00:00:00 GMT")
        #expect(CacheRules.imfFixdate(Date(timeIntervalSince1970: -1)) == "Wed, 31 Dec 1969 23:59:59 GMT")
        #expect(CacheRules.imfFixdate(Date(timeIntervalSince1970: 253_402_300_800)) == nil)
        #expect(CacheRules.imfFixdate(Date(timeIntervalSince1970: -62_167_219_201)) == nil)
        #expect(CacheRules.imfFixdate(Date(timeIntervalSince1970: .infinity)) == nil)
        #expect(CacheRules.imfFixdate(Date(timeIntervalSince1970: .nan)) == nil)
    }

    // RFC 9111 §3.2, §4.3.4: a 304's fields replace stored lines of the same name, with §3.2's exceptions.
    @Test func updatedHeadReplacesFieldsButNotContentOnes() {
        let stored = CacheFixture.response(
            200,
            [
                ("Content-Type", "text/html"), ("Content-Length", "10"), ("Content-Encoding", "gzip"),
                ("ETag", "\"v1\""), ("Cache-Control", "max-age=10"), ("X-Old", "a"), ("X-Multi", "1"), ("X-Multi", "2"),
                ("Date", CacheFixture.t0Text),
            ]
        )
        let notModified = CacheFixture.response(
            304,
            [
                ("Cache-Control", "max-age=60"), ("Date", CacheFixture.t0Plus100), ("Content-Length", "0"),
                ("Content-Type", "text/plain"), ("Content-Encoding", "br"), ("Content-Range", "bytes 0-1/2"),
                ("Transfer-Encoding", "chunked"), ("Connection", "X-Hop"), ("X-Hop", "1"), ("Keep-Alive", "timeout=5"),
                ("X-Multi", "3"), ("ETag", "\"v1\""), ("Proxy-Authenticate", "Basic"), ("X-New", "n"), ("X-New", "m"),
            ]
        )
        let updated = CacheRules.updatedHead(stored, with: notModified)
        #expect(updated.status == .ok)
        let lines = updated.headerFields.map { "\($0.name.canonicalName): \($0.value)" }
        #expect(
            lines == [
                "content-type: text/html", "content-length: 10", "content-encoding: gzip", "etag: \"v1\"",
                "cache-control: max-age=60", "x-old: a", "x-multi: 3", "date: \(CacheFixture.t0Plus100)", "x-new: n",
                "x-new: m",
            ]
        )
    }

    /// Stored responses, a 304, and which of them it updates.
    struct SelectCase: Sendable, CustomTestStringConvertible {
        var name: String
        /// Each stored response's fields and response time (seconds after t0).
        var stored: [([(String, String)], Double)]
        var notModified: [(String, String)]
        var expected: [Int]
        var testDescription: String { self.name }
    }

    static let selectCases: [SelectCase] = [
        SelectCase(
            name: "strong tag: every strong match",
            stored: [
                ([("ETag", "\"a\"")], 0), ([("ETag", "\"b\"")], 1), ([("ETag", "W/\"a\"")], 2),
                ([("ETag", "\"a\"")], 3),
            ],
            notModified: [("ETag", "\"a\"")],
            expected: [0, 3]
        ),
        SelectCase(
            name: "strong tag without a match updates nothing, whatever Last-Modified says",
            stored: [([("ETag", "\"a\""), ("Last-Modified", CacheFixture.t0MinusHour)], 0)],
            notModified: [("ETag", "\"z\""), ("Last-Modified", CacheFixture.t0MinusHour)],
            expected: []
        ),
        SelectCase(
            name: "strong tag against a weak stored tag",
            stored: [([("ETag", "W/\"a\"")], 0)],
            notModified: [("ETag", "\"a\"")],
            expected: []
        ),
        SelectCase(
            name: "weak tag: the most recent weak match",
            stored: [([("ETag", "\"a\"")], 0), ([("ETag", "W/\"a\"")], 10), ([("ETag", "\"b\"")], 20)],
            notModified: [("ETag", "W/\"a\"")],
            expected: [1]
        ),
        SelectCase(
            name: "Last-Modified: the most recent match",
            stored: [
                ([("Last-Modified", CacheFixture.t0MinusHour)], 5), ([("Last-Modified", CacheFixture.t0Text)], 10),
                ([("Last-Modified", CacheFixture.t0MinusHour)], 1),
            ],
            notModified: [("Last-Modified", CacheFixture.t0MinusHour)],
            expected: [0]
        ),
        SelectCase(
            name: "Last-Modified compared as dates",
            stored: [([("Last-Modified", "Sunday, 06-Nov-94 07:49:37 GMT")], 0)],
            notModified: [("Last-Modified", CacheFixture.t0MinusHour)],
            expected: [0]
        ),
        SelectCase(
            name: "weak tag and Last-Modified must both agree",
            stored: [
                ([("ETag", "W/\"a\""), ("Last-Modified", CacheFixture.t0Text)], 5),
                ([("ETag", "W/\"a\""), ("Last-Modified", CacheFixture.t0MinusHour)], 1),
            ],
            notModified: [("ETag", "W/\"a\""), ("Last-Modified", CacheFixture.t0MinusHour)],
            expected: [1]
        ),
        SelectCase(
            name: "weak validators without a match",
            stored: [([("ETag", "\"b\"")], 0), ([], 1)],
            notModified: [("ETag", "W/\"a\"")],
            expected: []
        ),
        SelectCase(
            name: "no validators, one stored without any",
            stored: [([("Date", CacheFixture.t0Text)], 0)],
            notModified: [],
            expected: [0]
        ),
        SelectCase(
            name: "no validators, one stored with a tag",
            stored: [([("ETag", "\"a\"")], 0)],
            notModified: [],
            expected: []
        ),
        SelectCase(
            name: "no validators, two stored without any",
            stored: [([], 0), ([], 1)],
            notModified: [],
            expected: []
        ),
        SelectCase(
            name: "no validators, invalid stored tag",
            stored: [([("ETag", "abc")], 0)],
            notModified: [("ETag", "junk")],
            expected: [0]
        ),
        SelectCase(name: "nothing stored", stored: [], notModified: [("ETag", "\"a\"")], expected: []),
    ]

    // RFC 9111 §4.3.4; RFC 9110 §8.8.3.2 (strong and weak comparison).
    @Test(arguments: Self.selectCases)
    func selectForUpdateFollowsSection4_3_4(_ testCase: SelectCase) {
        let stored = testCase.stored.map { CacheFixture.stored(200, $0.0, requested: $0.1, received: $0.1) }
        let notModified = CacheFixture.response(304, testCase.notModified)
        #expect(CacheRules.selectForUpdate(stored, notModified: notModified) == testCase.expected)
    }

    /// An unsafe request's response and the URLs it invalidates.
    struct InvalidationCase: Sendable, CustomTestStringConvertible {
        var name: String
        var method: String = "POST"
        var status = 201
        var fields: [(String, String)] = []
        var expected: [String]
        var testDescription: String { self.name }
    }

    static let requestURL = "https://example.com/items?page=1"

    static let invalidationCases: [InvalidationCase] = [
        InvalidationCase(name: "POST 201: the target", expected: [Self.requestURL]),
        InvalidationCase(
            name: "Location and Content-Location of the same origin",
            fields: [("Location", "/items/7"), ("Content-Location", "https://example.com/items/7?x")],
            expected: [Self.requestURL, "https://example.com/items/7", "https://example.com/items/7?x"]
        ),
        InvalidationCase(
            name: "other origins are left alone",
            fields: [
                ("Location", "https://evil.example/x"), ("Location", "http://example.com/x"),
                ("Content-Location", "https://example.com:8443/c"), ("Content-Location", "//other.example/d"),
            ],
            expected: [Self.requestURL]
        ),
        InvalidationCase(
            name: "default port and host case are the same origin",
            fields: [("Location", "https://example.com:443/a"), ("Content-Location", "https://EXAMPLE.com/b")],
            expected: [Self.requestURL, "https://example.com:443/a", "https://EXAMPLE.com/b"]
        ),
        InvalidationCase(
            name: "fragments removed, repeats once",
            fields: [("Location", "/a#frag"), ("Content-Location", "/a"), ("Location", Self.requestURL)],
            expected: [Self.requestURL, "https://example.com/a"]
        ),
        InvalidationCase(name: "PUT 204", method: "PUT", status: 204, expected: [Self.requestURL]),
        InvalidationCase(name: "DELETE 200", method: "DELETE", status: 200, expected: [Self.requestURL]),
        InvalidationCase(name: "PATCH 302", method: "PATCH", status: 302, expected: [Self.requestURL]),
        InvalidationCase(name: "unknown method is unsafe", method: "PURGE", status: 200, expected: [Self.requestURL]),
        InvalidationCase(name: "POST 404", status: 404, fields: [("Location", "/a")], expected: []),
        InvalidationCase(name: "POST 500", status: 500, expected: []),
        InvalidationCase(name: "POST 100", status: 100, expected: []),
        InvalidationCase(name: "GET", method: "GET", status: 200, fields: [("Location", "/a")], expected: []),
        InvalidationCase(name: "HEAD", method: "HEAD", status: 200, expected: []),
        InvalidationCase(name: "OPTIONS", method: "OPTIONS", status: 200, expected: []),
        InvalidationCase(name: "TRACE", method: "TRACE", status: 200, expected: []),
    ]

    // RFC 9111 §4.4, RFC 9110 §4.3.1 (origin), §9.2.1 (safe methods).
    @Test(arguments: Self.invalidationCases)
    func invalidatedURLsFollowSection4_4(_ testCase: InvalidationCase) throws {
        let method = try #require(HTTPRequest.Method(testCase.method))
        let requestURL = try #require(URL(string: Self.requestURL))
        let urls = CacheRules.invalidatedURLs(
            request: CacheFixture.request(method),
            response: CacheFixture.response(testCase.status, testCase.fields),
            requestURL: requestURL
        )
        #expect(urls.map(\.absoluteString) == testCase.expected)
    }

    @Test func invalidatedURLsKeepOnlyTheTargetWithoutAnOrigin() throws {
        let requestURL = try #require(URL(string: "/relative"))
        let response = CacheFixture.response(200, [("Location", "/a")])
        let urls = CacheRules.invalidatedURLs(
            request: CacheFixture.request(.post),
            response: response,
            requestURL: requestURL
        )
        #expect(urls == [requestURL])
    }
}
