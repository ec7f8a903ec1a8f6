import ArgumentParser
import Foundation
import KiteTestServer

/// `kite serve`: runs the httpbin-compatible test server until interrupted.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run Kite's httpbin-compatible test server on 127.0.0.1.",
        discussion: """
            With --tls the server serves HTTPS (HTTP/2 and HTTP/1.1) with certificates generated at \
            start-up, and writes them as PEM files into a new temporary directory; trust its root.pem.
            """
    )

    @Option(name: .shortAndLong, help: "The port to listen on; 0 picks a free one.")
    var port = 8080

    @Flag(help: "Serve HTTPS with a freshly generated certificate authority.")
    var tls = false

    @Option(help: "The certificate to present with --tls (default: leaf).")
    var tlsCertificate: TLSCertificateArgument?

    @Flag(help: "With --tls, refuse clients without a certificate signed by the generated authority.")
    var requireClientCertificate = false

    func validate() throws {
        if !self.tls, self.tlsCertificate != nil || self.requireClientCertificate {
            throw ValidationError("--tls-certificate and --require-client-certificate need --tls.")
        }
    }

    func run() async throws {
        guard self.tls else {
            try await KiteTestServer.run(host: "127.0.0.1", port: self.port) { port in
                Self.print("Kite test server listening on http://127.0.0.1:\(port) (Ctrl-C to stop)\n")
            }
            return
        }
        let authority = try TestCertificateAuthority()
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("kite-tls-\(UUID().uuidString.lowercased())")
        let files = try authority.write(to: directory)
        let options = KiteTestServer.TLSOptions(
            authority: authority,
            certificate: (self.tlsCertificate ?? .leaf).serverCertificate,
            clientCertificate: self.requireClientCertificate ? .required : .notRequested
        )
        let path = { @Sendable (name: String) in files[name]?.path ?? directory.appendingPathComponent(name).path }
        let showsClientCertificate = self.requireClientCertificate
        try await KiteTestServer.run(host: "127.0.0.1", port: self.port, tls: options) { port in
            var text = "Kite test server listening on https://127.0.0.1:\(port) "
            text += "(CA: \(path("root.pem")); Ctrl-C to stop)\n"
            if showsClientCertificate {
                text += "Client certificate: \(path("client-chain.pem")), key: \(path("client-key.pem"))\n"
            }
            Self.print(text)
        }
    }

    /// Writes `text` to standard output unbuffered: a program reading it through a pipe must see it at once.
    private static func print(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}

/// The values of `--tls-certificate`.
enum TLSCertificateArgument: String, CaseIterable, ExpressibleByArgument {
    case leaf
    case expired
    case wrongHost = "wrong-host"
    case selfSigned = "self-signed"
    case untrusted

    var serverCertificate: TestCertificateAuthority.ServerCertificate {
        switch self {
        case .leaf: .leaf
        case .expired: .expired
        case .wrongHost: .wrongHost
        case .selfSigned: .selfSigned
        case .untrusted: .untrustedLeaf
        }
    }
}
