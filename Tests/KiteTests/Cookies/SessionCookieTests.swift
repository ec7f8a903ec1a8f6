import Foundation
import HTTPTypes
import Testing

@testable import Kite

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sessions store the cookies responses set and send them back, against both servers and the mock.
@Suite struct SessionCookieTests {
    private func cookies(_ session: Session, _ url: String) async throws -> JSONValue {
        try await session.request(url).validate().serializingJSON().value["cookies"] ?? .null
    }

    @Test(arguments: Backend.available)
    func aCookieSetOnARedirectReachesTheNextHopAndLaterRequests(backend: Backend) async throws {
        let session = Session()
        defer { Task { try? await session.shutdown() } }
        // /cookies/set answers 302 with Set-Cookie; the redirected GET /cookies must carry it.
        let afterRedirect = try await self.cookies(session, try await backend.url("/cookies/set?flavour=oat&size=2"))
        #expect(afterRedirect == .object(["flavour": .string("oat"), "size": .string("2")]))
        #expect(try await self.cookies(session, try await backend.url("/cookies")) == afterRedirect)
        // Deleting by a past expiry removes it from the jar.
        let afterDelete = try await self.cookies(session, try await backend.url("/cookies/delete?flavour"))
        #expect(afterDelete == .object(["size": .string("2")]))
        let jar = try #require(session.cookieJar as? HTTPCookieJar)
        #expect(jar.allCookies.map(\.name) == ["size"])
    }

    @Test(arguments: Backend.available)
    func aCookieHeaderTheCallerSetIsSentAsItIs(backend: Backend) async throws {
        let session = Session()
        defer { Task { try? await session.shutdown() } }
        _ = try await self.cookies(session, try await backend.url("/cookies/set?jar=1"))
        var headers = HTTPFields()
        headers[.cookie] = "mine=yes; also=this"
        let seen = try await session.request(try await backend.url("/cookies"), headers: headers)
            .validate()
            .serializingJSON()
            .value
        // One Cookie line on the wire: servers read repeated lines as one comma-joined cookie.
        #expect(seen["cookies"] == .object(["mine": .string("yes"), "also": .string("this")]))
    }

    @Test(arguments: Backend.available)
    func sessionsKeepTheirOwnJarsAndCookiesCanBeTurnedOff(backend: Backend) async throws {
        let first = Session()
        let second = Session()
        var off = Session.Configuration()
        off.httpShouldHandleCookies = false
        let without = Session(configuration: off)
        defer {
            Task {
                try? await first.shutdown()
                try? await second.shutdown()
                try? await without.shutdown()
            }
        }
        _ = try await self.cookies(first, try await backend.url("/cookies/set?who=first"))
        #expect(try await self.cookies(second, try await backend.url("/cookies")) == .object([:]))
        #expect(try await self.cookies(without, try await backend.url("/cookies/set?who=off")) == .object([:]))
        #expect(without.cookieJar == nil)
        // A shared jar is shared.
        let shared = HTTPCookieJar()
        var sharing = Session.Configuration()
        sharing.cookieJar = shared
        let a = Session(configuration: sharing)
        let b = Session(configuration: sharing)
        _ = try await self.cookies(a, try await backend.url("/cookies/set?shared=1"))
        #expect(try await self.cookies(b, try await backend.url("/cookies")) == .object(["shared": .string("1")]))
        try await a.shutdown()
        try await b.shutdown()
    }

    @Test func secureCookiesAreNeverSentOverPlainHTTP() async throws {
        let mock = MockTransport()
        var setting = HTTPFields()
        setting[.setCookie] = "token=s3cret; Secure; Path=/"
        setting.append(HTTPField(name: .setCookie, value: "theme=dark; Path=/"))
        mock.stub(.get, "https://api.example.com/login", response: .status(200, headers: setting))
        mock.stub(.get, .prefix("http"), response: .status(204))
        let session = Session(transport: mock)
        _ = await session.request("https://api.example.com/login").serializingData().response
        _ = await session.request("http://api.example.com/page").serializingData().response
        _ = await session.request("https://api.example.com/page").serializingData().response
        _ = await session.request("https://other.example.com/page").serializingData().response
        // Cookies with the same path and creation time come in no particular order (RFC 6265bis §5.8.3).
        let sent = mock.requests.map { request in request.head.headerFields[values: .cookie].sorted() }
        #expect(sent == [[], ["theme=dark"], ["theme=dark", "token=s3cret"], []])
    }

    @Test func aRequestCanOptOutOfTheJar() async throws {
        let mock = MockTransport()
        var setting = HTTPFields()
        setting[.setCookie] = "first=1; Path=/"
        mock.stub(.get, "https://api.example.com/first", response: .status(200, headers: setting))
        var other = HTTPFields()
        other[.setCookie] = "ignored=1; Path=/"
        mock.stub(.get, "https://api.example.com/ignored", response: .status(200, headers: other))
        mock.stub(.get, .prefix("https://api.example.com/"), response: .status(204))
        let session = Session(transport: mock)
        _ = await session.request("https://api.example.com/first").serializingData().response
        // Opted out by the modifier and by a URLRequest: nothing sent, nothing stored.
        _ = await session.request(
            "https://api.example.com/ignored",
            requestModifier: { $0.httpShouldHandleCookies = false }
        ).serializingData().response
        var plain = URLRequest(url: URL(string: "https://api.example.com/plain")!)
        plain.httpShouldHandleCookies = false
        _ = await session.request(plain).serializingData().response
        _ = await session.request("https://api.example.com/after").serializingData().response
        let sent = mock.requests.map { request in request.head.headerFields[values: .cookie] }
        #expect(sent == [[], [], [], ["first=1"]])
        #expect((session.cookieJar as? HTTPCookieJar)?.allCookies.map(\.name) == ["first"])
    }
}
