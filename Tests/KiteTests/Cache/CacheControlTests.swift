import HTTPTypes
import Testing

@testable import Kite

/// `Cache-Control` parsing (RFC 9111 §5.2, lists per RFC 9110 §5.6).
struct CacheControlTests {
    /// One `Cache-Control` value and the delta-seconds directive it should yield.
    struct SecondsCase: Sendable, CustomTestStringConvertible {
        var value: String
        var expected: Int?
        var testDescription: String { "Cache-Control: \(self.value) → \(self.expected.map(String.init) ?? "nil")" }
    }

    // RFC 9111 §1.2.2 (delta-seconds, capped at 2147483648), §4.2.1 (invalid or duplicated freshness is stale),
    // §5.2 (both token and quoted-string arguments are accepted).
    @Test(arguments: [
        SecondsCase(value: "max-age=60", expected: 60),
        SecondsCase(value: "MAX-AGE=60", expected: 60),
        SecondsCase(value: "Max-Age=\"60\"", expected: 60),
        SecondsCase(value: "max-age=\"6\\0\"", expected: 60),
        SecondsCase(value: "max-age=0060", expected: 60),
        SecondsCase(value: "max-age=0", expected: 0),
        SecondsCase(value: "max-age = 60", expected: 60),
        SecondsCase(value: "max-age=2147483647", expected: 2_147_483_647),
        SecondsCase(value: "max-age=2147483649", expected: CacheControl.deltaSecondsLimit),
        SecondsCase(value: "max-age=99999999999999999999", expected: CacheControl.deltaSecondsLimit),
        SecondsCase(value: "max-age=-5", expected: 0),
        SecondsCase(value: "max-age=abc", expected: 0),
        SecondsCase(value: "max-age=1e3", expected: 0),
        SecondsCase(value: "max-age=60.5", expected: 0),
        SecondsCase(value: "max-age=", expected: 0),
        SecondsCase(value: "max-age", expected: 0),
        SecondsCase(value: "max-age=\"\"", expected: 0),
        SecondsCase(value: "max-age=\"60", expected: 0),
        SecondsCase(value: "max-age=60 junk", expected: 0),
        SecondsCase(value: "max-age=\"60\"x", expected: 0),
        SecondsCase(value: "max-age=60, max-age=60", expected: 60),
        SecondsCase(value: "max-age=60, max-age=30", expected: 0),
        SecondsCase(value: "max-age=60, max-age=abc", expected: 0),
        SecondsCase(value: "max-age=60, max-age=\"60\"", expected: 60),
        SecondsCase(value: "no-store", expected: nil),
    ])
    func maxAgeIsReadMostRestrictively(_ testCase: SecondsCase) {
        #expect(CacheFixture.directives(testCase.value).maxAge == testCase.expected)
    }

    // RFC 9111 §5.2.2.10, read like max-age (§4.2.1).
    @Test(arguments: [
        SecondsCase(value: "s-maxage=30", expected: 30),
        SecondsCase(value: "s-maxage=\"30\"", expected: 30),
        SecondsCase(value: "s-maxage=-1", expected: 0),
        SecondsCase(value: "s-maxage=30, s-maxage=40", expected: 0),
        SecondsCase(value: "s-maxage=99999999999999999999", expected: CacheControl.deltaSecondsLimit),
        SecondsCase(value: "max-age=30", expected: nil),
    ])
    func sharedMaxAgeIsReadLikeMaxAge(_ testCase: SecondsCase) {
        #expect(CacheFixture.directives(testCase.value).sharedMaxAge == testCase.expected)
    }

    // RFC 9111 §5.2.1.3: invalid values are ignored, the largest valid one is kept.
    @Test(arguments: [
        SecondsCase(value: "min-fresh=10", expected: 10),
        SecondsCase(value: "min-fresh=10, min-fresh=20", expected: 20),
        SecondsCase(value: "min-fresh=20, min-fresh=10", expected: 20),
        SecondsCase(value: "min-fresh=abc", expected: nil),
        SecondsCase(value: "min-fresh=abc, min-fresh=5", expected: 5),
        SecondsCase(value: "min-fresh", expected: nil),
        SecondsCase(value: "min-fresh=-5", expected: nil),
    ])
    func minFreshKeepsTheLargestValidValue(_ testCase: SecondsCase) {
        #expect(CacheFixture.directives(testCase.value).minFresh == testCase.expected)
    }

    // RFC 9111 §5.2.1.2: max-stale without a value accepts any staleness; the smallest value wins; invalid cancels.
    @Test(arguments: [
        SecondsCase(value: "max-stale", expected: Int.max),
        SecondsCase(value: "max-stale=30", expected: 30),
        SecondsCase(value: "max-stale=\"30\"", expected: 30),
        SecondsCase(value: "max-stale=30, max-stale=10", expected: 10),
        SecondsCase(value: "max-stale, max-stale=10", expected: 10),
        SecondsCase(value: "max-stale=abc", expected: nil),
        SecondsCase(value: "max-stale=10, max-stale=abc", expected: nil),
        SecondsCase(value: "max-stale=", expected: nil),
        SecondsCase(value: "max-stale=99999999999999999999", expected: CacheControl.deltaSecondsLimit),
    ])
    func maxStaleAcceptsAnyStalenessWithoutAValue(_ testCase: SecondsCase) {
        #expect(CacheFixture.directives(testCase.value).maxStale == testCase.expected)
    }

    // RFC 5861 §3: a value is required; invalid cancels; the smallest of several wins.
    @Test(arguments: [
        SecondsCase(value: "stale-while-revalidate=30", expected: 30),
        SecondsCase(value: "stale-while-revalidate", expected: nil),
        SecondsCase(value: "stale-while-revalidate=-1", expected: nil),
        SecondsCase(value: "stale-while-revalidate=30, stale-while-revalidate=10", expected: 10),
        SecondsCase(value: "stale-while-revalidate=30, stale-while-revalidate=x", expected: nil),
    ])
    func staleWhileRevalidateNeedsAValidValue(_ testCase: SecondsCase) {
        #expect(CacheFixture.directives(testCase.value).staleWhileRevalidate == testCase.expected)
    }

    // RFC 5861 §4: read like stale-while-revalidate.
    @Test(arguments: [
        SecondsCase(value: "stale-if-error=600", expected: 600),
        SecondsCase(value: "stale-if-error", expected: nil),
        SecondsCase(value: "stale-if-error=1e3", expected: nil),
        SecondsCase(value: "stale-if-error=60, stale-if-error=600", expected: 60),
        SecondsCase(value: "stale-if-error=99999999999", expected: CacheControl.deltaSecondsLimit),
    ])
    func staleIfErrorNeedsAValidValue(_ testCase: SecondsCase) {
        #expect(CacheFixture.directives(testCase.value).staleIfError == testCase.expected)
    }

    // RFC 9111 §4.2.1 and §5.2: the directives of several field lines add up, and conflicts across lines count.
    @Test func severalFieldLinesAreOneList() {
        let combined = CacheFixture.directives("max-age=60", "no-store", "max-age=60", "private=\"x-a\"")
        #expect(combined.maxAge == 60)
        #expect(combined.noStore)
        #expect(combined.privateFields == ["x-a"])
        #expect(CacheFixture.directives("max-age=60", "max-age=120").maxAge == 0)
    }

    /// One `Cache-Control` value and the field-name directives it should yield.
    struct FieldNamesCase: Sendable, CustomTestStringConvertible {
        var value: String
        var unqualified: Bool
        var names: [String]
        var testDescription: String { "Cache-Control: \(self.value)" }
    }

    // RFC 9111 §5.2.2.4: no-cache with or without field names; an empty or unreadable list is the unqualified form.
    @Test(arguments: [
        FieldNamesCase(value: "no-cache", unqualified: true, names: []),
        FieldNamesCase(value: "No-Cache=\"Set-Cookie, X-Foo\"", unqualified: false, names: ["set-cookie", "x-foo"]),
        FieldNamesCase(value: "no-cache=set-cookie", unqualified: false, names: ["set-cookie"]),
        FieldNamesCase(value: "no-cache=\"a,, a , b\"", unqualified: false, names: ["a", "b"]),
        FieldNamesCase(value: "no-cache=\"\"", unqualified: true, names: []),
        FieldNamesCase(value: "no-cache=", unqualified: true, names: []),
        FieldNamesCase(value: "no-cache=\"a", unqualified: true, names: []),
        FieldNamesCase(value: "no-cache, no-cache=\"a\"", unqualified: true, names: ["a"]),
        FieldNamesCase(value: "max-age=5", unqualified: false, names: []),
    ])
    func noCacheListsLowercasedFieldNames(_ testCase: FieldNamesCase) {
        let directives = CacheFixture.directives(testCase.value)
        #expect(directives.noCache == testCase.unqualified)
        #expect(directives.noCacheFields == testCase.names)
    }

    // RFC 9111 §5.2.2.7: private is read like no-cache.
    @Test(arguments: [
        FieldNamesCase(value: "private", unqualified: true, names: []),
        FieldNamesCase(value: "PRIVATE=\"Set-Cookie,X-User\"", unqualified: false, names: ["set-cookie", "x-user"]),
        FieldNamesCase(value: "private=\"\"", unqualified: true, names: []),
        FieldNamesCase(value: "public", unqualified: false, names: []),
    ])
    func privateListsLowercasedFieldNames(_ testCase: FieldNamesCase) {
        let directives = CacheFixture.directives(testCase.value)
        #expect(directives.isPrivate == testCase.unqualified)
        #expect(directives.privateFields == testCase.names)
    }

    // RFC 9110 §5.6.4: a comma or an escaped quote inside a quoted string does not end the element.
    @Test func quotedStringsKeepTheirCommas() {
        #expect(CacheFixture.directives("foo=\"a, max-age=5\", max-age=10").maxAge == 10)
        #expect(CacheFixture.directives("foo=\"a\\\", max-age=5\", max-age=10").maxAge == 10)
        #expect(CacheFixture.directives("no-cache=\"a, b\", private=\"c\"").noCacheFields == ["a", "b"])
    }

    // RFC 9110 §5.6.1: empty elements and whitespace are skipped; elements without a token name are ignored.
    @Test func emptyElementsAndWhitespaceAreSkipped() {
        let directives = CacheFixture.directives(", ,\tmax-age=5 ,, no-store ,", "=7, \"x\", (y), must-revalidate")
        #expect(directives.maxAge == 5)
        #expect(directives.noStore)
        #expect(directives.mustRevalidate)
    }

    // RFC 9110 §5.6.3: only SP and HTAB are trimmed, and non-ASCII text at either end survives.
    @Test(arguments: [("  é\t", "é"), ("\t🙂 ", "🙂"), (" a\u{301} ", "a\u{301}"), (" \t ", ""), ("x", "x"), ("", "")])
    func trimmingRemovesOnlyOptionalWhitespace(_ text: String, _ expected: String) {
        #expect(CacheControl.trimmed(Substring(text)) == Substring(expected))
    }

    // RFC 9111 §5.2.3: unknown directives are ignored.
    @Test func unknownDirectivesAreIgnored() {
        let directives = CacheFixture.directives("foo, bar=\"baz, qux\", community=\"UCI\"")
        #expect(directives.isEmpty)
        #expect(CacheControl(HTTPFields()).isEmpty)
        #expect(!CacheFixture.directives("max-age=0").isEmpty)
    }

    /// A boolean directive and whether it is set.
    struct FlagCase: Sendable, CustomTestStringConvertible {
        var value: String
        var flag: @Sendable (CacheControl) -> Bool
        var expected: Bool
        var testDescription: String { "Cache-Control: \(self.value) → \(self.expected)" }
    }

    // RFC 9111 §5.2.1, §5.2.2, RFC 8246: names are case-insensitive; directives that restrict count even with an
    // argument, directives that permit only without one.
    @Test(arguments: [
        FlagCase(value: "no-store", flag: { $0.noStore }, expected: true),
        FlagCase(value: "NO-STORE", flag: { $0.noStore }, expected: true),
        FlagCase(value: "no-store=1", flag: { $0.noStore }, expected: true),
        FlagCase(value: "no-transform", flag: { $0.noTransform }, expected: true),
        FlagCase(value: "only-if-cached", flag: { $0.onlyIfCached }, expected: true),
        FlagCase(value: "must-revalidate", flag: { $0.mustRevalidate }, expected: true),
        FlagCase(value: "must-revalidate=\"x\"", flag: { $0.mustRevalidate }, expected: true),
        FlagCase(value: "proxy-revalidate", flag: { $0.proxyRevalidate }, expected: true),
        FlagCase(value: "public", flag: { $0.isPublic }, expected: true),
        FlagCase(value: "public=1", flag: { $0.isPublic }, expected: false),
        FlagCase(value: "must-understand", flag: { $0.mustUnderstand }, expected: true),
        FlagCase(value: "must-understand=yes", flag: { $0.mustUnderstand }, expected: false),
        FlagCase(value: "immutable", flag: { $0.immutable }, expected: true),
        FlagCase(value: "immutable=yes", flag: { $0.immutable }, expected: false),
        FlagCase(value: "no-storage", flag: { $0.noStore }, expected: false),
        FlagCase(value: "x-no-store", flag: { $0.noStore }, expected: false),
    ])
    func booleanDirectivesAreRecognised(_ testCase: FlagCase) {
        #expect(testCase.flag(CacheFixture.directives(testCase.value)) == testCase.expected)
    }

    /// Request fields and whether `Pragma` asks for no-cache.
    struct PragmaCase: Sendable, CustomTestStringConvertible {
        var fields: [(String, String)]
        var expected: Bool
        var testDescription: String { "\(self.fields) → \(self.expected)" }
    }

    // RFC 9111 §5.4: Pragma no-cache counts only without Cache-Control, and only as a whole list member.
    @Test(arguments: [
        PragmaCase(fields: [("Pragma", "no-cache")], expected: true),
        PragmaCase(fields: [("Pragma", "No-Cache")], expected: true),
        PragmaCase(fields: [("Pragma", "foo, no-cache")], expected: true),
        PragmaCase(fields: [("Pragma", "foo"), ("Pragma", "no-cache")], expected: true),
        PragmaCase(fields: [("Pragma", "no-cache-x")], expected: false),
        PragmaCase(fields: [("Pragma", "no-cache"), ("Cache-Control", "max-age=5")], expected: false),
        PragmaCase(fields: [("Pragma", "no-cache"), ("Cache-Control", "foo")], expected: false),
        PragmaCase(fields: [], expected: false),
    ])
    func pragmaNoCacheAppliesOnlyWithoutCacheControl(_ testCase: PragmaCase) {
        #expect(CacheControl.pragmaNoCache(CacheFixture.fields(testCase.fields)) == testCase.expected)
    }
}
