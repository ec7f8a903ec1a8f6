import Foundation
import Kite
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite struct CURLTests {
    /// A session without default headers, so commands are exact.
    private func bareSession() -> Session {
        var configuration = Session.Configuration()
        configuration.headers = [:]
        configuration.decompression = .disabled
        return Session(configuration: configuration)
    }

    @Test func aPOSTWithJSONIsRenderedExactly() async throws {
        let session = self.bareSession()
        let request = session.request(
            "http://127.0.0.1:8080/post?x=1",
            method: .post,
            parameters: ["name": "it's"],
            encoding: JSONEncoding.default,
            headers: [.accept: "application/json"]
        )
        #expect(
            request.cURLDescription() == """
                $ curl -X POST \\
                    -H 'Accept: application/json' \\
                    -H 'Content-Type: application/json' \\
                    --data-raw '{"name":"it'\\''s"}' \\
                    'http://127.0.0.1:8080/post?x=1'
                """
        )
        try await session.shutdown()
    }

    @Test func credentialsAreHiddenUnlessAskedFor() async throws {
        let session = self.bareSession()
        let request = session.request(
            "http://alice:secret@127.0.0.1:8080/private",
            headers: [.cookie: "session=abc", .proxyAuthorization: "Basic eA=="]
        )
        let hidden = request.cURLDescription()
        #expect(
            hidden == """
                $ curl -H 'Cookie: ***' \\
                    -H 'Proxy-Authorization: ***' \\
                    -H 'Authorization: ***' \\
                    'http://127.0.0.1:8080/private'
                """
        )
        let shown = request.cURLDescription(includingCredentials: true)
        #expect(shown.contains("-H 'Authorization: Basic \(Data("alice:secret".utf8).base64EncodedString())'"))
        #expect(shown.contains("-H 'Cookie: session=abc'"))
        try await session.shutdown()
    }

    @Test func binaryBodiesHeadAndTimeoutsAreRendered() async throws {
        let session = self.bareSession()
        var urlRequest = URLRequest(url: try #require(URL(string: "http://127.0.0.1:8080/put")))
        urlRequest.httpMethod = "PUT"
        urlRequest.httpBody = Data([0x00, 0x41, 0x27, 0xFF])
        #expect(
            session.request(urlRequest, requestModifier: { $0.timeout = .milliseconds(2500) }).cURLDescription() == """
                $ curl -X PUT \\
                    --max-time 2.5 \\
                    --data-binary $'\\x00A\\'\\xff' \\
                    'http://127.0.0.1:8080/put'
                """
        )
        #expect(
            session.request("http://127.0.0.1:8080/get", method: .head).cURLDescription()
                == "$ curl --head \\\n    'http://127.0.0.1:8080/get'"
        )
        try await session.shutdown()
    }

    @Test func sessionDefaultsAppearBeforeAndAfterSending() async throws {
        let server = try await Backend.inProcess.baseURL()
        let request = Session.suite.request("\(server)/get")
        let before = request.cURLDescription()
        #expect(before.contains("-H 'Accept-Encoding: gzip;q=1.0, deflate;q=0.9'"))
        #expect(before.contains("-H 'User-Agent: "))
        #expect(before.contains("--compressed"))
        _ = await request.serializingData().response
        #expect(request.cURLDescription() == before)
    }

    @Test func aRequestThatCannotBeBuiltSaysWhy() {
        #expect(
            Session.suite.request("ftp://x/y").cURLDescription()
                == #"$ curl # the request could not be built: URL "ftp://x/y" has the unsupported scheme "ftp"; use http or https"#
        )
    }
}
