import Foundation
import Testing

@testable import Kite

/// `HTTPCookieJar`: what it stores, what it sends, its limits and its file (RFC 6265bis §5.7, §5.8).
@Suite struct CookieJarTests {
    /// 2025-01-01T00:00:00Z.
    static let now = Date(timeIntervalSince1970: 1_735_689_600)

    private func url(_ string: String) throws -> URL {
        try #require(URL(string: string))
    }

    private func names(_ jar: HTTPCookieJar, _ url: String, at now: Date = CookieJarTests.now) throws -> [String] {
        jar.cookies(for: try self.url(url), now: now).map(\.name)
    }

    private func header(_ jar: HTTPCookieJar, _ url: String, at now: Date = CookieJarTests.now) throws -> String? {
        jar.cookieHeader(for: try self.url(url), now: now)
    }

    private func store(
        _ jar: HTTPCookieJar,
        _ headers: [String],
        from url: String,
        at now: Date = CookieJarTests.now
    ) throws {
        jar.store(setCookieHeaders: headers, from: try self.url(url), now: now)
    }

    // MARK: - Domains and paths

    @Test func hostOnlyCookiesGoToTheExactHostOnly() throws {
        let jar = HTTPCookieJar()
        try self.store(jar, ["a=1"], from: "https://www.example.com/")
        #expect(try self.names(jar, "https://www.example.com/x") == ["a"])
        #expect(try self.names(jar, "https://WWW.EXAMPLE.COM/") == ["a"])
        #expect(try self.names(jar, "https://example.com/").isEmpty)
        #expect(try self.names(jar, "https://sub.www.example.com/").isEmpty)
        #expect(try self.names(jar, "https://www.example.org/").isEmpty)
    }

    @Test func domainCookiesGoToTheDomainAndItsSubdomains() throws {
        let jar = HTTPCookieJar()
        try self.store(jar, ["a=1; Domain=example.com"], from: "https://www.example.com/")
        #expect(try self.names(jar, "https://example.com/") == ["a"])
        #expect(try self.names(jar, "https://www.example.com/") == ["a"])
        #expect(try self.names(jar, "https://a.b.example.com/") == ["a"])
        #expect(try self.names(jar, "https://notexample.com/").isEmpty)
        #expect(try self.names(jar, "https://example.com.evil.org/").isEmpty)
    }

    @Test func refusedDomainsAreNotStored() throws {
        let jar = HTTPCookieJar()
        try self.store(
            jar,
            ["parent=1; Domain=example.com", "child=1; Domain=a.www.example.com", "other=1; Domain=other.com"],
            from: "https://www.example.com/"
        )
        #expect(jar.allCookies.map(\.name) == ["parent"])
    }

    @Test func publicSuffixDomainIsRefusedButTheRegistrableDomainIsAccepted() throws {
        let jar = HTTPCookieJar()
        try self.store(
            jar,
            ["wide=1; Domain=co.uk", "site=1; Domain=example.co.uk"],
            from: "https://www.example.co.uk/"
        )
        #expect(jar.allCookies.map(\.name) == ["site"])
        #expect(try self.names(jar, "https://shop.example.co.uk/") == ["site"])
        #expect(try self.names(jar, "https://other.co.uk/").isEmpty)
    }

    @Test func ipAddressHostsGetHostOnlyCookies() throws {
        let jar = HTTPCookieJar()
        try self.store(jar, ["a=1; Domain=192.168.1.10", "b=2", "c=3; Domain=168.1.10"], from: "https://192.168.1.10/")
        #expect(jar.allCookies.map(\.name) == ["a", "b"])
        #expect(jar.allCookies.allSatisfy { $0.isHostOnly })
        #expect(try self.names(jar, "https://192.168.1.10:8443/") == ["a", "b"])
        #expect(try self.names(jar, "https://1.192.168.1.10/").isEmpty)
    }

    @Test func pathsMatchOnSegmentBoundaries() throws {
        let jar = HTTPCookieJar()
        try self.store(jar, ["docs=1; Path=/docs"], from: "https://example.com/")
        #expect(try self.names(jar, "https://example.com/docs") == ["docs"])
        #expect(try self.names(jar, "https://example.com/docs/") == ["docs"])
        #expect(try self.names(jar, "https://example.com/docs/web") == ["docs"])
        #expect(try self.names(jar, "https://example.com/docsets").isEmpty)
        #expect(try self.names(jar, "https://example.com/").isEmpty)
    }

    @Test func defaultPathComesFromTheRequest() throws {
        let jar = HTTPCookieJar()
        try self.store(jar, ["a=1"], from: "https://example.com/a/b/c")
        #expect(jar.allCookies.first?.path == "/a/b")
        #expect(try self.names(jar, "https://example.com/a/b/d") == ["a"])
        #expect(try self.names(jar, "https://example.com/a/c").isEmpty)
    }

    // MARK: - Secure and HttpOnly

    @Test func secureCookiesAreNeverSentOverHTTP() throws {
        let jar = HTTPCookieJar()
        try self.store(jar, ["s=1; Secure", "p=2"], from: "https://example.com/")
        #expect(try self.names(jar, "https://example.com/") == ["p", "s"])
        #expect(try self.names(jar, "http://example.com/") == ["p"])
        #expect(try self.names(jar, "ws://example.com/") == ["p"])
        #expect(try self.names(jar, "wss://example.com/") == ["p", "s"])
    }

    @Test func loopbackHostsCountAsSecure() throws {
        let jar = HTTPCookieJar()
        try self.store(jar, ["s=1; Secure"], from: "http://localhost:8080/")
        try self.store(jar, ["s=1; Secure"], from: "http://127.0.0.1:8080/")
        #expect(try self.names(jar, "http://localhost:9090/") == ["s"])
        #expect(try self.names(jar, "http://127.0.0.1/") == ["s"])
        try self.store(jar, ["t=1; Secure"], from: "http://example.com/")
        #expect(jar.allCookies.count == 2, "Secure from plain http to a public host is refused")
    }

    @Test func httpOnlyCookiesAreSentAndKept() throws {
        let jar = HTTPCookieJar()
        try self.store(jar, ["h=1; HttpOnly"], from: "https://example.com/")
        #expect(try self.header(jar, "https://example.com/") == "h=1")
        #expect(jar.allCookies.first?.isHTTPOnly == true)
    }

    @Test func insecureOriginCannotShadowASecureCookie() throws {
        let jar = HTTPCookieJar()
        try self.store(jar, ["sid=secret; Secure; Path=/"], from: "https://example.com/")
        try self.store(jar, ["sid=evil; Path=/", "sid=evil2; Path=/app", "other=1"], from: "http://example.com/")
        try self.store(jar, ["sid=evil3; Domain=example.com"], from: "http://www.example.com/")
        #expect(jar.allCookies.map { "\($0.name)=\($0.value)" } == ["other=1", "sid=secret"])
        try self.store(jar, ["sid=plain; Path=/"], from: "https://example.com/")
        #expect(jar.allCookies.map { "\($0.name)=\($0.value)" } == ["other=1", "sid=plain"], "a secure origin may")
    }

    // MARK: - Expiry and replacement

    @Test func expiredCookiesAreNotSentAndAreRemovedWhenSeen() throws {
        let jar = HTTPCookieJar()
        try self.store(jar, ["a=1; Max-Age=60", "b=2"], from: "https://example.com/")
        #expect(try self.names(jar, "https://example.com/", at: Self.now.addingTimeInterval(59)) == ["a", "b"])
        #expect(jar.allCookies.count == 2)
        #expect(try self.names(jar, "https://example.com/", at: Self.now.addingTimeInterval(60)) == ["b"])
        #expect(jar.allCookies.map(\.name) == ["b"], "the lookup removed the expired cookie")
    }

    @Test(arguments: [
        "a=; Expires=Thu, 01 Jan 1970 00:00:00 GMT", "a=; Max-Age=0", "a=; Max-Age=-1",
        "a=x; Max-Age=-1; Expires=Fri, 01 Jan 2100 00:00:00 GMT",
    ])
    func pastExpiryDeletesTheStoredCookie(deletion: String) throws {
        let jar = HTTPCookieJar()
        try self.store(jar, ["a=1; Max-Age=3600", "b=2"], from: "https://example.com/")
        try self.store(jar, [deletion], from: "https://example.com/", at: Self.now.addingTimeInterval(10))
        #expect(jar.allCookies.map(\.name) == ["b"])
    }

    @Test func deletionMatchesNameDomainHostOnlyAndPath() throws {
        let jar = HTTPCookieJar()
        try self.store(
            jar,
            ["a=1; Path=/", "a=2; Path=/x", "a=3; Domain=example.com; Path=/"],
            from: "https://example.com/"
        )
        #expect(jar.allCookies.count == 3)
        try self.store(jar, ["a=; Max-Age=0; Path=/x"], from: "https://example.com/")
        #expect(jar.allCookies.map(\.value).sorted() == ["1", "3"])
        try self.store(jar, ["a=; Max-Age=0; Domain=example.com; Path=/"], from: "https://example.com/")
        #expect(jar.allCookies.map(\.value) == ["1"], "the domain cookie went, the host-only one stayed")
    }

    @Test func replacementKeepsTheCreationTimeAndUpdatesTheRest() throws {
        let jar = HTTPCookieJar()
        try self.store(jar, ["a=1; Path=/"], from: "https://example.com/")
        let later = Self.now.addingTimeInterval(100)
        try self.store(jar, ["a=2; Path=/; HttpOnly; Max-Age=10"], from: "https://example.com/", at: later)
        let cookie = try #require(jar.allCookies.first)
        #expect(jar.allCookies.count == 1)
        #expect(cookie.value == "2")
        #expect(cookie.isHTTPOnly)
        #expect(cookie.expires == later.addingTimeInterval(10))
        #expect(cookie.creationTime == Self.now)
        #expect(cookie.lastAccessTime == later)
    }

    // MARK: - The Cookie header

    @Test func cookieHeaderListsLongerPathsFirstThenOlderCookies() throws {
        let jar = HTTPCookieJar()
        let url = "https://example.com/docs/web/page"
        try self.store(jar, ["root2=b; Path=/"], from: url, at: Self.now.addingTimeInterval(2))
        try self.store(jar, ["root1=a; Path=/"], from: url, at: Self.now.addingTimeInterval(1))
        try self.store(jar, ["web=c; Path=/docs/web"], from: url, at: Self.now.addingTimeInterval(3))
        try self.store(jar, ["docs=d; Path=/docs"], from: url, at: Self.now.addingTimeInterval(4))
        try self.store(jar, ["docs2=e; Path=/docs/"], from: url, at: Self.now.addingTimeInterval(5))
        try self.store(jar, ["nameless"], from: url, at: Self.now.addingTimeInterval(6))
        let at = Self.now.addingTimeInterval(50)
        #expect(try self.header(jar, url, at: at) == "web=c; nameless; docs2=e; docs=d; root1=a; root2=b")
        #expect(jar.allCookies.allSatisfy { $0.lastAccessTime == at }, "sending marks each cookie accessed")
        #expect(try self.header(jar, "https://example.org/") == nil)
    }

    @Test func cookieHeaderUpdatesOnlyTheCookiesSent() throws {
        let jar = HTTPCookieJar()
        try self.store(jar, ["a=1; Path=/a", "b=1; Path=/b"], from: "https://example.com/")
        let at = Self.now.addingTimeInterval(5)
        #expect(try self.header(jar, "https://example.com/a", at: at) == "a=1")
        let times = Dictionary(uniqueKeysWithValues: jar.allCookies.map { ($0.name, $0.lastAccessTime) })
        #expect(times == ["a": at, "b": Self.now])
    }

    // MARK: - Limits

    @Test func cookiesOver4096BytesAreRefused() throws {
        let jar = HTTPCookieJar()
        let fits = "n=" + String(repeating: "v", count: 4095)
        try self.store(jar, [fits, "m=" + String(repeating: "v", count: 4096)], from: "https://example.com/")
        #expect(jar.allCookies.map(\.name) == ["n"])
        jar.setCookie(Cookie(name: "big", value: String(repeating: "v", count: 4094), domain: "example.com"))
        #expect(jar.allCookies.count == 1, "setCookie applies the size limit too")
    }

    /// Stores cookies `c0`…`c{count-1}` for `host`, each a second after the last, from `start`.
    private func fill(
        _ jar: HTTPCookieJar,
        host: String,
        count: Int,
        from start: Date,
        attributes: String = "Max-Age=86400"
    ) throws {
        let url = try self.url("https://\(host)/")
        for index in 0..<count {
            jar.store(
                setCookieHeaders: ["c\(index)=v; \(attributes)"],
                from: url,
                now: start.addingTimeInterval(Double(index))
            )
        }
    }

    @Test func the51stCookieOfADomainEvictsTheLeastRecentlyAccessed() throws {
        let jar = HTTPCookieJar()
        try self.fill(jar, host: "example.com", count: 50, from: Self.now)
        // c0 is the oldest, but sending it makes c1 the least recently accessed.
        let accessed = Self.now.addingTimeInterval(100)
        jar.setCookie(try #require(jar.allCookies.first { $0.name == "c0" }).accessed(at: accessed), now: accessed)
        try self.store(jar, ["new=1"], from: "https://example.com/", at: Self.now.addingTimeInterval(200))
        let names = Set(jar.allCookies.map(\.name))
        #expect(names.count == 50)
        #expect(!names.contains("c1"))
        #expect(names.contains("c0"))
        #expect(names.contains("new"))
    }

    @Test func domainEvictionTakesExpiredCookiesFirst() throws {
        let jar = HTTPCookieJar()
        try self.fill(jar, host: "example.com", count: 49, from: Self.now)
        try self.store(jar, ["short=1; Max-Age=60"], from: "https://example.com/", at: Self.now.addingTimeInterval(100))
        try self.store(jar, ["new=1"], from: "https://example.com/", at: Self.now.addingTimeInterval(200))
        let names = Set(jar.allCookies.map(\.name))
        #expect(names.count == 50)
        #expect(!names.contains("short"), "expired, though it was accessed after c0")
        #expect(names.contains("c0"))
    }

    @Test func domainEvictionTakesInsecureCookiesBeforeSecureOnes() throws {
        let jar = HTTPCookieJar()
        try self.fill(jar, host: "example.com", count: 3, from: Self.now, attributes: "Secure")
        try self.fill(jar, host: "example.com", count: 47, from: Self.now.addingTimeInterval(10), attributes: "Path=/p")
        try self.store(jar, ["new=1; Secure"], from: "https://example.com/", at: Self.now.addingTimeInterval(100))
        let cookies = jar.allCookies
        #expect(cookies.count == 50)
        #expect(!cookies.contains { $0.name == "c0" && $0.path == "/p" }, "the oldest insecure cookie went")
        #expect(cookies.contains { $0.name == "c0" && $0.isSecure }, "the oldest cookie of all stayed: it is Secure")
    }

    @Test func cookiesOfOtherDomainsDoNotCountTowardsADomainsLimit() throws {
        let jar = HTTPCookieJar()
        try self.fill(jar, host: "example.com", count: 50, from: Self.now)
        try self.store(jar, ["sub=1"], from: "https://www.example.com/")
        try self.store(
            jar,
            ["dom=1; Domain=example.com"],
            from: "https://www.example.com/",
            at: Self.now.addingTimeInterval(60)
        )
        #expect(jar.allCookies.count == 51, "www.example.com's host-only cookie is in its own domain")
        #expect(!jar.allCookies.contains { $0.name == "c0" }, "dom shares example.com with the 50")
    }

    @Test func the3001stCookieEvictsTheLeastRecentlyAccessedOfAll() throws {
        let jar = HTTPCookieJar()
        for domain in 0..<60 {
            try self.fill(
                jar,
                host: "d\(domain).example",
                count: 50,
                from: Self.now.addingTimeInterval(Double(domain * 50))
            )
        }
        #expect(jar.allCookies.count == 3000)
        // Sending d0's cookies makes d1's c0 the least recently accessed.
        #expect(try self.names(jar, "https://d0.example/", at: Self.now.addingTimeInterval(10_000)).count == 50)
        try self.store(jar, ["new=1"], from: "https://new.example/", at: Self.now.addingTimeInterval(20_000))
        let cookies = jar.allCookies
        #expect(cookies.count == 3000)
        #expect(!cookies.contains { $0.domain == "d1.example" && $0.name == "c0" })
        #expect(cookies.contains { $0.domain == "d1.example" && $0.name == "c1" })
        #expect(cookies.contains { $0.domain == "d0.example" && $0.name == "c0" })
        #expect(cookies.contains { $0.domain == "new.example" })
        try self.store(jar, ["newer=1"], from: "https://new.example/", at: Self.now.addingTimeInterval(20_001))
        #expect(!jar.allCookies.contains { $0.domain == "d1.example" && $0.name == "c1" }, "then the next one")
    }

    @Test func overallEvictionTakesExpiredCookiesFirst() throws {
        let jar = HTTPCookieJar()
        for domain in 0..<59 {
            try self.fill(
                jar,
                host: "d\(domain).example",
                count: 50,
                from: Self.now.addingTimeInterval(Double(domain * 50))
            )
        }
        try self.fill(jar, host: "d59.example", count: 49, from: Self.now.addingTimeInterval(3000))
        try self.store(
            jar,
            ["short=1; Max-Age=10"],
            from: "https://d59.example/",
            at: Self.now.addingTimeInterval(3100)
        )
        #expect(jar.allCookies.count == 3000)
        try self.store(jar, ["new=1"], from: "https://new.example/", at: Self.now.addingTimeInterval(3200))
        let cookies = jar.allCookies
        #expect(cookies.count == 3000)
        #expect(!cookies.contains { $0.name == "short" })
        #expect(cookies.contains { $0.domain == "d0.example" && $0.name == "c0" }, "the least recently accessed stayed")
    }

    // MARK: - Removing

    @Test func deleteCookiesForAURLRemovesWhatItsHostWouldReceive() throws {
        let jar = HTTPCookieJar()
        try self.store(
            jar,
            ["host=1; Path=/deep; Secure", "dom=1; Domain=example.com"],
            from: "https://www.example.com/"
        )
        try self.store(jar, ["apex=1"], from: "https://example.com/")
        try self.store(jar, ["sibling=1"], from: "https://api.example.com/")
        jar.deleteCookies(for: try self.url("http://www.example.com/"))
        #expect(jar.allCookies.map(\.name).sorted() == ["apex", "sibling"])
    }

    @Test func deleteCookieAndRemoveAll() throws {
        let jar = HTTPCookieJar()
        try self.store(jar, ["a=1", "b=2"], from: "https://example.com/")
        jar.deleteCookie(Cookie(name: "a", value: "whatever", domain: "EXAMPLE.com"))
        #expect(jar.allCookies.map(\.name) == ["b"])
        jar.removeAll()
        #expect(jar.allCookies.isEmpty)
        #expect(jar.cookieHeader(for: try self.url("https://example.com/")) == nil)
    }

    @Test func setCookieStoresAsGivenAndReplaces() throws {
        let jar = HTTPCookieJar()
        let cookie = Cookie(
            name: "theme",
            value: "dark",
            domain: "example.com",
            isHostOnly: false,
            creationTime: Self.now
        )
        jar.setCookie(cookie, now: Self.now)
        #expect(jar.allCookies == [cookie])
        #expect(try self.header(jar, "https://www.example.com/") == "theme=dark")
        var lighter = cookie
        lighter.value = "light"
        jar.setCookie(lighter, now: Self.now)
        #expect(jar.allCookies.map(\.value) == ["light"])
        lighter.expires = Self.now
        jar.setCookie(lighter, now: Self.now)
        #expect(jar.allCookies.isEmpty, "an expired cookie deletes")
    }

    // MARK: - Persistence

    /// A JSON or file-attribute number, whichever way Foundation bridged it.
    private static func number(_ value: Any?) -> Double? {
        if let value = value as? Int { return Double(value) }
        if let value = value as? Double { return value }
        return (value as? NSNumber)?.doubleValue
    }

    /// A new, empty directory for one test.
    private func directory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appending(path: "kite-cookies-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test func persistenceRoundTripsPersistentCookiesOnly() throws {
        let directory = try self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appending(path: "cookies.json")
        #expect(!FileManager.default.fileExists(atPath: file.path(percentEncoded: false)))

        let jar = try HTTPCookieJar(persistingTo: file, persistsSessionCookies: false, now: Self.now)
        #expect(!FileManager.default.fileExists(atPath: file.path(percentEncoded: false)), "no change, no file")
        try self.store(
            jar,
            [
                "sid=abc; Max-Age=3600; Secure; HttpOnly; SameSite=Strict; Path=/app",
                "lang=en; Domain=example.com; Expires=Thu, 02 Jan 2025 00:00:00 GMT", "session=1",
            ],
            from: "https://www.example.com/app/home"
        )
        try self.store(jar, ["ip=1; Max-Age=60"], from: "https://[::1]:8443/", at: Self.now.addingTimeInterval(1))

        let loaded = try HTTPCookieJar(persistingTo: file, persistsSessionCookies: false, now: Self.now)
        #expect(loaded.allCookies == jar.allCookies.filter(\.isPersistent))
        #expect(loaded.allCookies.map(\.name) == ["ip", "lang", "sid"])
        #expect(jar.allCookies.count == 4, "the session cookie stays in memory")

        // Deletion reaches the file.
        jar.deleteCookie(try #require(jar.allCookies.first { $0.name == "sid" }))
        let reloaded = try HTTPCookieJar(persistingTo: file, persistsSessionCookies: false, now: Self.now)
        #expect(reloaded.allCookies.map(\.name) == ["ip", "lang"])
        #expect(jar.persistenceError == nil)
    }

    @Test func persistingSessionCookiesWhenAsked() throws {
        let directory = try self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appending(path: "cookies.json")
        let jar = try HTTPCookieJar(persistingTo: file, persistsSessionCookies: true, now: Self.now)
        try self.store(jar, ["session=1", "kept=2; Max-Age=60"], from: "https://example.com/")
        let loaded = try HTTPCookieJar(persistingTo: file, persistsSessionCookies: true, now: Self.now)
        #expect(loaded.allCookies == jar.allCookies)
        #expect(loaded.allCookies.count == 2)
    }

    @Test func theFileIsOwnerOnlyJSONAndNoTemporaryFileIsLeft() throws {
        let directory = try self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appending(path: "cookies.json")
        let jar = try HTTPCookieJar(persistingTo: file, persistsSessionCookies: false, now: Self.now)
        try self.store(jar, ["a=1; Max-Age=60; SameSite=Lax; Domain=example.com"], from: "https://www.example.com/")

        let data = try Data(contentsOf: file)
        let json = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        #expect(Self.number(json?["version"]) == 1)
        let cookies = try #require(json?["cookies"] as? [[String: Any]])
        #expect(cookies.count == 1)
        let cookie = try #require(cookies.first)
        #expect(cookie["name"] as? String == "a")
        #expect(cookie["domain"] as? String == "example.com")
        #expect(cookie["sameSite"] as? String == "Lax")
        #expect(Self.number(cookie["expires"]) == Self.now.timeIntervalSince1970 + 60)
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.contains("\"isHostOnly\" : false"), "\(text)")
        #expect(text.contains("\"expires\" : 1735689660"), "\(text)")

        let attributes = try FileManager.default.attributesOfItem(atPath: file.path(percentEncoded: false))
        #expect(Self.number(attributes[.posixPermissions]) == 0o600)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory.path(percentEncoded: false)) == [
                "cookies.json"
            ]
        )
    }

    @Test func expiredCookiesInTheFileAreDropped() throws {
        let directory = try self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appending(path: "cookies.json")
        let jar = try HTTPCookieJar(persistingTo: file, persistsSessionCookies: false, now: Self.now)
        try self.store(jar, ["short=1; Max-Age=60", "long=1; Max-Age=600"], from: "https://example.com/")
        let later = try HTTPCookieJar(
            persistingTo: file,
            persistsSessionCookies: false,
            now: Self.now.addingTimeInterval(120)
        )
        #expect(later.allCookies.map(\.name) == ["long"])
    }

    @Test(arguments: [
        "{not json",
        "[]",
        "{\"version\": 1}",
        "{\"version\": 1, \"cookies\": [{\"name\": 1}]}",
        "{\"version\": 2, \"cookies\": []}",
    ])
    func aCorruptFileGivesAnErrorNamingIt(contents: String) throws {
        let directory = try self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appending(path: "cookies.json")
        try Data(contents.utf8).write(to: file)
        let error = try #require(throws: KiteError.self) {
            _ = try HTTPCookieJar(persistingTo: file)
        }
        #expect(error.code == .cookieStorageFailed)
        #expect(error.message.contains(file.path(percentEncoded: false)), "\(error.message)")
        #expect(error.message.hasPrefix("the cookie file "), "\(error.message)")
    }

    @Test func anEmptyFileIsAnEmptyJar() throws {
        let directory = try self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appending(path: "cookies.json")
        try Data(" \n".utf8).write(to: file)
        #expect(try HTTPCookieJar(persistingTo: file).allCookies.isEmpty)
    }

    @Test func aFailedWriteIsReportedAndSaveThrows() throws {
        let directory = try self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appending(path: "missing/cookies.json")
        let jar = try HTTPCookieJar(persistingTo: file, persistsSessionCookies: false, now: Self.now)
        try self.store(jar, ["a=1; Max-Age=60"], from: "https://example.com/")
        #expect(jar.allCookies.count == 1, "the jar still works in memory")
        let reported = try #require(jar.persistenceError)
        #expect(reported.message.contains(file.path(percentEncoded: false)), "\(reported.message)")
        #expect(throws: KiteError.self) { try jar.save() }

        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try jar.save()
        #expect(jar.persistenceError == nil)
        #expect(
            try HTTPCookieJar(persistingTo: file, persistsSessionCookies: false, now: Self.now).allCookies.count == 1
        )
    }

    @Test func saveWritesAccessTimes() throws {
        let directory = try self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appending(path: "cookies.json")
        let jar = try HTTPCookieJar(persistingTo: file, persistsSessionCookies: false, now: Self.now)
        try self.store(jar, ["a=1; Max-Age=600"], from: "https://example.com/")
        let at = Self.now.addingTimeInterval(30)
        #expect(try self.header(jar, "https://example.com/", at: at) == "a=1")
        let before = try HTTPCookieJar(persistingTo: file, persistsSessionCookies: false, now: Self.now)
        #expect(before.allCookies.first?.lastAccessTime == Self.now, "a lookup alone does not write")
        try jar.save()
        let after = try HTTPCookieJar(persistingTo: file, persistsSessionCookies: false, now: Self.now)
        #expect(after.allCookies.first?.lastAccessTime == at)
    }

    @Test func concurrentStoresLeaveTheFileWithTheLatestCookies() async throws {
        let directory = try self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appending(path: "cookies.json")
        let jar = try HTTPCookieJar(persistingTo: file, persistsSessionCookies: false, now: Self.now)
        let url = try self.url("https://example.com/")
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<40 {
                group.addTask {
                    jar.store(setCookieHeaders: ["c\(index)=v; Max-Age=600"], from: url, now: Self.now)
                    _ = jar.cookieHeader(for: url, now: Self.now)
                }
            }
        }
        #expect(jar.allCookies.count == 40)
        #expect(jar.persistenceError == nil)
        let loaded = try HTTPCookieJar(persistingTo: file, persistsSessionCookies: false, now: Self.now)
        #expect(Set(loaded.allCookies.map(\.name)) == Set(jar.allCookies.map(\.name)))
    }
}

extension Cookie {
    /// A copy last accessed at `time`.
    fileprivate func accessed(at time: Date) -> Cookie {
        var copy = self
        copy.lastAccessTime = time
        return copy
    }
}
