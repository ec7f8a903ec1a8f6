import Foundation
import KiteTestServer
import Testing

/// `kite --verify`, `--cert`, `--cert-key`, `--pin-sha256`, as httpie and curl users write them.
@Suite(.serialized) struct TLSOptionsTests {
    /// Runs `kite` off the cooperative pool (`offThePool`).
    static func kite(_ arguments: String...) async throws -> CommandLineTests.Run {
        try await CommandLineTests.kite(arguments: arguments)
    }

    /// The authority's PEM files and a TLS server presenting `certificate`.
    private func withServer(
        _ certificate: TestCertificateAuthority.ServerCertificate = .leaf,
        clientCertificate: KiteTestServer.TLSOptions.ClientCertificatePolicy = .notRequested,
        _ body: (TestCertificateAuthority, [String: URL], String) async throws -> Void
    ) async throws {
        let authority = try TestCertificateAuthority()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        let files = try authority.write(to: folder)
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = try await KiteTestServer.start(
            host: "127.0.0.1",
            port: 0,
            tls: KiteTestServer.TLSOptions(
                authority: authority,
                certificate: certificate,
                clientCertificate: clientCertificate
            )
        )
        do {
            try await body(authority, files, server.baseURL + "/get")
        } catch {
            try await server.shutdown()
            throw error
        }
        try await server.shutdown()
    }

    @Test func verifyTrustsACABundleOrNothing() async throws {
        try await self.withServer { _, files, url in
            let untrusted = try await Self.kite(url)
            #expect(untrusted.status == 1)
            #expect(
                untrusted.errors.contains("is not trusted: its certificate (issued by CN=Kite Test Intermediate CA")
            )
            let trusted = try await Self.kite("--verify", files["root.pem"]!.path, url)
            #expect(trusted.status == 0, "\(trusted.errors)")
            #expect(trusted.output.hasPrefix("HTTP 200 OK\n"))
        }
        try await self.withServer(.expired) { _, _, url in
            let anything = try await Self.kite("--verify=no", url)
            #expect(anything.status == 0, "\(anything.errors)")
        }
        let missing = try await Self.kite("--verify", "/nonexistent/ca.pem", "https://127.0.0.1:1/")
        #expect(missing.status == 64)
        #expect(missing.errors.contains("/nonexistent/ca.pem"))
    }

    @Test func pinSHA256MatchesTheServersKey() async throws {
        try await self.withServer { authority, files, url in
            let root = files["root.pem"]!.path
            let pinned = try await Self.kite(
                "--verify",
                root,
                "--pin-sha256",
                authority.leaf.pinnedPublicKey,
                url
            )
            #expect(pinned.status == 0, "\(pinned.errors)")
            let wrong = try await Self.kite(
                "--verify",
                root,
                "--pin-sha256",
                authority.otherRoot.publicKeySHA256,
                url
            )
            #expect(wrong.status == 1)
            #expect(wrong.errors.contains("no pinned public key matches"))
        }
    }

    @Test func certAndCertKeyAnswerAServerThatRequiresThem() async throws {
        try await self.withServer(clientCertificate: .required) { _, files, url in
            let root = files["root.pem"]!.path
            let anonymous = try await Self.kite("--verify", root, url)
            #expect(anonymous.status == 1)
            let identified = try await Self.kite(
                "--verify",
                root,
                "--cert",
                files["client-chain.pem"]!.path,
                "--cert-key",
                files["client-key.pem"]!.path,
                url
            )
            #expect(identified.status == 0, "\(identified.errors)")
            #expect(identified.output.hasPrefix("HTTP 200 OK\n"))
        }
    }
}
