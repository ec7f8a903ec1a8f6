import Foundation
import Kite
import Testing

/// Redirects, decompression and default headers as the engine handles them.
@Suite struct TransportTests {
    @Test(arguments: Backend.available)
    func redirectsAreFollowedAndCounted(backend: Backend) async throws {
        for path in ["/redirect/3", "/relative-redirect/3", "/absolute-redirect/3"] {
            let response = await Session.suite.request(try await backend.url(path))
                .validate()
                .serializingDecodable(Echo.self)
                .response
            #expect(response.value?.url == (try await backend.url("/get")), "\(path)")
            #expect(response.metrics?.redirectCount == 3, "\(path)")
            #expect(response.url?.absoluteString == (try await backend.url("/get")), "\(path)")
        }
    }

    @Test("The response URL without redirects is the request's, without credentials or fragment")
    func responseURLWithoutRedirects() async throws {
        let base = try await Backend.inProcess.url("/get")
        let plain = await Session.suite.request(base + "?q=1").serializingData().response
        #expect(plain.url?.absoluteString == base + "?q=1")
        let withExtras = base.replacingOccurrences(of: "http://", with: "http://user:secret@") + "?q=1#part"
        let response = await Session.suite.request(withExtras).serializingData().response
        #expect(response.response?.status.code == 200)
        #expect(response.url?.absoluteString == base + "?q=1")
        let relative = try #require(URL(string: "get?q=2", relativeTo: URL(string: base)))
        let relativeResponse = await Session.suite.request(relative).serializingData().response
        #expect(relativeResponse.url?.absoluteString == base + "?q=2")
        #expect(relativeResponse.url?.baseURL == nil)
    }

    @Test(arguments: Backend.available)
    func moreThanTheMaximumRedirectsFails(backend: Backend) async throws {
        let url = try await backend.url("/redirect/11")
        let error = try #require(await Session.suite.request(url).serializingData().response.error)
        #expect(error.code == .tooManyRedirects)
        #expect(error.description == "GET \(url) failed: the server redirected more than 10 times")
    }

    @Test(arguments: Backend.available)
    func withRedirectsOffTheRedirectIsTheResponse(backend: Backend) async throws {
        var configuration = Session.Configuration()
        configuration.maximumRedirects = 0
        let session = Session(configuration: configuration)
        let response = await session.request(try await backend.url("/redirect/1")).serializingData().response
        #expect(response.response?.status.code == 302)
        #expect(response.response?.headerFields[.location] == "/get")
        #expect(response.metrics?.redirectCount == 0)
        try await session.shutdown()
    }

    @Test(arguments: Backend.available)
    func gzipAndDeflateBodiesAreDecoded(backend: Backend) async throws {
        let gzip = try await Session.suite.request(try await backend.url("/gzip")).validate().serializingJSON().value
        #expect(gzip["gzipped"] == .bool(true))
        #expect(gzip["headers"]?["Accept-Encoding"] == .string("gzip;q=1.0, deflate;q=0.9"))
        let deflate = try await Session.suite.request(try await backend.url("/deflate")).validate()
            .serializingJSON().value
        #expect(deflate["deflated"] == .bool(true))
    }

    @Test(arguments: Backend.available)
    func withDecompressionOffTheBodyArrivesAsSentAndNoAcceptEncodingIsAdded(backend: Backend) async throws {
        var configuration = Session.Configuration()
        configuration.decompression = .disabled
        let session = Session(configuration: configuration)
        let response = await session.request(try await backend.url("/gzip")).serializingData().response
        let data = try #require(response.value)
        #expect(Array(data.prefix(2)) == [0x1F, 0x8B], "gzip magic bytes")
        #expect(response.request?.headerFields[.acceptEncoding] == nil)
        let headers = try await session.request(try await backend.url("/headers")).serializingJSON().value
        #expect(headers["headers"]?["Accept-Encoding"] == nil)
        try await session.shutdown()
    }

    @Test(arguments: Backend.available)
    func defaultHeadersAreSentUnlessTheRequestSetsItsOwn(backend: Backend) async throws {
        let echo = try await Session.suite.request(try await backend.url("/headers"))
            .serializingDecodable([String: [String: String]].self).value
        let headers = try #require(echo["headers"])
        #expect(headers.header("Accept-Encoding") == "gzip;q=1.0, deflate;q=0.9")
        let userAgent = try #require(headers.header("User-Agent"))
        #expect(
            userAgent.wholeMatch(
                of: #/[^/ ]+/[^ ]+ \((Linux|macOS|iOS|tvOS|watchOS|visionOS) \d+\.\d+\.\d+\) Kite/\d+\.\d+\.\d+/#
            ) != nil,
            "\(userAgent)"
        )
        #expect(headers.header("Accept-Language") == HTTPFields.kiteDefaults[.acceptLanguage])

        let custom = try await Session.suite.request(
            try await backend.url("/headers"),
            headers: [.userAgent: "custom/1.0", .acceptEncoding: "identity"]
        ).serializingDecodable([String: [String: String]].self).value
        #expect(custom["headers"]?.header("User-Agent") == "custom/1.0")
        #expect(custom["headers"]?.header("Accept-Encoding") == "identity")
    }

    @Test(arguments: Backend.available)
    func sessionHeadersReplaceTheDefaults(backend: Backend) async throws {
        var configuration = Session.Configuration()
        configuration.headers[.userAgent] = "session-agent"
        configuration.headers[.authorization] = "Bearer abc"
        let session = Session(configuration: configuration)
        let echo = try await session.request(try await backend.url("/bearer")).validate().serializingJSON().value
        #expect(echo["token"] == .string("abc"))
        let headers = try await session.request(try await backend.url("/headers")).serializingJSON().value
        #expect(headers["headers"]?["User-Agent"] == .string("session-agent"))
        try await session.shutdown()
    }

    @Test(arguments: Backend.available)
    func userInfoInTheURLAuthenticates(backend: Backend) async throws {
        let base = try await backend.baseURL()
        let url = base.replacingOccurrences(of: "http://", with: "http://kite:fly@") + "/basic-auth/kite/fly"
        let echo = try await Session.suite.request(url).validate().serializingJSON().value
        #expect(echo["authenticated"] == .bool(true))
        #expect(echo["user"] == .string("kite"))
    }

    @Test func aSessionThatWasShutDownRefusesRequests() async throws {
        let session = Session()
        try await session.shutdown()
        try await session.shutdown()
        let port = try Sockets.refusingPort()
        let error = try #require(await session.request("http://127.0.0.1:\(port)/").serializingData().response.error)
        #expect(error.code == .sessionShutDown)
        #expect(error.message == "the session was shut down")
    }

    @Test func shuttingDownTheDefaultSessionDoesNothing() async throws {
        try await Session.default.shutdown()
        let port = try Sockets.refusingPort()
        let error = try #require(
            await Session.default.request("http://127.0.0.1:\(port)/").serializingData().response.error
        )
        #expect(error.code == .connectionFailed)
    }
}
