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

/// Downloads over HTTP/2 cancelled at any point of their body: an open finding (RELIABILITY.md, "Open findings"),
/// so this runs only with `KITE_REPRO_H2_CANCEL=1`. It failed in 1 of 3 to 4 runs on 2026-11-29: the request after
/// the cancelled downloads got nothing on the shared connection until its idle-read timeout (60 s), while no
/// `BatchedBody` of Kite's was left alive.
@Suite(.enabled(if: ProcessInfo.processInfo.environment["KITE_REPRO_H2_CANCEL"] == "1"))
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
