import Foundation
import HTTPTypes
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
