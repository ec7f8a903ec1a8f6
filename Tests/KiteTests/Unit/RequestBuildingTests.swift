import Foundation
import Testing

@testable import Kite

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite struct RequestBuildingTests {
    struct BadURL: Error, CustomStringConvertible {
        var description: String { "the router has no such route" }
    }

    struct FailingConvertible: URLConvertible {
        func asURL() throws -> URL { throw BadURL() }
    }

    @Test(arguments: [
        ("", #"GET  failed: "" is not a valid URL"#),
        (
            "ftp://example.com/file",
            #"GET ftp://example.com/file failed: URL "ftp://example.com/file" has the unsupported scheme "ftp"; use http or https"#
        ),
        (
            "example.com/path",
            #"GET example.com/path failed: URL "example.com/path" has no scheme; use http:// or https://"#
        ),
        ("http:///path", #"GET http:///path failed: URL "http:///path" has no host"#),
        (
            "http://example.com/a\r\nX-Injected: 1",
            #"GET http://example.com/a\#u{FFFD}\#u{FFFD}X-Injected: 1 failed: URL "http://example.com/a\#u{FFFD}\#u{FFFD}X-Injected: 1" contains the control character U+000D"#
        ),
        (
            "http://example.com/\0",
            #"GET http://example.com/\#u{FFFD} failed: URL "http://example.com/\#u{FFFD}" contains the control character U+0000"#
        ),
    ])
    func invalidURLsBecomeErrorsThatNameTheURL(url: String, description: String) async throws {
        let response = await Session.suite.request(url).serializingData().response
        let error = try #require(response.error)
        #expect(error.code == .invalidURL)
        #expect(error.description == description)
        #expect(response.request == nil, "nothing may be sent")
        #expect(response.response == nil)
    }

    @Test func aThrowingURLConvertibleIsReportedWithItsError() async throws {
        let error = try #require(await Session.suite.request(FailingConvertible()).serializingData().response.error)
        #expect(error.code == .invalidURL)
        #expect(error.message == "the URL could not be made: the router has no such route")
        #expect(error.underlyingError is BadURL)
    }

    @Test func draftBecomesAnHTTPRequestHead() throws {
        let draft = RequestDraft(
            method: .patch,
            url: try #require(URL(string: "HTTPS://Example.com:8443/a%20b/c?x=1&y=%2F#frag")),
            headerFields: [.accept: "text/plain"]
        )
        let head = try draft.makeHTTPRequest()
        #expect(head.method == .patch)
        #expect(head.scheme == "https")
        #expect(head.authority == "example.com:8443" || head.authority == "Example.com:8443")
        #expect(head.path == "/a%20b/c?x=1&y=%2F")
        #expect(head.headerFields[.accept] == "text/plain")
    }

    /// The head's target is read straight from the URL string for plain http(s) URLs; it must be what
    /// `URL`'s accessors give, and every other URL must take the accessors' path.
    @Test(arguments: [
        ("http://127.0.0.1:8080/get", true),
        ("HTTPS://Example.com:8443/a%20b/c?x=1&y=%2F#frag", true),
        ("http://example.com", true),
        ("http://example.com?q=1", true),
        ("http://example.com#top", true),
        ("http://example.com/?", true),
        ("https://[::1]:8443/v6?x", true),
        ("http://[fe80::1%25eth0]/zone", true),
        ("http://example.com/a/../b/./c", true),
        ("http://example.com/%7Euser/caf%C3%A9", true),
        ("http://example.com:80/", true),
        ("http://alice:pw@example.com/private", false),
        ("http://alice@b\u{FC}cher.example:8080/idn", false),
        ("https://b\u{FC}cher.example/idn", true),
        ("http://example.com:/empty-port", false),
        ("http://[Int]:8089/not-an-address", false),
        ("http://[::1x]/", false),
        ("ftp://example.com/file", false),
        ("http:relative", false),
        ("httpx://example.com/", false),
    ])
    func requestTargetMatchesURLAccessors(url string: String, fast: Bool) throws {
        let draft = RequestDraft(url: try #require(URL(string: string)))
        let read = RequestDraft.requestTarget(ofAbsolute: draft.url.absoluteString, hasBase: false)
        #expect((read != nil) == fast)
        let accessors = try? draft.requestTargetFromAccessors()
        if let read {
            let accessors = try #require(accessors)
            #expect(read.scheme == accessors.scheme)
            #expect(read.authority.lowercased() == accessors.authority.lowercased())
            #expect(read.path == accessors.path)
        }
        let head = try? draft.makeHTTPRequest()
        #expect(head?.scheme == accessors?.scheme)
        #expect(head?.path == accessors?.path)
    }

    /// `URL`'s host accessor gives an internationalized host as percent-encoded Unicode, but the string holds
    /// its ASCII (IDNA) form, which is what DNS and `Host` need: the head has it however the URL is read.
    @Test(arguments: ["http://b\u{FC}cher.example/x", "http://alice:pw@b\u{FC}cher.example/x"])
    func anInternationalizedHostIsSentInItsASCIIForm(url string: String) throws {
        let head = try RequestDraft(url: try #require(URL(string: string))).makeHTTPRequest()
        #expect(head.authority == "xn--bcher-kva.example")
        #expect(head.path == "/x")
    }

    /// `URL` accepts brackets around any name and its host drops them, so `http://[Int]/` would reach the host
    /// `Int`; Kite accepts only an IPv6 address in brackets, whichever way it reads the URL.
    @Test(arguments: ["http://[Int]:8089/x", "http://user@[Int]/x", "https://[::1x]/", "http://[v1.fe]/"])
    func aBracketedHostMustBeAnIPv6Address(url string: String) throws {
        let url = try #require(URL(string: string))
        let error = try #require(throws: KiteError.self) { try RequestDraft(url: url).makeHTTPRequest() }
        #expect(error.code == .invalidURL)
        #expect(error.message.hasSuffix("which is not an IPv6 address"), "\(error.message)")
    }
    @Test(arguments: [
        ("http://example.com/a?b=c", false),
        ("http://example.com/a\r\nX: 1", true),
        ("tab\there", true),
        ("del\u{7F}", true),
        ("caf\u{E9}/\u{1F600}", false),
        ("next line \u{85}", true),
        ("", false),
    ])
    func controlCharactersAreFoundInASCIIAndBeyond(text: String, hasControl: Bool) {
        #expect(text.containsControlCharacter == hasControl)
        #expect(Substring(text).description.containsControlCharacter == hasControl)
    }

    @Test func aURLWithABaseTakesTheAccessorsPath() throws {
        let base = try #require(URL(string: "http://example.com/api/"))
        let draft = RequestDraft(url: try #require(URL(string: "items?page=2", relativeTo: base)))
        #expect(RequestDraft.requestTarget(ofAbsolute: draft.url.absoluteString, hasBase: true) == nil)
        let head = try draft.makeHTTPRequest()
        #expect(head.authority == "example.com")
        #expect(head.path == "/api/items?page=2")
    }

    @Test func emptyPathBecomesSlashAndIPv6HostsKeepBrackets() throws {
        let head = try RequestDraft(url: try #require(URL(string: "http://[::1]:8080"))).makeHTTPRequest()
        #expect(head.path == "/")
        #expect(head.authority == "[::1]:8080")
    }

    @Test func userInfoBecomesBasicAuthorizationAndLeavesTheURL() throws {
        let draft = RequestDraft(url: try #require(URL(string: "http://alice:s%40cret@example.com/private")))
        let head = try draft.makeHTTPRequest()
        #expect(head.authority == "example.com")
        #expect(head.headerFields[.authorization] == "Basic " + Data("alice:s@cret".utf8).base64EncodedString())
        #expect(draft.summary.description == "GET http://example.com/private")
    }

    @Test func anExplicitAuthorizationWinsOverUserInfo() throws {
        let draft = RequestDraft(
            url: try #require(URL(string: "http://alice:pw@example.com/")),
            headerFields: [.authorization: "Bearer t"]
        )
        #expect(try draft.makeHTTPRequest().headerFields[.authorization] == "Bearer t")
    }

    @Test func urlRequestConvertsMethodHeadersAndBody() throws {
        var urlRequest = URLRequest(url: try #require(URL(string: "http://example.com/items")))
        urlRequest.httpMethod = "PUT"
        urlRequest.setValue("application/json", forHTTPHeaderField: "Content-Type")
        urlRequest.setValue("7", forHTTPHeaderField: "X-Count")
        urlRequest.httpBody = Data("[1]".utf8)
        let draft = try urlRequest.asRequestDraft()
        #expect(draft.method == .put)
        #expect(draft.headerFields[.contentType] == "application/json")
        #expect(draft.headerFields[try #require(HTTPField.Name("X-Count"))] == "7")
        #expect(draft.body == Data("[1]".utf8))
        #expect(draft.timeout == nil)
    }

    /// URLSession's `timeoutInterval` is an idle timeout; Kite refuses it rather than take it as a total timeout
    /// that would cut off a long download URLSession finishes.
    @Test func aTimeoutIntervalIsRefusedWithWhatToDoInstead() async throws {
        var urlRequest = URLRequest(url: try #require(URL(string: "http://example.com/items")))
        urlRequest.timeoutInterval = 2.5
        let error = try #require(await Session.suite.request(urlRequest).serializingData().response.error)
        #expect(error.code == .invalidRequest)
        #expect(
            error.description
                == "GET http://example.com/items failed: URLRequest.timeoutInterval (2.5 s) is an idle timeout in "
                + "URLSession, and Kite's idle timeouts are the session's: leave it at 60 and set "
                + "Session.Configuration.timeouts.idleRead, or give the request a total timeout with "
                + "requestModifier: { $0.timeout = .seconds(…) }"
        )
        urlRequest.timeoutInterval = 60
        let modified = Session.suite.request(urlRequest, requestModifier: { $0.timeout = .milliseconds(2500) })
        #expect(modified.draft?.timeout == .milliseconds(2500), "the way the message gives")
    }

    @Test func urlRequestWithTheDefaultTimeoutUsesTheSessionTimeout() throws {
        let draft = try URLRequest(url: try #require(URL(string: "http://example.com/"))).asRequestDraft()
        #expect(draft.timeout == nil)
    }

    @Test func urlRequestHeaderWithCRLFIsRejected() async throws {
        var urlRequest = URLRequest(url: try #require(URL(string: "http://example.com/")))
        // `setValue` drops such a value silently; `allHTTPHeaderFields` keeps it.
        urlRequest.allHTTPHeaderFields = ["X-Note": "a\r\nX-Injected: 1"]
        let error = try #require(await Session.suite.request(urlRequest).serializingData().response.error)
        #expect(error.code == .invalidHeader)
        #expect(
            error.description
                == #"GET http://example.com/ failed: the value of header "X-Note" contains CR, LF or NUL: "a\r\nX-Injected: 1""#
        )
    }

    @Test func urlRequestWithAnInvalidMethodIsRejected() async throws {
        var urlRequest = URLRequest(url: try #require(URL(string: "http://example.com/")))
        urlRequest.httpMethod = "GET /evil HTTP/1.1\r\n"
        let error = try #require(await Session.suite.request(urlRequest).serializingData().response.error)
        #expect(error.code == .invalidRequest)
        #expect(error.message == #""GET /evil HTTP/1.1\r\n" is not a valid HTTP method"#)
    }

    @Test(
        arguments: [
            ("X-Ok", "value", nil),
            ("Bad Name", "v", #""Bad Name" is not a valid header field name"#),
            ("X-Nul", "a\0b", #"the value of header "X-Nul" contains CR, LF or NUL: "a\0b""#),
            ("X-LF", "a\nb", #"the value of header "X-LF" contains CR, LF or NUL: "a\nb""#),
            ("", "v", #""" is not a valid header field name"#),
        ] as [(String, String, String?)]
    )
    func validatingFieldsRejectInjection(name: String, value: String, message: String?) {
        do {
            let field = try HTTPField(validatingName: name, value: value)
            #expect(message == nil, "expected a failure for \(name)")
            #expect(field.value == value)
        } catch {
            #expect(error.code == .invalidHeader)
            #expect(error.message == message)
        }
    }

    @Test func requestModifierRunsLastAndItsErrorsAreReported() async throws {
        struct Refused: Error {}
        let request = Session.suite.request("http://example.com/get") { draft in
            draft.headerFields[.accept] = "text/csv"
            draft.timeout = .seconds(3)
        }
        #expect(request.draft?.headerFields[.accept] == "text/csv")
        #expect(request.draft?.timeout == .seconds(3))

        let failing = Session.suite.request("http://example.com/get") { _ in throw Refused() }
        let error = try #require(await failing.serializingData().response.error)
        #expect(error.code == .requestAdaptationFailed)
        #expect(error.description.hasPrefix("GET http://example.com/get failed: the request modifier failed: "))
    }

    @Test func summariesNeverShowCredentials() {
        let summary = RequestSummary(method: .post, url: "https://user:secret@example.com:8443/x?y=1")
        #expect(summary.description == "POST https://example.com:8443/x?y=1")
        #expect(RequestSummary(method: .get, url: "http://example.com/a@b").url == "http://example.com/a@b")
    }
}

@Suite struct DefaultHeaderTests {
    @Test func acceptLanguageListsAtMostSixLanguagesWithFallingQuality() {
        let value = DefaultHeaders.acceptLanguage(["en-US", "fr", "de", "es", "it", "nl", "pt", "ja"])
        #expect(value == "en-US;q=1.0, fr;q=0.9, de;q=0.8, es;q=0.7, it;q=0.6, nl;q=0.5")
        #expect(DefaultHeaders.acceptLanguage([]) == "")
    }

    @Test func userAgentNamesExecutableOSAndKite() {
        let agent = DefaultHeaders.userAgent
        #expect(agent.hasSuffix(" Kite/\(kiteVersion)"))
        #expect(
            agent.wholeMatch(of: #/[!-~&&[^/]]+/[!-~&&[^/]]+ \([A-Za-z]+ \d+\.\d+\.\d+\) Kite/.+/#) != nil,
            "\(agent)"
        )
    }
}
