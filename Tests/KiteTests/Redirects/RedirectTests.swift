import Foundation
import Kite
import KiteTestServer
import NIOConcurrencyHelpers
import Testing

@testable import Kite

@Suite struct RedirectPolicyTests {
    private func request(_ method: HTTPRequest.Method, _ url: String, fields: HTTPFields = [:]) -> HTTPRequest {
        let draft = RequestDraft(method: method, url: URL(string: url)!, headerFields: fields)
        return (try? draft.makeHTTPRequest()) ?? HTTPRequest(method: method, scheme: "http", authority: "x", path: "/")
    }

    private func response(_ code: Int, location: String?) -> HTTPResponse {
        var fields = HTTPFields()
        if let location { fields[.location] = location }
        return HTTPResponse(status: .init(code: code), headerFields: fields)
    }

    @Test(arguments: [
        (301, HTTPRequest.Method.post, HTTPRequest.Method.get, false),
        (302, .post, .get, false),
        (303, .post, .get, false),
        (303, .put, .get, false),
        (303, .head, .head, true),
        (301, .put, .put, true),
        (302, .delete, .delete, true),
        (307, .post, .post, true),
        (308, .patch, .patch, true),
    ])
    func methodAndBodyFollowRFC9110(
        code: Int,
        method: HTTPRequest.Method,
        expected: HTTPRequest.Method,
        keepsBody: Bool
    ) throws {
        let original = self.request(
            method,
            "http://a.test/start",
            fields: [.contentType: "text/plain", .contentLength: "4"]
        )
        let redirect = try #require(Redirect(following: self.response(code, location: "/next?x=1"), to: original))
        #expect(redirect.head.method == expected)
        #expect(redirect.keepsBody == keepsBody)
        #expect(redirect.url.absoluteString == "http://a.test/next?x=1")
        #expect((redirect.head.headerFields[.contentType] != nil) == keepsBody)
    }

    @Test(arguments: [
        ("http://a.test/x", "https://a.test/y", false),
        ("http://a.test/x", "http://b.test/y", false),
        ("http://a.test/x", "http://a.test:8080/y", false),
        ("http://a.test/x", "http://a.test:80/y", true),
        ("http://a.test/x", "/y", true),
        ("https://A.test/x", "https://a.TEST:443/y", true),
    ])
    func credentialsSurviveOnlySameOriginRedirects(from: String, location: String, kept: Bool) throws {
        let original = self.request(
            .get,
            from,
            fields: [.authorization: "Bearer t", .cookie: "s=1", .proxyAuthorization: "Basic x", .accept: "*/*"]
        )
        let redirect = try #require(Redirect(following: self.response(302, location: location), to: original))
        #expect((redirect.head.headerFields[.authorization] != nil) == kept)
        #expect((redirect.head.headerFields[.cookie] != nil) == kept)
        #expect((redirect.head.headerFields[.proxyAuthorization] != nil) == kept)
        #expect(redirect.head.headerFields[.accept] == "*/*")
    }

    @Test(
        arguments: [
            (200, "/x"), (304, "/x"), (302, nil), (302, ""), (301, "ftp://a.test/x"), (307, "http:///nohost"),
        ] as [(Int, String?)]
    )
    func nonRedirectsAreNotFollowed(code: Int, location: String?) {
        #expect(
            Redirect(following: self.response(code, location: location), to: self.request(.get, "http://a.test/"))
                == nil
        )
    }
}

@Suite struct RedirectIntegrationTests {
    @Test func credentialsAreDroppedWhenARedirectLeavesTheOrigin() async throws {
        let other = try await KiteTestServer.start()
        let base = try await Backend.inProcess.baseURL()
        let away = "\(base)/redirect-to?url=\(other.baseURL)/headers"
        // A session of its own: a jar holding another test's 127.0.0.1 cookies would send them to any port.
        let session = Session()
        defer { Task { try? await session.shutdown() } }
        let crossed = try await session.request(
            away,
            headers: [.authorization: "Bearer secret", .cookie: "a=b"]
        )
        .validate()
        .serializingJSON()
        .value
        #expect(crossed["headers"]?["Authorization"] == nil)
        #expect(crossed["headers"]?["Cookie"] == nil)

        let home = "\(base)/redirect-to?url=/headers"
        let same = try await session.request(home, headers: [.authorization: "Bearer secret"])
            .validate()
            .serializingJSON()
            .value
        #expect(same["headers"]?["Authorization"] == .string("Bearer secret"))
        try await other.shutdown()
    }

    @Test(arguments: Backend.available)
    func aPOSTRedirectedWith303BecomesAGETWithoutBody(backend: Backend) async throws {
        let url = try await backend.url("/redirect-to?url=/get&status_code=303")
        let response = await Session.suite.request(url, method: .post, parameters: ["a": "1"])
            .validate()
            .serializingDecodable(LooseEcho.self)
            .response
        #expect(response.value?.url == (try await backend.url("/get")))
        #expect(response.value?.headers.header("Content-Type") == nil)
        #expect(response.request?.method == .post, "the response names the request as first sent")
        #expect(response.metrics?.redirectCount == 1)
    }

    /// A transport that answers every request from a table of paths, counting requests.
    final class ScriptedTransport: Transport {
        let routes: [String: (Int, String?)]
        let sent = NIOLockedValueBox([String]())

        init(_ routes: [String: (Int, String?)]) { self.routes = routes }

        func send(_ request: TransportRequest) async throws(KiteError) -> TransportResponse {
            let path = request.head.path ?? "/"
            self.sent.withLockedValue { $0.append(path) }
            let (code, location) = self.routes[path] ?? (404, nil)
            var fields = HTTPFields()
            if let location { fields[.location] = location }
            return TransportResponse(
                head: HTTPResponse(status: .init(code: code), headerFields: fields),
                body: ByteChunks(chunks: [])
            )
        }

        func shutdown() async throws(KiteError) {}
        func shutdownInBackground() {}
    }

    @Test func aRedirectCycleIsReportedWithoutLooping() async throws {
        let transport = ScriptedTransport(["/a": (302, "/b"), "/b": (307, "/a")])
        let session = Session(configuration: .default, transport: transport)
        let error = try #require(await session.request("http://loop.test/a").serializingData().response.error)
        #expect(error.code == .tooManyRedirects)
        #expect(
            error.description
                == "GET http://loop.test/a failed: the server's redirects form a cycle at http://loop.test/a"
        )
        #expect(transport.sent.withLockedValue { $0 } == ["/a", "/b"])
    }

    @Test func theRedirectLimitCountsFollowedRedirects() async throws {
        var routes: [String: (Int, String?)] = ["/5": (200, nil)]
        for step in 0..<5 { routes["/\(step)"] = (302, "/\(step + 1)") }
        var configuration = Session.Configuration()
        configuration.maximumRedirects = 4
        let limited = Session(configuration: configuration, transport: ScriptedTransport(routes))
        let error = try #require(await limited.request("http://hop.test/0").serializingData().response.error)
        #expect(error.message == "the server redirected more than 4 times")
        configuration.maximumRedirects = 5
        let enough = Session(configuration: configuration, transport: ScriptedTransport(routes))
        let response = await enough.request("http://hop.test/0").serializingData(emptyResponseCodes: [200]).response
        #expect(response.error == nil)
        #expect(response.metrics?.redirectCount == 5)
        #expect(response.url?.absoluteString == "http://hop.test/5")
    }
}
