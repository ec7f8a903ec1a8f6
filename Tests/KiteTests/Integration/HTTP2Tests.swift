import Foundation
import HTTPTypes
import KiteTestServer
import NIOSSL
import Testing

@testable import Kite

/// HTTP/2 is negotiated over TLS (ALPN) unless the session asks for HTTP/1.1 only.
@Suite struct HTTP2Tests {
    @Test(arguments: [
        (Session.HTTPVersionPolicy.automatic, "h2"),
        (.http1Only, "http/1.1"),
    ])
    func theHTTPVersionPolicyChoosesTheProtocol(policy: Session.HTTPVersionPolicy, expected: String) async throws {
        let server = try await HTTP2TestServer()
        var configuration = Session.Configuration()
        configuration.httpVersion = policy
        let session = server.session(configuration)
        let url = "https://127.0.0.1:\(server.port)/protocol"
        for _ in 0..<3 {
            // Several requests: HTTP/2 multiplexes them on one connection.
            let response = await session.request(url).validate().serializingString().response
            #expect(response.error == nil, "\(String(describing: response.error))")
            #expect(response.value == expected)
        }
        let upload = await session.upload(Data(count: 300_000), to: url).serializingString().response
        #expect(upload.value == expected, "\(String(describing: upload.error))")
        // The tag that ties a streamed body to its watch (UploadWatch) never reaches the server.
        let names = upload.response?.headerFields[HTTPField.Name("x-request-header-names")!] ?? ""
        #expect(names.contains("content-length") && !names.contains("x-kite"), "\(names)")
        // A download takes the engine's other API (its body handed over in batches), over the same protocol.
        let download = await session.download(url).validate().serializingDownloadedFileURL().response
        let fileURL = try #require(download.value, "\(String(describing: download.error))")
        #expect(try String(contentsOf: fileURL, encoding: .utf8) == expected)
        try? FileManager.default.removeItem(at: fileURL)
        try await session.shutdown()
        try await server.shutdown()
    }

    /// The idle-read timeout counts on each HTTP/2 stream (Kite's handler behind the stream's codec): a response
    /// that stalls fails with it, for data requests and downloads alike, and closes only its own stream, so the
    /// connection keeps serving the others.
    @Test(.timeLimit(.minutes(1))) func aStalledStreamTimesOutAloneOnItsConnection() async throws {
        let server = try await HTTP2TestServer()
        var configuration = Session.Configuration()
        configuration.timeouts.idleRead = .milliseconds(300)
        configuration.collectsConnectionMetrics = true
        let session = server.session(configuration)
        let base = "https://127.0.0.1:\(server.port)"
        let first = await session.request(base + "/protocol").serializingString().response
        #expect(first.value == "h2")
        let stalled = await session.request(base + "/stall").serializingData().response
        #expect(
            stalled.error?.code == .timedOut && stalled.error?.timeout == .idleRead,
            "\(String(describing: stalled.error))"
        )
        let download = await session.download(base + "/stall").serializingDownloadedFileURL().response
        #expect(
            download.error?.code == .timedOut && download.error?.timeout == .idleRead,
            "\(String(describing: download.error))"
        )
        let after = await session.request(base + "/protocol").serializingString().response
        #expect(after.value == "h2")
        // The same connection: the stalled streams were closed, not their connection.
        let connections = [first, after].map { $0.metrics?.connection?.id }
        #expect(connections[0] != nil && connections[0] == connections[1], "\(connections)")
        try await session.shutdown()
        try await server.shutdown()
    }

    /// A DATA frame for a stream that has ended is a connection error to NIOHTTP2 (`NoSuchStream`): it sends
    /// `GOAWAY` and leaves closing to its user. An idle HTTP/2 connection reads nothing, so the client meets the
    /// frame with its next request on that connection. Kite then retires the connection (HTTP2ConnectionErrorHandler):
    /// that request is answered, the connection closes after it, and the request after goes to a new one. Without
    /// that, the connection stayed open and in use.
    @Test(.timeLimit(.minutes(1))) func aFrameForAnEndedStreamRetiresItsConnection() async throws {
        let server = try await HTTP2TestServer()
        var configuration = Session.Configuration()
        configuration.collectsConnectionMetrics = true
        let session = server.session(configuration)
        let base = "https://127.0.0.1:\(server.port)"
        let first = await session.request(base + "/stray").validate().serializingString().response
        #expect(first.value == "h2", "\(String(describing: first.error))")
        let second = await session.request(base + "/protocol").validate().serializingString().response
        #expect(second.value == "h2", "\(String(describing: second.error))")
        // The client closes the connection: the server sees it go.
        for await _ in server.closedConnections { break }
        let third = await session.request(base + "/protocol").validate().serializingString().response
        #expect(third.value == "h2", "\(String(describing: third.error))")
        let connections = [first, second, third].map { $0.metrics?.connection?.id }
        #expect(connections[0] != nil && connections[0] == connections[1], "\(connections)")
        #expect(connections[2] != nil && connections[2] != connections[0], "\(connections)")
        #expect(server.acceptedConnections == 2)
        try await session.shutdown()
        try await server.shutdown()
    }

    /// NIOHTTP2 stops reading a read's frames at a connection error; the frames behind the offending one waited
    /// for more bytes, which never came when they ended every open stream. Here the server sends, in one flush, a
    /// frame for the stream it has just ended and then the whole answer of a request it held: the held request
    /// gets its answer at once (not its idle-read timeout), on the retired connection, which then closes.
    @Test(.timeLimit(.minutes(1))) func theFramesBehindAFrameForAnEndedStreamAreDelivered() async throws {
        let server = try await HTTP2TestServer()
        var configuration = Session.Configuration()
        configuration.timeouts.idleRead = .seconds(20)
        configuration.collectsConnectionMetrics = true
        let session = server.session(configuration)
        let base = "https://127.0.0.1:\(server.port)"
        let held = Task { await session.request(base + "/hold").validate().serializingString().response }
        for await _ in server.heldRequests { break }
        let stray = await session.request(base + "/stray").validate().serializingString().response
        let answer = await held.value
        #expect(stray.value == "h2", "\(String(describing: stray.error))")
        #expect(answer.value == "h2", "\(String(describing: answer.error))")
        let connection = stray.metrics?.connection?.id
        #expect(connection != nil && answer.metrics?.connection?.id == connection)
        for await _ in server.closedConnections { break }
        let after = await session.request(base + "/protocol").validate().serializingString().response
        #expect(after.value == "h2", "\(String(describing: after.error))")
        #expect(after.metrics?.connection?.id != connection)
        try await session.shutdown()
        try await server.shutdown()
    }
}

extension HTTP2TestServer {
    /// A session whose engine trusts this server's certificate (given to the engine as NIOSSL's
    /// configuration, as the server made it).
    func session(_ configuration: Session.Configuration) -> Session {
        Session(
            configuration: configuration,
            transport: AHCTransport(
                configuration: configuration,
                canShutDown: true,
                tlsConfiguration: self.trustingConfiguration
            )
        )
    }
}

/// Downloads over HTTP/2 cancelled at any point of their body, twelve at a time on one connection. The server goes
/// on sending a cancelled stream's DATA for a while; once more than 32 streams were reset, NIOHTTP2 forgets the
/// oldest and takes such a frame as a connection error. Before HTTP2ConnectionErrorHandler, the request after the
/// cancelled downloads got nothing until its idle-read timeout (60 s) in 1 of 3 to 4 runs (RELIABILITY.md, "The
/// descriptor that comes and goes"); with it, 16 runs of 16 passed, in about 2 s each.
@Suite
struct HTTP2CancelledDownloadTests {
    @Test(.timeLimit(.minutes(2))) func aCancelledDownloadLetsItsStreamGo() async throws {
        let authority = try TestCertificateAuthority()
        let server = try await KiteTestServer.start(
            host: "127.0.0.1",
            port: 0,
            tls: KiteTestServer.TLSOptions(authority: authority, certificate: .leaf)
        )
        var configuration = Session.Configuration()
        configuration.tls.trustRoots = .certificates([authority.root.certificate])
        let session = Session(configuration: configuration)
        let url = "\(server.baseURL)/bytes/\(4 << 20)"
        // Twelve at a time, as the soak's workers: their streams share one connection.
        let cancelled = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<12 {
                group.addTask {
                    var cancelled = 0
                    for _ in 0..<8 {
                        let request = session.download(url)
                        request.validate()
                        let canceller = Task {
                            try await Task.sleep(for: .milliseconds(Int.random(in: 5...300)))
                            request.cancel(producingResumeData: true)
                        }
                        let response = await request.serializingDownloadedFileURL().response
                        _ = try? await canceller.value
                        if let file = response.value { try? FileManager.default.removeItem(at: file) }
                        if let resumeData = response.resumeData {
                            let resumed = await session.download(resumingWith: resumeData)
                                .serializingDownloadedFileURL()
                                .response
                            if let file = resumed.value { try? FileManager.default.removeItem(at: file) }
                        }
                        if response.error?.code == .cancelled { cancelled += 1 }
                    }
                    return cancelled
                }
            }
            return await group.reduce(0, +)
        }
        #expect(cancelled > 24, "only \(cancelled) of 96 downloads were cancelled")
        let probe = await session.request("\(server.baseURL)/get").validate().serializingData().response
        #expect(probe.error == nil, "\(String(describing: probe.error))")
        try await session.shutdown()
        try await server.shutdown()
    }
}
