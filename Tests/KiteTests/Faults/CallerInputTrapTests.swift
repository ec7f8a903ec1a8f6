import Foundation
import Testing

@testable import Kite

/// Settings a caller gives Kite that reached traps in its dependencies, each fed to a whole Kite process (``Probe``):
/// a PKCS#12 file without a key or without the key's certificate (swift-nio-ssl's `fatalError`), an Ed25519 client
/// key beside a ``ServerTrustManager`` (swift-nio-ssl's `try!` when async-http-client hashes the per-host TLS
/// configuration), a proxy host or port that no request URL could have (async-http-client's and NIO's traps), and an
/// upload stream element of 4 GiB or more (NIO's `ByteBuffer` capacity). Each now fails with a `KiteError` naming
/// the value, or is sent, and the process lives on.
@Suite struct CallerInputTrapTests {
    /// A folder of keys and certificates made with openssl: `one` and `two` (P-256), `ed` (Ed25519), each a
    /// `.key` and a `.crt`, removed when the test ends.
    private final class Files {
        let folder: URL

        init() async throws {
            self.folder = FileManager.default.temporaryDirectory.appendingPathComponent("kite-inputs-\(UUID())")
            try FileManager.default.createDirectory(at: self.folder, withIntermediateDirectories: true)
            let keys = [
                ("one", ["ec", "-pkeyopt", "ec_paramgen_curve:P-256"]),
                ("two", ["ec", "-pkeyopt", "ec_paramgen_curve:P-256"]),
                ("ed", ["ed25519"]),
            ]
            for (name, algorithm) in keys {
                let outputs = ["-nodes", "-keyout", "\(name).key", "-out", "\(name).crt", "-subj", "/CN=\(name)"]
                try await self.openssl(["req", "-x509", "-newkey"] + algorithm + outputs + ["-days", "2"])
            }
        }

        deinit {
            try? FileManager.default.removeItem(at: self.folder)
        }

        func path(_ name: String) -> String {
            self.folder.appendingPathComponent(name).path
        }

        /// `openssl pkcs12 -export` with `arguments`, into `name`; the password is `password`.
        func pkcs12(_ name: String, _ arguments: [String], password: String = "x") async throws -> String {
            try await self.openssl(["pkcs12", "-export", "-out", name, "-passout", "pass:" + password] + arguments)
            return self.path(name)
        }

        func openssl(_ arguments: [String]) async throws {
            let folder = self.folder
            try await offThePool {
                let process = Process()
                process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
                process.arguments = ["openssl"] + arguments
                process.currentDirectoryURL = folder
                let errors = Pipe()
                process.standardError = errors
                process.standardOutput = FileHandle.nullDevice
                try process.run()
                let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                process.waitUntilExit()
                guard process.terminationStatus == 0 else {
                    throw OpenSSLFailed(description: "openssl \(arguments.joined(separator: " ")): \(message)")
                }
            }
        }
    }

    private struct OpenSSLFailed: Error, CustomStringConvertible {
        let description: String
    }

    /// How each PKCS#12 case is exported: openssl's default (PBES2 with AES-256), its legacy ciphers (RC2 and 3DES),
    /// no encryption, a SHA-1 MAC; and how the probe is given the passphrase.
    static let exports: [(name: String, arguments: [String], password: String, probe: [String])] = [
        ("aes", [], "x", ["--passphrase", "x"]),
        ("legacy", ["-legacy"], "x", ["--passphrase", "x"]),
        ("plain", ["-keypbe", "NONE", "-certpbe", "NONE"], "x", ["--passphrase", "x"]),
        ("sha1", ["-macalg", "sha1"], "x", ["--passphrase", "x"]),
        ("empty", [], "", ["--passphrase", ""]),
        ("none", [], "", []),
        ("legacy-none", ["-legacy"], "", []),
    ]

    // MARK: PKCS#12 files (swift-nio-ssl SSLPKCS12Bundle.swift:62)

    @Test(arguments: Self.exports.map(\.name))
    func aPKCS12FileOfCertificatesOnlyIsRefusedAsATrustStore(export: String) async throws {
        let (_, arguments, password, probe) = try #require(Self.exports.first { $0.name == export })
        let files = try await Files()
        let one = try await files.pkcs12("one.p12", ["-nokeys", "-in", "one.crt"] + arguments, password: password)
        let outcome = try await Probe.run("identity", "-", ["--pkcs12", one] + probe)
        #expect(outcome.exitedNormally, "\(outcome)")
        #expect(
            outcome.output == "error invalidRequest the PKCS#12 file \(one) holds no private key, only 1 certificate: "
                + "it is a trust store, not a client identity",
            "\(outcome)"
        )
        let two = try await files.pkcs12(
            "two.p12",
            ["-nokeys", "-in", "one.crt", "-certfile", "two.crt"] + arguments,
            password: password
        )
        let both = try await Probe.run("identity", "-", ["--pkcs12", two] + probe)
        #expect(
            both.output.hasSuffix(
                "holds no private key, only 2 certificates: it is a trust store, not a client identity"
            ),
            "\(both)"
        )
    }

    @Test(arguments: Self.exports.map(\.name))
    func aPKCS12FileOfAKeyOnlyIsRefused(export: String) async throws {
        let (_, arguments, password, probe) = try #require(Self.exports.first { $0.name == export })
        let files = try await Files()
        let file = try await files.pkcs12("key.p12", ["-nocerts", "-inkey", "one.key"] + arguments, password: password)
        let outcome = try await Probe.run("identity", "-", ["--pkcs12", file] + probe)
        #expect(outcome.exitedNormally, "\(outcome)")
        #expect(
            outcome.output
                == "error invalidRequest the PKCS#12 file \(file) holds a private key but no certificate",
            "\(outcome)"
        )
    }

    @Test(arguments: Self.exports.map(\.name))
    func aPKCS12FileWhoseCertificatesAreAnotherKeysIsRefused(export: String) async throws {
        let (_, arguments, password, probe) = try #require(Self.exports.first { $0.name == export })
        let files = try await Files()
        let file = try await files.pkcs12(
            "other.p12",
            ["-nocerts", "-inkey", "one.key", "-certfile", "two.crt"] + arguments,
            password: password
        )
        let outcome = try await Probe.run("identity", "-", ["--pkcs12", file] + probe)
        #expect(outcome.exitedNormally, "\(outcome)")
        #expect(
            outcome.output
                == "error invalidRequest the PKCS#12 file \(file) holds a private key, but its certificate is not "
                + "the key's",
            "\(outcome)"
        )
        let others = files.path("others.crt")
        let pems = try [files.path("two.crt"), files.path("ed.crt")].map {
            try String(contentsOfFile: $0, encoding: .utf8)
        }
        try pems.joined().write(toFile: others, atomically: true, encoding: .utf8)
        let two = try await files.pkcs12(
            "others.p12",
            ["-nocerts", "-inkey", "one.key", "-certfile", others] + arguments,
            password: password
        )
        let both = try await Probe.run("identity", "-", ["--pkcs12", two] + probe)
        #expect(both.exitedNormally, "\(both)")
        #expect(both.output.hasSuffix("holds a private key, but none of its 2 certificates is the key's"), "\(both)")
    }

    /// The check lets through every file swift-nio-ssl reads: a key with its certificate (and another certificate
    /// beside them), P-256 or Ed25519, however it is exported. A wrong passphrase is the library's refusal.
    @Test(arguments: Self.exports.map(\.name))
    func aPKCS12FileWithAKeyAndItsCertificateLoads(export: String) async throws {
        let (_, arguments, password, probe) = try #require(Self.exports.first { $0.name == export })
        let files = try await Files()
        let file = try await files.pkcs12(
            "one.p12",
            ["-inkey", "one.key", "-in", "one.crt", "-certfile", "two.crt"] + arguments,
            password: password
        )
        let outcome = try await Probe.run("identity", "-", ["--pkcs12", file] + probe)
        #expect(outcome.exitedNormally && outcome.output == "identity 2 certificates", "\(outcome)")
        let ed = try await files.pkcs12(
            "ed.p12",
            ["-inkey", "ed.key", "-in", "ed.crt"] + arguments,
            password: password
        )
        let edOutcome = try await Probe.run("identity", "-", ["--pkcs12", ed] + probe)
        #expect(edOutcome.exitedNormally && edOutcome.output == "identity 1 certificates", "\(edOutcome)")
        let wrong = try await Probe.run("identity", "-", ["--pkcs12", file, "--passphrase", "wrong"])
        #expect(wrong.exitedNormally, "\(wrong)")
        #expect(wrong.output.hasPrefix("error invalidRequest \(file) is not a PKCS#12 file this passphrase opens"))
    }

    // MARK: An Ed25519 client key and a ServerTrustManager (swift-nio-ssl SSLPrivateKey.swift:449)

    @Test(arguments: ["pem", "pkcs12"])
    func anEd25519ClientKeyWithATrustManagerFailsEachHTTPSRequest(source: String) async throws {
        let files = try await Files()
        var identity = ["--cert", files.path("ed.crt"), "--key", files.path("ed.key")]
        if source == "pkcs12" {
            let file = try await files.pkcs12("ed.p12", ["-inkey", "ed.key", "-in", "ed.crt"])
            identity = ["--pkcs12", file, "--passphrase", "x"]
        }
        let url = "https://127.0.0.1:\(try Sockets.refusingPort())/"
        let outcome = try await Probe.run("identity", url, identity + ["--trust", "every"])
        #expect(outcome.exitedNormally, "\(outcome)")
        #expect(
            outcome.output
                == "error invalidRequest the client certificate's Ed25519 key cannot be used with a "
                + "ServerTrustManager (the TLS library encodes RSA and EC keys only, and a per-host TLS configuration "
                + "needs the encoding); use an RSA or EC key, or no ServerTrustManager",
            "\(outcome)"
        )
        // Without a trust manager nothing hashes the key: the request is made (and refused by the closed port).
        let untrusted = try await Probe.run("identity", url, identity)
        #expect(untrusted.exitedNormally && untrusted.output.hasPrefix("error connectionFailed"), "\(untrusted)")
        // An EC key beside a trust manager is the engine's as before.
        let ec = try await Probe.run(
            "identity",
            url,
            ["--cert", files.path("one.crt"), "--key", files.path("one.key"), "--trust", "every"]
        )
        #expect(ec.exitedNormally && ec.output.hasPrefix("error connectionFailed"), "\(ec)")
    }

    // MARK: A proxy host or port (async-http-client ConnectionTarget.swift:28, :38)

    /// The forwarding client parses the proxy's `host:port` as a URL's, where a port above 65535 of an IP host traps
    /// in NIO's `SocketAddress` and a host that decodes to `]` traps async-http-client's empty-host precondition.
    @Test(arguments: [
        (
            ["--proxy-host", "127.0.0.1", "--proxy-port", "99999"],
            "the proxy http://127.0.0.1:99999 cannot be used: it has the port 99999, which is not in 1...65535"
        ),
        (
            ["--proxy-host", "::1", "--proxy-port", "65536"],
            "the proxy http://[::1]:65536 cannot be used: it has the port 65536, which is not in 1...65535"
        ),
        (
            ["--proxy-host", "%5D", "--proxy-port", "3128"],
            "the proxy http://%5D:3128 cannot be used: it has the byte \"%\" in its host"
        ),
        (
            ["--proxy-host", "127.0.0.1", "--proxy-port", "0", "--proxy-kind", "socks"],
            "the proxy socks5://127.0.0.1:0 cannot be used: it has the port 0, which is not in 1...65535"
        ),
        (
            ["--proxy-env", "http://%5D:3128"],
            "the proxy variable http_proxy=\"http://%5D:3128\" cannot be used: it has the byte \"%\" in its host"
        ),
        (
            ["--proxy-env", "http://[::1]:3128x"],
            "the proxy variable http_proxy=\"http://[::1]:3128x\" cannot be used: its port is not a number in 1...65535"
        ),
    ])
    func aProxyHostOrPortNoRequestURLCouldHaveFailsAsProxyFailed(options: [String], message: String) async throws {
        let outcome = try await Probe.run("proxy", "http://127.0.0.1:\(try Sockets.refusingPort())/x", options)
        #expect(outcome.exitedNormally, "\(outcome)")
        #expect(outcome.output == "error proxyFailed " + message, "\(outcome)")
    }

    @Test func proxyHostsARequestURLCouldHaveAreTaken() throws {
        for host in ["proxy.corp", "127.0.0.1", "::1", "fe80::1%eth0", String(repeating: "a", count: 253)] {
            let route = ProxyRoute(.http(host: host, port: 3128))
            #expect(try route.proxy(scheme: "http", host: "example.com", port: 80)?.host == host)
        }
        let refused = [
            ("", "it has no host"),
            (String(repeating: "a", count: 254), "it has a host name of 254 bytes, longer than DNS allows (253)"),
            ("[::1]", "it has the host [[::1], which is not an IPv6 address"),
        ]
        let url = try #require(URL(string: "https://a/"))
        for (host, reason) in refused {
            do {
                _ = try ProxyConfiguration.socks(host: host).proxy(for: url)
                Issue.record("the proxy host \"\(host)\" was taken")
            } catch {
                #expect(error.code == .proxyFailed && error.message.hasSuffix(reason), "\(error.message)")
            }
        }
    }

    // MARK: An upload stream element of 4 GiB or more (NIO ByteBuffer-core.swift:183)

    @Test func anUploadStreamElementOf4GiBIsHandedOverInPieces() async throws {
        let url = try await FaultServer.url("/ok")
        let outcome = try await Probe.run(
            "upload-element",
            url,
            ["--element-bytes", "\((1 << 32) + 1)", "--length", "16"]
        )
        #expect(outcome.exitedNormally, "\(outcome)")
        #expect(
            outcome.output
                == "error uploadFailed the upload stream produced more than 16 bytes, but its declared length is 16",
            "\(outcome)"
        )
    }

    /// The slicing itself, with pieces of 1,000 bytes instead of 1 MiB: the same code, another size.
    @Test func anElementLargerThanAPieceIsCopiedInPiecesAndASmallerOneWhole() async throws {
        let large = Data((0..<2_500).map { UInt8($0 % 251) })
        let exact = Data(repeating: 7, count: 1_000)
        let stream = AsyncStream<Data> { continuation in
            for element in [Data([1, 2, 3]), large, exact, Data()] { continuation.yield(element) }
            continuation.finish()
        }
        let body = OneShotBody(stream, length: 3_503, pieceSize: 1_000)
        var sizes: [Int] = []
        var bytes = Data()
        for try await chunk in body.makeChunks(summary: RequestSummary(methodName: "PUT", url: "http://127.0.0.1/")) {
            sizes.append(chunk.readableBytes)
            bytes.append(contentsOf: chunk.readableBytesView)
        }
        #expect(sizes == [3, 1_000, 1_000, 500, 1_000, 0])
        #expect(bytes == Data([1, 2, 3]) + large + exact)
    }
}
