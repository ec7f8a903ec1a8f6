import Foundation
import Kite
import Testing
import X509

/// Answers that are odd but legal, or that a server sends by mistake, each handled as RFC 9110 and RFC 9112 say,
/// against the fault server's `/raw` (exact bytes) over HTTP/1.1 and ``RawHTTP2Server`` (exact frames) over HTTP/2.
@Suite(.timeLimit(.minutes(1))) struct OddAnswerTests {
    static func raw(_ bytes: String, then: String = "fin") async throws -> String {
        try await HostileEngineInputTests.raw(bytes, then: then)
    }

    /// A session of its own with one connection per host, so a second request takes the first one's connection.
    static func withOneConnection<T>(_ body: (Session) async throws -> T) async throws -> T {
        try await FaultInjectionTests.withSession(.with { $0.maximumConnectionsPerHost = 1 }, body)
    }

    // MARK: 1xx

    @Test func repeatedAndUnknownInterimAnswersAreSkipped() async throws {
        let url = try await FaultServer.url("/informational?codes=100,100,102,103,150,199")
        let response = await Session.suite.request(url).serializingString().response
        #expect(response.error == nil, "\(String(describing: response.error))")
        #expect(response.response?.status.code == 200)
        #expect(response.value == "final")
    }

    @Test(arguments: ["fin", "rst"])
    func aContinueWithNoFinalAnswerBeforeTheCloseIsALostConnection(then: String) async throws {
        let url = try await Self.raw(
            "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n",
            then: then
        )
        let error = try #require(await Session.suite.request(url).serializingData().response.error)
        #expect(error.code == .connectionLost, "\(error)")
        #expect(error.response == nil, "no response head was delivered: \(error)")
    }

    // MARK: Bodies that must not be there

    @Test(arguments: [
        ("HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\nhello", 204),
        ("HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\n\r\nhello", 304),
        ("HTTP/1.1 304 Not Modified\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", 304),
    ])
    func aBodyOnA204Or304IsNotDeliveredAndDoesNotReachTheNextRequest(answer: String, status: Int) async throws {
        try await Self.withOneConnection { session in
            let url = try await Self.raw(answer, then: "stay")
            let response = await session.request(url).serializingData(emptyResponseCodes: [204, 304]).response
            #expect(response.error == nil, "\(String(describing: response.error))")
            #expect(response.response?.status.code == status)
            #expect(response.data?.isEmpty ?? true, "no body: \(String(describing: response.data))")
            let next = await session.request(try await FaultServer.url("/ok")).serializingString().response
            #expect(next.value == "ok", "\(String(describing: next.error))")
        }
    }

    @Test func aBodyOnAHEADAnswerIsNotDeliveredAndDoesNotReachTheNextRequest() async throws {
        try await Self.withOneConnection { session in
            let url = try await Self.raw("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", then: "stay")
            let response = await session.request(url, method: .head).serializingData().response
            #expect(response.error == nil, "\(String(describing: response.error))")
            #expect(response.response?.headerFields[.contentLength] == "5")
            #expect(response.data?.isEmpty ?? true, "no body: \(String(describing: response.data))")
            let next = await session.request(try await FaultServer.url("/ok")).serializingString().response
            #expect(next.value == "ok", "\(String(describing: next.error))")
        }
    }

    // MARK: Framing that contradicts itself (response splitting)

    @Test(arguments: [
        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!",
        "HTTP/1.1 200 OK\r\nContent-Length: 5, 6\r\n\r\nhello!",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: -5\r\n\r\nhello",
        "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\nhello",
        // RFC 9110 §8.6 lets a recipient take identical values as one; NIO's parser (llhttp) refuses any repeat.
        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello",
    ])
    func contradictoryFramingIsRefused(answer: String) async throws {
        let error = try #require(
            await Session.suite.request(try await Self.raw(answer)).serializingData().response.error
        )
        #expect(error.code == .invalidResponse, "\(error)")
        #expect(error.message == "the server's response is not valid HTTP", "\(error)")
    }

    @Test func aTransferCodingOtherThanChunkedLastIsReadToTheClose() async throws {
        // RFC 9112 §6.3: the body then ends when the server closes the connection; Kite asked for no transfer coding
        // and decodes none.
        let url = try await Self.raw("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nhello")
        let response = await Session.suite.request(url).serializingString().response
        #expect(response.value == "hello", "\(String(describing: response.error))")
    }

    // MARK: The same over HTTP/2

    /// A session that trusts `server` (HTTP/2 through ALPN), and the server's URL.
    struct HTTP2Setup {
        let server: RawHTTP2Server
        let session: Session
        var url: String { "https://127.0.0.1:\(self.server.port)/" }

        init(answering answer: @escaping @Sendable (UInt32) -> [UInt8]) async throws {
            self.server = try await RawHTTP2Server(answer: answer)
            var configuration = Session.Configuration()
            configuration.tls.trustRoots = .certificates([try Certificate(pemEncoded: self.server.certificatePEM)])
            self.session = Session(configuration: configuration)
        }

        func stop() async {
            try? await self.session.shutdown()
            try? await self.server.shutdown()
        }
    }

    @Test func http2InterimHeadsAreSkipped() async throws {
        let setup = try await HTTP2Setup { stream in
            RawHTTP2Server.headers(stream: stream, [(":status", "100")], endStream: false)
                + RawHTTP2Server.headers(stream: stream, [(":status", "103"), ("link", "</a>")], endStream: false)
                + RawHTTP2Server.headers(stream: stream, [(":status", "199")], endStream: false)
                + RawHTTP2Server.headers(
                    stream: stream,
                    [(":status", "200"), ("content-length", "5")],
                    endStream: false
                )
                + RawHTTP2Server.data(stream: stream, Array("final".utf8), endStream: true)
        }
        let response = await setup.session.request(setup.url).serializingString().response
        #expect(response.value == "final", "\(String(describing: response.error))")
        #expect(response.response?.status.code == 200)
        await setup.stop()
    }

    @Test func anHTTP2InterimHeadThatEndsTheStreamFailsTheRequest() async throws {
        let setup = try await HTTP2Setup { stream in
            RawHTTP2Server.headers(stream: stream, [(":status", "100")], endStream: true)
        }
        let error = try #require(await setup.session.request(setup.url).serializingData().response.error)
        #expect(error.code == .invalidResponse, "\(error)")
        #expect(error.message == "the server ended the stream after an interim head (100)", "\(error)")
        await setup.stop()
    }

    @Test func aBodyOnAnHTTP2Answer204IsNotDelivered() async throws {
        let setup = try await HTTP2Setup { stream in
            RawHTTP2Server.headers(stream: stream, [(":status", "204")], endStream: false)
                + RawHTTP2Server.data(stream: stream, Array("hello".utf8), endStream: true)
        }
        let response = await setup.session.request(setup.url).serializingData(emptyResponseCodes: [204]).response
        #expect(response.error == nil, "\(String(describing: response.error))")
        #expect(response.response?.status.code == 204)
        #expect(response.data?.isEmpty ?? true, "no body delivered: \(String(describing: response.data))")
        await setup.stop()
    }

    @Test func aBodyOnAnHTTP2AnswerToHEADIsRefusedByNIOHTTP2() async throws {
        // NIOHTTP2 knows the request's method and resets a stream whose answer to HEAD has DATA: no body is delivered.
        let setup = try await HTTP2Setup { stream in
            RawHTTP2Server.headers(stream: stream, [(":status", "200"), ("content-length", "5")], endStream: false)
                + RawHTTP2Server.data(stream: stream, Array("hello".utf8), endStream: true)
        }
        let response = await setup.session.request(setup.url, method: .head).serializingData().response
        #expect(response.error?.message == "the server reset the request's HTTP/2 stream (PROTOCOL_ERROR)")
        #expect(response.data?.isEmpty ?? true, "no body delivered: \(String(describing: response.data))")
        await setup.stop()
    }

    @Test func anHTTP2BodyLongerThanItsContentLengthIsRefused() async throws {
        let setup = try await HTTP2Setup { stream in
            RawHTTP2Server.headers(stream: stream, [(":status", "200"), ("content-length", "3")], endStream: false)
                + RawHTTP2Server.data(stream: stream, Array("hello".utf8), endStream: true)
        }
        let response = await setup.session.request(setup.url).serializingData().response
        #expect(response.data != Data("hello".utf8), "the extra bytes were not delivered")
        #expect(response.error != nil, "the request failed: \(String(describing: response.data))")
        await setup.stop()
    }
}
