import Foundation
import Testing

@testable import Kite

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `Set-Cookie` parsing and the storage model's per-cookie rules (RFC 6265bis §5.1, §5.6, §5.7).
@Suite struct CookieParsingTests {
    /// 2025-01-01T00:00:00Z.
    static let now = Date(timeIntervalSince1970: 1_735_689_600)

    private func parse(
        _ header: String,
        from url: String = "https://www.example.com/a/b/c",
        now: Date = CookieParsingTests.now
    ) throws -> Result<Cookie, Cookie.Refusal> {
        let parsed = try #require(URL(string: url))
        let target = try #require(Cookie.Target(parsed))
        return Cookie.parse(header, from: target, now: now)
    }

    private func cookie(
        _ header: String,
        from url: String = "https://www.example.com/a/b/c",
        now: Date = CookieParsingTests.now
    ) throws -> Cookie {
        try self.parse(header, from: url, now: now).get()
    }

    private func date(_ text: String) -> Date? {
        CookieDate.parse(Array(text.utf8))
    }

    // MARK: - Name and value

    @Test(arguments: [
        ("a=b", "a", "b"),
        ("  a  =  b c  ", "a", "b c"),
        ("\ta=b\t; Path=/", "a", "b"),
        ("novalue", "", "novalue"),
        ("=v", "", "v"),
        ("a=", "a", ""),
        ("a=b=c", "a", "b=c"),
        ("a=\"x y\"", "a", "\"x y\""),
        ("a=b\tc", "a", "b\tc"),
        ("ü=ö", "ü", "ö"),
    ])
    func nameAndValueSplitAtTheFirstEquals(header: String, name: String, value: String) throws {
        let cookie = try self.cookie(header)
        #expect(cookie.name == name)
        #expect(cookie.value == value)
    }

    @Test func controlCharactersOtherThanTabRefuseTheHeader() throws {
        #expect(try self.parse("a=b\u{01}") == .failure(.controlCharacter))
        #expect(try self.parse("a=b\nc") == .failure(.controlCharacter))
        #expect(try self.parse("a=b; Path=/\r") == .failure(.controlCharacter))
        #expect(try self.parse("a=b\u{7F}") == .failure(.controlCharacter))
        #expect(try self.cookie("a=b\tc").value == "b\tc")
    }

    @Test func emptyNameAndValueAreRefused() throws {
        #expect(try self.parse("=") == .failure(.empty))
        #expect(try self.parse("  ; Path=/") == .failure(.empty))
    }

    @Test func nameAndValueOver4096BytesAreRefused() throws {
        let fits = "n=" + String(repeating: "v", count: 4095)
        #expect(try self.cookie(fits).value.utf8.count == 4095)
        #expect(try self.parse("n=" + String(repeating: "v", count: 4096)) == .failure(.tooLarge))
        #expect(
            try self.parse(String(repeating: "n", count: 2048) + "=" + String(repeating: "v", count: 2049))
                == .failure(.tooLarge)
        )
        // Multi-byte characters count in bytes: 2048 two-byte characters are 4096 bytes, one more name byte passes.
        #expect(try self.parse("n=" + String(repeating: "é", count: 2048)) == .failure(.tooLarge))
        #expect(try self.cookie("=" + String(repeating: "é", count: 2048)).value.utf8.count == 4096)
    }

    @Test func attributeValuesOver1024BytesAreIgnored() throws {
        let longPath = "/" + String(repeating: "p", count: 1024)
        #expect(try self.cookie("a=1; Path=\(longPath)").path == "/a/b", "1025 bytes: ignored")
        let path = "/" + String(repeating: "p", count: 1023)
        #expect(try self.cookie("a=1; Path=\(path)").path == path, "1024 bytes: kept")
    }

    @Test func attributeNamesAreCaseInsensitiveAndUnknownOnesIgnored() throws {
        let cookie = try self.cookie("a=1; SECURE; httponly; pAtH=/x; Comment=hello; Priority=High; ;;")
        #expect(cookie.isSecure)
        #expect(cookie.isHTTPOnly)
        #expect(cookie.path == "/x")
    }

    // MARK: - Domain

    @Test(arguments: [
        // (request URL, Set-Cookie, expected domain, expected host-only)
        ("https://www.example.com/", "a=1", "www.example.com", true),
        ("https://WWW.Example.COM/", "a=1", "www.example.com", true),
        ("https://www.example.com/", "a=1; Domain=www.example.com", "www.example.com", false),
        ("https://www.example.com/", "a=1; Domain=example.com", "example.com", false),
        ("https://www.example.com/", "a=1; Domain=.example.com", "example.com", false),
        ("https://www.example.com/", "a=1; Domain=EXAMPLE.com", "example.com", false),
        ("https://www.example.com/", "a=1; Domain=", "www.example.com", true),
        ("https://www.example.com/", "a=1; Domain=other.com; Domain=example.com", "example.com", false),
        ("https://www.example.co.uk/", "a=1; Domain=example.co.uk", "example.co.uk", false),
        ("https://192.168.1.10/", "a=1", "192.168.1.10", true),
        ("https://192.168.1.10/", "a=1; Domain=192.168.1.10", "192.168.1.10", true),
        ("https://[::1]:8443/", "a=1", "::1", true),
        ("https://co.uk/", "a=1; Domain=co.uk", "co.uk", true),
        ("http://localhost:8080/", "a=1; Domain=localhost", "localhost", true),
    ])
    func domainAttributeSetsDomainAndHostOnly(url: String, header: String, domain: String, hostOnly: Bool) throws {
        let cookie = try self.cookie(header, from: url)
        #expect(cookie.domain == domain)
        #expect(cookie.isHostOnly == hostOnly)
    }

    @Test(arguments: [
        ("https://www.example.com/", "a=1; Domain=sub.www.example.com"),
        ("https://www.example.com/", "a=1; Domain=other.com"),
        ("https://www.example.com/", "a=1; Domain=ample.com"),
        ("https://www.example.com/", "a=1; Domain=xwww.example.com"),
        ("https://www.example.com/", "a=1; Domain=..example.com"),
        ("https://www.example.com/", "a=1; Domain=example.com; Domain=other.com"),
        ("https://192.168.1.10/", "a=1; Domain=168.1.10"),
        ("https://192.168.1.10/", "a=1; Domain=192.168.1.1"),
    ])
    func domainTheHostDoesNotMatchIsRefused(url: String, header: String) throws {
        #expect(try self.parse(header, from: url) == .failure(.domainMismatch))
    }

    @Test(arguments: [
        ("https://www.example.co.uk/", "a=1; Domain=co.uk"),
        ("https://www.example.co.uk/", "a=1; Domain=.co.uk"),
        ("https://www.example.co.uk/", "a=1; Domain=uk"),
        ("https://www.example.com/", "a=1; Domain=com"),
        ("https://alice.github.io/", "a=1; Domain=github.io"),
        ("https://bucket.s3.amazonaws.com/", "a=1; Domain=s3.amazonaws.com"),
        ("https://shop.example.com.au/", "a=1; Domain=com.au"),
        ("https://app.localhost/", "a=1; Domain=localhost"),
    ])
    func publicSuffixDomainsAreRefused(url: String, header: String) throws {
        #expect(try self.parse(header, from: url) == .failure(.publicSuffix))
    }

    @Test func publicSuffixListCoversSingleLabelsAndTheNamedMultiLabelOnes() {
        for suffix in [
            "com", "uk", "dev", "zz-anything", "co.uk", "org.uk", "ac.uk", "gov.uk", "com.au", "net.au", "org.au",
            "co.jp", "ne.jp", "or.jp", "com.br", "com.cn", "co.nz", "co.in", "github.io", "herokuapp.com",
            "appspot.com", "blogspot.com", "s3.amazonaws.com", "cloudfront.net", "azurewebsites.net",
        ] {
            #expect(PublicSuffixes.contains(suffix), "\(suffix)")
        }
        for domain in ["example.com", "example.co.uk", "amazonaws.com", "x.github.io", "www.co.uk", ""] {
            #expect(!PublicSuffixes.contains(domain), "\(domain)")
        }
    }

    @Test func nonASCIIDomainIsRefused() throws {
        #expect(
            try self.parse("a=1; Domain=exämple.com", from: "https://www.example.com/") == .failure(.nonASCIIDomain)
        )
    }

    @Test(arguments: [
        ("www.example.com", "www.example.com", false, true),
        ("www.example.com", "example.com", false, true),
        ("a.b.example.com", "example.com", false, true),
        ("example.com", "www.example.com", false, false),
        ("notexample.com", "example.com", false, false),
        ("example.com.evil.org", "example.com", false, false),
        ("192.168.1.10", "192.168.1.10", true, true),
        ("10.192.168.1", "192.168.1", true, false),
    ])
    func domainMatching(string: String, domain: String, isIP: Bool, matches: Bool) {
        #expect(Cookie.domainMatches(string, domain, hostIsIPAddress: isIP) == matches)
    }

    @Test func ipAddressHostsAreRecognised() {
        for host in ["192.168.1.10", "127.0.0.1", "::1", "fe80::1", "10.0.0.0x1f", "1.2.3.4"] {
            #expect(Cookie.Target.isIPAddress(host), "\(host)")
        }
        for host in ["example.com", "localhost", "1.2.3.example", "0x.example", "127.evil.com"] {
            #expect(!Cookie.Target.isIPAddress(host), "\(host)")
        }
    }

    // MARK: - Path

    @Test(arguments: [
        ("https://example.com/a/b/c", "/a/b"),
        ("https://example.com/a/b/c?x=/y/z", "/a/b"),
        ("https://example.com/a/", "/a"),
        ("https://example.com/a", "/"),
        ("https://example.com/", "/"),
        ("https://example.com", "/"),
        ("https://example.com/a%2Fb/c", "/a%2Fb"),
    ])
    func defaultPathIsTheRequestPathUpToItsLastSlash(url: String, path: String) throws {
        #expect(try self.cookie("a=1", from: url).path == path)
        #expect(try self.cookie("a=1; Path=", from: url).path == path, "an empty Path gives the default")
        #expect(try self.cookie("a=1; Path=docs", from: url).path == path, "a relative Path gives the default")
    }

    @Test func pathAttributeWinsAndTheLastOneCounts() throws {
        #expect(try self.cookie("a=1; Path=/docs").path == "/docs")
        #expect(try self.cookie("a=1; Path=/docs; Path=/api").path == "/api")
        #expect(try self.cookie("a=1; Path=/docs; Path=x").path == "/a/b")
    }

    @Test(arguments: [
        ("/docs", "/docs", true),
        ("/docs/", "/docs", true),
        ("/docs/web", "/docs", true),
        ("/docs/web/page", "/docs", true),
        ("/docsets", "/docs", false),
        ("/doc", "/docs", false),
        ("/", "/docs", false),
        ("/docs/web", "/docs/", true),
        ("/docs", "/docs/", false),
        ("/anything", "/", true),
        ("/DOCS", "/docs", false),
    ])
    func pathMatching(requestPath: String, cookiePath: String, matches: Bool) {
        #expect(Cookie.pathMatches(requestPath, cookiePath) == matches)
    }

    // MARK: - Secure, HttpOnly, SameSite

    @Test(arguments: [
        ("https://example.com/", true),
        ("wss://example.com/", true),
        ("http://example.com/", false),
        ("ws://example.com/", false),
        ("http://localhost:8080/", true),
        ("http://app.localhost/", true),
        ("http://127.0.0.1:8080/", true),
        ("http://127.1.2.3/", true),
        ("http://[::1]:8080/", true),
        ("http://127.example.com/", false),
        ("http://192.168.1.1/", false),
    ])
    func secureCookiesComeOnlyFromSecureOrigins(url: String, accepted: Bool) throws {
        let result = try self.parse("a=1; Secure", from: url)
        if accepted {
            #expect(try result.get().isSecure)
        } else {
            #expect(result == .failure(.secureFromInsecureOrigin))
        }
        #expect(try !self.cookie("a=1", from: url).isSecure)
    }

    @Test func httpOnlyIsKept() throws {
        #expect(try self.cookie("a=1; HttpOnly").isHTTPOnly)
        #expect(try self.cookie("a=1; HttpOnly=whatever").isHTTPOnly)
        #expect(try !self.cookie("a=1").isHTTPOnly)
    }

    @Test(arguments: [
        ("a=1; SameSite=Strict", Cookie.SameSite.strict),
        ("a=1; SameSite=strict", Cookie.SameSite.strict),
        ("a=1; SameSite=LAX", Cookie.SameSite.lax),
        ("a=1; samesite=None", Cookie.SameSite.none),
        ("a=1; SameSite=Lax; SameSite=Strict", Cookie.SameSite.strict),
    ])
    func sameSiteIsParsed(header: String, sameSite: Cookie.SameSite) throws {
        #expect(try self.cookie(header).sameSite == sameSite)
    }

    @Test(arguments: [
        "a=1", "a=1; SameSite", "a=1; SameSite=", "a=1; SameSite=Sometimes", "a=1; SameSite=Strictly",
        "a=1; SameSite=Strict; SameSite=bogus",
    ])
    func invalidSameSiteLeavesItUnset(header: String) throws {
        #expect(try self.cookie(header).sameSite == nil)
    }

    @Test func sameSiteNoneWithoutSecureIsStillStored() throws {
        let cookie = try self.cookie("a=1; SameSite=None", from: "http://example.com/")
        #expect(cookie.sameSite == Cookie.SameSite.none)
        #expect(!cookie.isSecure)
    }

    // MARK: - Prefixes

    @Test func securePrefixNeedsSecure() throws {
        #expect(try self.cookie("__Secure-a=1; Secure").name == "__Secure-a")
        #expect(try self.cookie("__Secure-a=1; Secure; Domain=example.com").domain == "example.com")
        #expect(try self.parse("__Secure-a=1") == .failure(.prefixViolated))
        #expect(try self.parse("__secure-a=1") == .failure(.prefixViolated), "the prefix is case-insensitive")
        #expect(
            try self.parse("__Secure-a=1; Secure", from: "http://example.com/") == .failure(.secureFromInsecureOrigin)
        )
    }

    @Test func hostPrefixNeedsSecureNoDomainAndRootPath() throws {
        let cookie = try self.cookie("__Host-a=1; Secure; Path=/")
        #expect(cookie.isHostOnly)
        #expect(cookie.path == "/")
        #expect(try self.parse("__Host-a=1; Path=/") == .failure(.prefixViolated))
        #expect(try self.parse("__Host-a=1; Secure") == .failure(.prefixViolated), "Path=/ must be sent")
        #expect(try self.parse("__Host-a=1; Secure; Path=/x") == .failure(.prefixViolated))
        #expect(try self.parse("__Host-a=1; Secure; Path=/; Domain=example.com") == .failure(.prefixViolated))
        #expect(try self.parse("__Host-a=1; Secure; Path=/; Domain=www.example.com") == .failure(.prefixViolated))
        #expect(try self.parse("__HOST-a=1; Secure") == .failure(.prefixViolated))
    }

    @Test func namelessCookiesMayNotLookPrefixed() throws {
        #expect(try self.parse("__Host-a; Secure; Path=/") == .failure(.prefixViolated))
        #expect(try self.parse("=__secure-a; Secure") == .failure(.prefixViolated))
        #expect(try self.cookie("__Hosted").value == "__Hosted")
    }

    // MARK: - Dates and expiry

    @Test(arguments: [
        // RFC 1123, the preferred form.
        ("Sun, 06 Nov 1994 08:49:37 GMT", 784_111_777),
        // RFC 850, two-digit year.
        ("Sunday, 06-Nov-94 08:49:37 GMT", 784_111_777),
        // asctime.
        ("Sun Nov  6 08:49:37 1994", 784_111_777),
        // Netscape's form with a four-digit year.
        ("Sun, 06-Nov-1994 08:49:37 GMT", 784_111_777),
        // Variations the algorithm takes.
        ("06 Nov 1994 08:49:37", 784_111_777),
        ("sun, 6 nov 1994 8:49:37 gmt", 784_111_777),
        ("Sun, 06 November 1994 08:49:37 GMT", 784_111_777),
        ("1994 Nov 06 08:49:37", 784_111_777),
        ("Thu, 01 Jan 1970 00:00:00 GMT", 0),
        ("Thu, 01-Jan-70 00:00:01 GMT", 1),
        ("Tue, 19 Jan 2038 03:14:08 GMT", 2_147_483_648),
        ("Wed, 01-Jan-69 00:00:00 GMT", 3_124_224_000),
        ("Sat, 29 Feb 2020 12:00:00 GMT", 1_582_977_600),
        ("Mon, 01 Jan 1601 00:00:00 GMT", -11_644_473_600),
    ])
    func cookieDatesParse(text: String, seconds: Int) {
        #expect(self.date(text) == Date(timeIntervalSince1970: TimeInterval(seconds)))
    }

    @Test(arguments: [
        "", "garbage", "Sun, 06 Nov 1994", "06 Nov 1994 08:49", "Sun, 06 Nov 08:49:37 GMT", "Sun, Nov 1994 08:49:37",
        "Sun, 32 Nov 1994 08:49:37 GMT", "Sun, 00 Nov 1994 08:49:37 GMT", "Mon, 31 Feb 2025 10:00:00 GMT",
        "Fri, 29 Feb 2019 10:00:00 GMT", "Sun, 06 Nov 1600 08:49:37 GMT", "Sun, 06 Nov 1994 24:00:00 GMT",
        "Sun, 06 Nov 1994 08:60:00 GMT", "Sun, 06 Nov 1994 08:49:60 GMT", "Sun, 06 Nov 1994 008:49:37 GMT",
        "Sun, 06 Nox 1994 08:49:37 GMT",
    ])
    func invalidCookieDatesFail(text: String) {
        #expect(self.date(text) == nil)
    }

    @Test func expiresSetsTheExpiryAndAnInvalidOneIsIgnored() throws {
        let expires = "Wed, 01 Jan 2025 01:00:00 GMT"
        #expect(try self.cookie("a=1; Expires=\(expires)").expires == Self.now.addingTimeInterval(3600))
        #expect(try self.cookie("a=1; Expires=soon").expires == nil)
        #expect(try self.cookie("a=1; Expires=\(expires); Expires=soon").expires == Self.now.addingTimeInterval(3600))
        #expect(try self.cookie("a=1").expires == nil, "no expiry: a session cookie")
    }

    @Test func maxAgeWinsOverExpiresInEitherOrder() throws {
        let expires = "Expires=Wed, 01 Jan 2025 01:00:00 GMT"
        #expect(try self.cookie("a=1; Max-Age=60; \(expires)").expires == Self.now.addingTimeInterval(60))
        #expect(try self.cookie("a=1; \(expires); Max-Age=60").expires == Self.now.addingTimeInterval(60))
        #expect(try self.cookie("a=1; Max-Age=60; Max-Age=120").expires == Self.now.addingTimeInterval(120))
    }

    @Test func zeroOrNegativeMaxAgeExpiresAtOnce() throws {
        for header in ["a=1; Max-Age=0", "a=1; Max-Age=-1", "a=1; Max-Age=-99999999999999999999", "a=1; Max-Age=-0"] {
            let cookie = try self.cookie(header)
            #expect(cookie.expires == Date.distantPast, "\(header)")
            #expect(cookie.isExpired(at: Self.now), "\(header)")
        }
    }

    @Test func invalidMaxAgeIsIgnored() throws {
        let expires = "Expires=Wed, 01 Jan 2025 01:00:00 GMT"
        for maxAge in ["+60", "6O", "", "-", "1.5", " 60x", "0x10"] {
            #expect(try self.cookie("a=1; Max-Age=\(maxAge); \(expires)").expires == Self.now.addingTimeInterval(3600))
        }
    }

    @Test func expiryIsCappedAt400Days() throws {
        let cap = Self.now.addingTimeInterval(400 * 86_400)
        #expect(try self.cookie("a=1; Max-Age=99999999999999999999999").expires == cap)
        #expect(try self.cookie("a=1; Max-Age=34560000").expires == cap)
        #expect(try self.cookie("a=1; Max-Age=34559999").expires == cap.addingTimeInterval(-1))
        #expect(try self.cookie("a=1; Expires=Fri, 01 Jan 2100 00:00:00 GMT").expires == cap)
    }

    @Test func pastExpiresGivesAnExpiredCookie() throws {
        let cookie = try self.cookie("a=1; Expires=Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(cookie.expires == Date(timeIntervalSince1970: 0))
        #expect(cookie.isExpired(at: Self.now))
    }

    // MARK: - The public initialiser

    @Test func publicInitialiserAcceptsAndRefuses() throws {
        let url = try #require(URL(string: "https://www.example.com/docs/intro"))
        let cookie = try #require(
            Cookie(setCookie: "lang=en; Domain=.example.com; Max-Age=86400; SameSite=Lax", for: url, now: Self.now)
        )
        #expect(
            cookie
                == Cookie(
                    name: "lang",
                    value: "en",
                    domain: "example.com",
                    path: "/docs",
                    isHostOnly: false,
                    expires: Self.now.addingTimeInterval(86_400),
                    sameSite: .lax,
                    creationTime: Self.now,
                    lastAccessTime: Self.now
                )
        )
        #expect(Cookie(setCookie: "a=1; Domain=other.com", for: url) == nil)
        #expect(Cookie(setCookie: "a=1", for: try #require(URL(string: "file:///tmp/x"))) == nil, "no host")
    }

    @Test func handMadeCookiesAreCanonical() {
        let cookie = Cookie(name: "a", value: "1", domain: ".Example.COM", path: "relative", creationTime: Self.now)
        #expect(cookie.domain == "example.com")
        #expect(cookie.path == "/")
        #expect(cookie.lastAccessTime == Self.now)
        #expect(!cookie.isPersistent)
        #expect(!cookie.isExpired(at: .distantFuture))
    }

    // MARK: - HTTPCookie

    @Test func httpCookieRoundTripKeepsTheFields() throws {
        let expires = Date(timeIntervalSince1970: 1_800_000_000)
        let cookies = [
            Cookie(
                name: "sid",
                value: "abc",
                domain: "example.com",
                path: "/app",
                isHostOnly: false,
                expires: expires,
                isSecure: true,
                isHTTPOnly: true,
                creationTime: Self.now
            ),
            Cookie(name: "theme", value: "dark", domain: "www.example.com", creationTime: Self.now),
        ]
        for original in cookies {
            let foundation = try #require(original.httpCookie)
            #expect(foundation.name == original.name)
            #expect(foundation.value == original.value)
            #expect(foundation.domain == (original.isHostOnly ? original.domain : "." + original.domain))
            #expect(foundation.path == original.path)
            #expect(foundation.isSecure == original.isSecure)
            #expect(foundation.isHTTPOnly == original.isHTTPOnly)
            #expect(foundation.expiresDate == original.expires)
            #expect(foundation.isSessionOnly == !original.isPersistent)

            var back = Cookie(foundation)
            #expect(back.creationTime >= Self.now)
            back.creationTime = original.creationTime
            back.lastAccessTime = original.lastAccessTime
            #expect(back == original)
        }
    }

    @Test func httpCookieFromFoundationPropertiesConverts() throws {
        let foundation = try #require(
            HTTPCookie(properties: [
                .name: "a", .value: "1", .domain: ".Example.com", .path: "/", .secure: "TRUE",
            ])
        )
        let cookie = Cookie(foundation)
        #expect(cookie.domain == "example.com")
        #expect(!cookie.isHostOnly)
        #expect(cookie.isSecure)
        #expect(cookie.expires == nil)
    }
}
