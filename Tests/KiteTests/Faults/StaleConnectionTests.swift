import Foundation
import Kite
import NIOConcurrencyHelpers
import Testing

/// A server that gives up a keep-alive connection while a request is on its way (nginx's `keepalive_timeout`,
/// gunicorn's 2 s) is not the caller's problem: the request, written on a reused connection that closed before any
/// byte of its answer came, goes out once more on a new one when it is idempotent (or carries an `Idempotency-Key`)
/// and its body can be made again, as curl, Go and OkHttp do. `/close-next` makes the race deterministic: it answers
/// one request, then closes the connection on the next one without answering.
@Suite(.timeLimit(.minutes(1))) struct StaleConnectionTests {
    /// A session of its own with one connection per host (so the second request takes the first's connection), the
    /// resends its monitor heard, and the fault server's base URL.
    struct Setup {
        let session: Session
        let server: FaultServer
        let base: String
        let resends: NIOLockedValueBox<[String]>

        init() async throws {
            self.server = FaultServer()
            self.base = try await self.server.baseURL()
            let resends = NIOLockedValueBox<[String]>([])
            self.resends = resends
            let monitor = ClosureEventMonitor()
            monitor.requestWillResendOnNewConnection = { _, error in
                resends.withLockedValue { $0.append(error.message) }
            }
            var configuration = Session.Configuration()
            configuration.maximumConnectionsPerHost = 1
            configuration.collectsConnectionMetrics = true
            self.session = Session(configuration: configuration, eventMonitors: [monitor])
        }

        func stop() async {
            try? await self.session.shutdown()
            await self.server.stop()
        }

        /// Connections and requests the server counted (its `/stats` itself included).
        func stats() async throws -> String {
            try await self.session.request(self.base + "/stats").serializingString().value
        }
    }

    static let closedMessage =
        "the server closed the connection, which had served an earlier request, before it answered"

    @Test(arguments: ["fin", "rst"])
    func anIdempotentRequestOnAConnectionTheServerClosedIsSentAgain(how: String) async throws {
        let setup = try await Setup()
        let first = await setup.session.request(setup.base + "/close-next?how=\(how)").serializingString().response
        #expect(first.value == "ok", "\(String(describing: first.error))")
        let second = await setup.session.request(setup.base + "/ok").serializingString().response
        #expect(second.value == "ok", "\(String(describing: second.error))")
        #expect(setup.resends.withLockedValue { $0 } == [Self.closedMessage])
        let firstConnection = try #require(first.metrics?.connection?.id)
        #expect(second.metrics?.connection?.id != firstConnection, "the answer came over a new connection")
        // The first request, the second twice (the server read it on the old connection), then /stats.
        #expect(try await setup.stats() == #"{"connections": 2, "requests": 4}"#)
        await setup.stop()
    }

    @Test(arguments: ["download", "stream", "put"])
    func everyRequestKindIsSentAgain(kind: String) async throws {
        let setup = try await Setup()
        #expect(try await setup.session.request(setup.base + "/close-next").serializingString().value == "ok")
        let url = setup.base + "/ok"
        var body = Data()
        switch kind {
        case "download":
            let file = try await setup.session.download(url).serializingDownloadedFileURL().value
            body = try Data(contentsOf: file)
            try? FileManager.default.removeItem(at: file)
        case "stream":
            for try await chunk in setup.session.streamRequest(url).streamingData() { body.append(chunk) }
        default:
            body = try await setup.session.upload(Data("up".utf8), to: url, method: .put).serializingData().value
        }
        #expect(body == Data("ok".utf8))
        #expect(setup.resends.withLockedValue { $0 } == [Self.closedMessage])
        await setup.stop()
    }

    @Test func aPOSTIsNotSentAgainAndTheErrorSaysWhy() async throws {
        let setup = try await Setup()
        #expect(try await setup.session.request(setup.base + "/close-next").serializingString().value == "ok")
        let error = try #require(
            await setup.session.upload(Data("up".utf8), to: setup.base + "/ok").serializingData().response.error
        )
        #expect(error.code == .connectionLost)
        #expect(
            error.message
                == Self.closedMessage
                + "; it was not sent again: its method is not idempotent (an Idempotency-Key field allows sending it again)"
        )
        #expect(setup.resends.withLockedValue { $0 }.isEmpty)
        await setup.stop()
    }

    @Test func aPOSTWithAnIdempotencyKeyIsSentAgain() async throws {
        let setup = try await Setup()
        #expect(try await setup.session.request(setup.base + "/close-next").serializingString().value == "ok")
        var headers = HTTPFields()
        try headers.add(name: "Idempotency-Key", value: "8e03978e-40d5-43e8-bc93-6894a57f9324")
        let value = try await setup.session.upload(Data("up".utf8), to: setup.base + "/ok", headers: headers)
            .serializingString()
            .value
        #expect(value == "ok")
        #expect(setup.resends.withLockedValue { $0 } == [Self.closedMessage])
        await setup.stop()
    }

    @Test func aRedirectOnAConnectionTheServerClosedIsFollowed() async throws {
        let setup = try await Setup()
        // The 302 comes over the connection, and the server closes it when the redirect's request arrives there.
        let response = await setup.session.request(setup.base + "/close-next?status=302&location=/ok")
            .serializingString()
            .response
        #expect(response.value == "ok", "\(String(describing: response.error))")
        #expect(response.response?.status.code == 200)
        #expect(setup.resends.withLockedValue { $0 } == [Self.closedMessage])
        await setup.stop()
    }

    @Test func aNewConnectionClosedBeforeAnAnswerIsNotSentAgain() async throws {
        let setup = try await Setup()
        // Nothing at all, then FIN, on the request's first connection: the server may have been unable to take it.
        let error = try #require(
            await setup.session.request(setup.base + "/raw?b64=&then=fin").serializingData().response.error
        )
        #expect(error.code == .connectionLost, "\(error)")
        #expect(setup.resends.withLockedValue { $0 }.isEmpty)
        await setup.stop()
    }

    @Test func aReusedConnectionClosedAfterPartOfTheAnswerIsNotSentAgain() async throws {
        let setup = try await Setup()
        #expect(try await setup.session.request(setup.base + "/ok").serializingString().value == "ok")
        // The second request on the connection gets half a head, then FIN: the server did answer.
        let error = try #require(
            await setup.session.request(setup.base + "/raw?b64=SFRUUC8xLjEgMj&then=fin").serializingData()
                .response.error
        )
        #expect(error.code == .connectionLost, "\(error)")
        #expect(error.message == "the server closed the connection before the response was complete", "\(error)")
        #expect(setup.resends.withLockedValue { $0 }.isEmpty)
        await setup.stop()
    }
}
