import Crypto
import Foundation
import HTTPTypes
import KiteTestServer
import NIOSSL
import Testing
import X509

@testable import Kite

/// Servers over TLS with each of the test authority's certificates, started once for the suites.
actor TrustServers {
    static let shared = TrustServers()
    typealias Started = (TestCertificateAuthority, [TestCertificateAuthority.ServerCertificate: KiteTestServer])
    /// Started once: concurrent callers wait for the same start (the actor is reentrant across its awaits).
    private var starting: Task<Started, any Error>?

    /// The authority and a running server presenting `certificate`.
    func server(
        _ certificate: TestCertificateAuthority.ServerCertificate
    ) async throws -> (TestCertificateAuthority, String) {
        let task = self.starting ?? Task { try await Self.start() }
        self.starting = task
        let (authority, servers) = try await task.value
        return (authority, servers[certificate]!.baseURL)
    }

    private static func start() async throws -> Started {
        let authority = try TestCertificateAuthority()
        var servers: [TestCertificateAuthority.ServerCertificate: KiteTestServer] = [:]
        for kind in TestCertificateAuthority.ServerCertificate.allCases {
            servers[kind] = try await KiteTestServer.start(
                host: "127.0.0.1",
                port: 0,
                tls: KiteTestServer.TLSOptions(authority: authority, certificate: kind)
            )
        }
        return (authority, servers)
    }
}

@Suite struct ServerTrustTests {
    /// A session trusting only the test root, with `manager`.
    private func session(
        _ authority: TestCertificateAuthority,
        manager: ServerTrustManager? = nil,
        http1Only: Bool = false
    ) -> Session {
        var configuration = Session.Configuration()
        configuration.tls.trustRoots = .certificates([authority.root.certificate])
        configuration.timeouts.connect = .seconds(5)
        if http1Only { configuration.httpVersion = .http1Only }
        return Session(configuration: configuration, serverTrustManager: manager)
    }

    /// The outcome of a GET to the server presenting `certificate`: the status, or the error.
    private func get(
        _ certificate: TestCertificateAuthority.ServerCertificate,
        http1Only: Bool = false,
        evaluator: ((TestCertificateAuthority) -> any ServerTrustEvaluating)? = nil
    ) async throws -> Result<Int, KiteError> {
        let (authority, base) = try await TrustServers.shared.server(certificate)
        let manager = evaluator.map { ServerTrustManager(evaluators: ["127.0.0.1": $0(authority)]) }
        let session = self.session(authority, manager: manager, http1Only: http1Only)
        defer { Task { try await session.shutdown() } }
        let response = await session.request(base + "/get").serializingData().response
        if let error = response.error { return .failure(error) }
        return .success(Int(response.response?.status.code ?? 0))
    }

    private func expectRefused(
        _ result: Result<Int, KiteError>,
        _ reason: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        guard case .failure(let error) = result else {
            Issue.record("expected a refusal, got \(result)", sourceLocation: sourceLocation)
            return
        }
        #expect(error.code == .serverTrustEvaluationFailed, sourceLocation: sourceLocation)
        #expect(error.message.hasPrefix("the server 127.0.0.1 is not trusted: "), sourceLocation: sourceLocation)
        #expect(error.message.contains(reason), "\(error.message)", sourceLocation: sourceLocation)
    }

    // MARK: Default evaluation (the handshake)

    @Test(arguments: [false, true])
    func theDefaultEvaluationTrustsAChainToATrustedRoot(http1Only: Bool) async throws {
        #expect(try await self.get(.leaf, http1Only: http1Only) == .success(200))
        #expect(
            try await self.get(.leaf, http1Only: http1Only, evaluator: { _ in DefaultTrustEvaluator() })
                == .success(200)
        )
    }

    @Test func everyDefaultFailureNamesWhatDidNotMatch() async throws {
        self.expectRefused(try await self.get(.expired), "its certificate expired on ")
        self.expectRefused(try await self.get(.wrongHost), "its certificate is for another host (wrong.example)")
        self.expectRefused(try await self.get(.selfSigned), "is self-signed")
        self.expectRefused(try await self.get(.untrustedLeaf), "does not lead to a trusted root")
    }

    @Test func withoutHostValidationAWrongHostPassesButExpiryDoesNot() async throws {
        let evaluator: (TestCertificateAuthority) -> any ServerTrustEvaluating = { _ in
            DefaultTrustEvaluator(validateHost: false)
        }
        #expect(try await self.get(.wrongHost, evaluator: evaluator) == .success(200))
        self.expectRefused(try await self.get(.expired, evaluator: evaluator), "expired")
    }

    // MARK: Pinned certificates

    @Test(arguments: [false, true])
    func pinningTheLeafOrItsIntermediate(http1Only: Bool) async throws {
        #expect(
            try await self.get(.leaf, http1Only: http1Only) {
                PinnedCertificatesTrustEvaluator(certificates: [$0.leaf.certificate])
            } == .success(200)
        )
        #expect(
            try await self.get(.leaf, http1Only: http1Only) {
                PinnedCertificatesTrustEvaluator(certificates: [$0.intermediate.certificate])
            } == .success(200)
        )
        self.expectRefused(
            try await self.get(.leaf, http1Only: http1Only) {
                PinnedCertificatesTrustEvaluator(certificates: [$0.selfSigned.certificate])
            },
            "no pinned certificate matches the server's certificate"
        )
    }

    @Test func aSelfSignedPinIsAcceptedOnlyWhenAskedTo() async throws {
        #expect(
            try await self.get(.selfSigned) {
                PinnedCertificatesTrustEvaluator(
                    certificates: [$0.selfSigned.certificate],
                    acceptSelfSignedCertificates: true
                )
            } == .success(200)
        )
        self.expectRefused(
            try await self.get(.selfSigned) {
                PinnedCertificatesTrustEvaluator(certificates: [$0.selfSigned.certificate])
            },
            "self-signed"
        )
    }

    @Test func withoutDefaultValidationThePinAloneDecidesButTheHostStillCounts() async throws {
        #expect(
            try await self.get(.expired) {
                PinnedCertificatesTrustEvaluator(
                    certificates: [$0.expired.certificate],
                    performDefaultValidation: false
                )
            } == .success(200)
        )
        self.expectRefused(
            try await self.get(.wrongHost) {
                PinnedCertificatesTrustEvaluator(
                    certificates: [$0.wrongHost.certificate],
                    performDefaultValidation: false
                )
            },
            "is not for this host"
        )
        #expect(
            try await self.get(.wrongHost) {
                PinnedCertificatesTrustEvaluator(
                    certificates: [$0.wrongHost.certificate],
                    performDefaultValidation: false,
                    validateHost: false
                )
            } == .success(200)
        )
    }

    // MARK: Public keys, composite, disabled, closure

    @Test func pinnedPublicKeysOfTheLeafOrItsIssuer() async throws {
        #expect(
            try await self.get(.leaf) { PublicKeysTrustEvaluator(keys: [$0.leaf.certificate.publicKey]) }
                == .success(200)
        )
        #expect(
            try await self.get(.leaf) { PublicKeysTrustEvaluator(keys: [$0.intermediate.certificate.publicKey]) }
                == .success(200)
        )
        self.expectRefused(
            try await self.get(.leaf) { PublicKeysTrustEvaluator(keys: [$0.otherRoot.certificate.publicKey]) },
            "no pinned public key matches"
        )
        #expect(
            try await self.get(.untrustedLeaf) {
                PublicKeysTrustEvaluator(keys: [$0.otherRoot.certificate.publicKey], performDefaultValidation: false)
            } == .success(200)
        )
    }

    @Test func aCompositeNeedsEveryEvaluator() async throws {
        #expect(
            try await self.get(.leaf) {
                CompositeTrustEvaluator(evaluators: [
                    DefaultTrustEvaluator(),
                    PinnedCertificatesTrustEvaluator(certificates: [$0.intermediate.certificate]),
                ])
            } == .success(200)
        )
        self.expectRefused(
            try await self.get(.leaf) {
                CompositeTrustEvaluator(evaluators: [
                    DefaultTrustEvaluator(), PublicKeysTrustEvaluator(keys: [$0.otherRoot.certificate.publicKey]),
                ])
            },
            "no pinned public key matches"
        )
        // The strictest handshake of the parts: a disabled part does not switch the default validation off.
        self.expectRefused(
            try await self.get(.expired) { _ in
                CompositeTrustEvaluator(evaluators: [DisabledTrustEvaluator(), DefaultTrustEvaluator()])
            },
            "expired"
        )
    }

    @Test(arguments: TestCertificateAuthority.ServerCertificate.allCases)
    func theDisabledEvaluatorTrustsAnything(certificate: TestCertificateAuthority.ServerCertificate) async throws {
        #expect(try await self.get(certificate) { _ in DisabledTrustEvaluator() } == .success(200))
    }

    @Test func aClosureEvaluatorsErrorNamesTheHost() async throws {
        struct Unexpected: Error, CustomStringConvertible {
            var description: String { "unexpected issuer" }
        }
        let result = try await self.get(.leaf) { authority in
            ClosureTrustEvaluator { trust, _ in
                if trust.leaf?.issuer != authority.root.certificate.subject { throw Unexpected() }
            }
        }
        self.expectRefused(result, "unexpected issuer")
    }

    // MARK: Every evaluator against every certificate

    /// An evaluator under test and the certificates it accepts, in `ServerCertificate.allCases` order
    /// (leaf, expired, wrong host, self-signed, untrusted root).
    struct MatrixRow: Sendable, CustomTestStringConvertible {
        let name: String
        let make: @Sendable (TestCertificateAuthority) -> any ServerTrustEvaluating
        let accepts: [Bool]
        var testDescription: String { self.name }
    }

    static let matrix: [MatrixRow] = [
        MatrixRow(
            name: "default",
            make: { _ in DefaultTrustEvaluator() },
            accepts: [true, false, false, false, false]
        ),
        MatrixRow(
            name: "pinned leaf",
            make: { PinnedCertificatesTrustEvaluator(certificates: [$0.leaf.certificate]) },
            accepts: [true, false, false, false, false]
        ),
        MatrixRow(
            name: "pinned intermediate",
            make: { PinnedCertificatesTrustEvaluator(certificates: [$0.intermediate.certificate]) },
            accepts: [true, false, false, false, false]
        ),
        MatrixRow(
            name: "pinned self-signed, accepted as anchor",
            make: {
                PinnedCertificatesTrustEvaluator(
                    certificates: [$0.selfSigned.certificate],
                    acceptSelfSignedCertificates: true
                )
            },
            accepts: [false, false, false, true, false]
        ),
        MatrixRow(
            name: "intermediate's public key",
            make: { PublicKeysTrustEvaluator(keys: [$0.intermediate.certificate.publicKey]) },
            accepts: [true, false, false, false, false]
        ),
        MatrixRow(
            name: "other root's public key without default validation",
            make: {
                PublicKeysTrustEvaluator(keys: [$0.otherRoot.certificate.publicKey], performDefaultValidation: false)
            },
            accepts: [false, false, false, false, true]
        ),
        MatrixRow(
            name: "composite of default and pinned intermediate",
            make: {
                CompositeTrustEvaluator(evaluators: [
                    DefaultTrustEvaluator(),
                    PinnedCertificatesTrustEvaluator(certificates: [$0.intermediate.certificate]),
                ])
            },
            accepts: [true, false, false, false, false]
        ),
        MatrixRow(name: "disabled", make: { _ in DisabledTrustEvaluator() }, accepts: [true, true, true, true, true]),
        MatrixRow(
            name: "closure: issued by the intermediate, nothing verified first",
            make: { authority in
                ClosureTrustEvaluator(handshakeVerification: .none) { trust, host in
                    guard trust.leaf?.issuer == authority.intermediate.certificate.subject else {
                        throw KiteError(code: .serverTrustEvaluationFailed, message: "\(host): not our intermediate")
                    }
                }
            },
            accepts: [true, true, true, false, false]
        ),
    ]

    @Test(arguments: Self.matrix)
    func everyEvaluatorAgainstEveryCertificate(row: MatrixRow) async throws {
        for (certificate, accepted) in zip(TestCertificateAuthority.ServerCertificate.allCases, row.accepts) {
            let result = try await self.get(certificate, evaluator: row.make)
            switch result {
            case .success(let status):
                #expect(accepted && status == 200, "\(row.name) accepted \(certificate)")
            case .failure(let error):
                #expect(!accepted, "\(row.name) refused \(certificate): \(error.message)")
                #expect(error.code == .serverTrustEvaluationFailed, "\(row.name), \(certificate): \(error)")
            }
        }
    }

    // MARK: The manager

    @Test func aHostWithoutAnEvaluatorIsRefusedWhenAllMustBeEvaluated() async throws {
        let (authority, base) = try await TrustServers.shared.server(.leaf)
        let strict = self.session(
            authority,
            manager: ServerTrustManager(evaluators: ["localhost": DefaultTrustEvaluator()])
        )
        defer { Task { try await strict.shutdown() } }
        let error = await strict.request(base + "/get").serializingData().response.error
        #expect(error?.code == .serverTrustEvaluationFailed)
        #expect(error?.message.contains("no trust evaluator is configured for the host 127.0.0.1") == true)

        let lenient = self.session(
            authority,
            manager: ServerTrustManager(allHostsMustBeEvaluated: false, evaluators: [:])
        )
        defer { Task { try await lenient.shutdown() } }
        #expect(await lenient.request(base + "/get").serializingData().response.response?.status.code == 200)
    }

    @Test func plainHTTPIsNotEvaluated() async throws {
        let (authority, _) = try await TrustServers.shared.server(.leaf)
        let session = self.session(
            authority,
            manager: ServerTrustManager(evaluators: ["localhost": DefaultTrustEvaluator()])
        )
        defer { Task { try await session.shutdown() } }
        let base = try await SharedTestServer.shared.baseURL()
        #expect(await session.request(base + "/get").serializingData().response.response?.status.code == 200)
    }

    @Test func wildcardKeysMatchOneLabelAndExactKeysWin() throws {
        let exact = DefaultTrustEvaluator(validateHost: false)
        let manager = ServerTrustManager(evaluators: [
            "*.example.com": DisabledTrustEvaluator(), "api.example.com": exact,
        ])
        #expect(try manager.serverTrustEvaluator(forHost: "cdn.example.com") is DisabledTrustEvaluator)
        #expect(try manager.serverTrustEvaluator(forHost: "API.example.com") is DefaultTrustEvaluator)
        #expect(throws: KiteError.self) { try manager.serverTrustEvaluator(forHost: "a.b.example.com") }
        #expect(throws: KiteError.self) { try manager.serverTrustEvaluator(forHost: "example.com") }
    }

    // MARK: Nothing leaks before trust is decided

    @Test(arguments: [false, true])
    func aRefusedServerReceivesNoRequestByte(refuse: Bool) async throws {
        let authority = try TestCertificateAuthority()
        let server = try await RecordingTLSServer(presenting: authority.leaf)
        let evaluator: any ServerTrustEvaluating =
            refuse
            ? PublicKeysTrustEvaluator(keys: [authority.otherRoot.certificate.publicKey])
            : DefaultTrustEvaluator()
        let session = self.session(authority, manager: ServerTrustManager(evaluators: ["127.0.0.1": evaluator]))
        let url = "https://127.0.0.1:\(server.port)/post"
        var headers = HTTPFields()
        headers[.authorization] = "Bearer secret-token"
        for _ in 0..<2 {
            let response = await session.upload(Data("body".utf8), to: url, headers: headers).serializingData().response
            #expect(
                response.error?.code == (refuse ? .serverTrustEvaluationFailed : nil),
                "\(String(describing: response.error)) \(String(reflecting: response.error?.underlyingError))"
            )
        }
        try await session.shutdown()
        let received = String(decoding: server.receivedBytes, as: UTF8.self)
        if refuse {
            #expect(received.isEmpty, "the server received: \(received)")
        } else {
            #expect(received.contains("Bearer secret-token") && received.contains("body"))
        }
        try await server.shutdown()
    }

    @Test(arguments: [false, true])
    func aRefusedHTTP2ServerReceivesNoHeadersOrData(refuse: Bool) async throws {
        let authority = try TestCertificateAuthority()
        let server = try await RecordingTLSServer(presenting: authority.leaf, http2: true)
        let evaluator: any ServerTrustEvaluating =
            refuse
            ? PinnedCertificatesTrustEvaluator(certificates: [authority.selfSigned.certificate])
            : DefaultTrustEvaluator()
        let session = self.session(authority, manager: ServerTrustManager(evaluators: ["127.0.0.1": evaluator]))
        let response = await session.upload(Data("body".utf8), to: "https://127.0.0.1:\(server.port)/post")
            .serializingData().response
        #expect(
            response.error?.code == (refuse ? .serverTrustEvaluationFailed : nil),
            "\(String(describing: response.error))"
        )
        try await session.shutdown()
        let types = server.receivedHTTP2FrameTypes
        #expect(types.first == 0x4, "the client's SETTINGS come first: \(types)")
        // HEADERS is 0x1, DATA 0x0: a refused server sees neither.
        #expect(types.contains(0x1) == !refuse && types.contains(0x0) == !refuse, "\(types)")
        try await server.shutdown()
    }

    // MARK: Mutual TLS and loading

    @Test func mutualTLSWithAndWithoutAClientCertificate() async throws {
        let authority = try TestCertificateAuthority()
        let server = try await KiteTestServer.start(
            host: "127.0.0.1",
            port: 0,
            tls: KiteTestServer.TLSOptions(authority: authority, certificate: .leaf, clientCertificate: .required)
        )
        let start = ContinuousClock.now
        let anonymous = self.session(authority)
        let refused = await anonymous.request(server.baseURL + "/get").serializingData().response
        #expect(refused.error != nil && refused.response == nil)
        #expect(ContinuousClock.now - start < .seconds(10))
        try await anonymous.shutdown()

        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let certificateFile = folder.appendingPathComponent("client.pem")
        let keyFile = folder.appendingPathComponent("client-key.pem")
        try authority.client.certificatePEM.write(to: certificateFile, atomically: true, encoding: .utf8)
        try authority.client.privateKeyPEM.write(to: keyFile, atomically: true, encoding: .utf8)
        var configuration = Session.Configuration()
        configuration.tls.trustRoots = .certificates([authority.root.certificate])
        configuration.tls.clientIdentity = try ClientIdentity(certificateFile: certificateFile, privateKeyFile: keyFile)
        let identified = Session(configuration: configuration)
        let accepted = await identified.request(server.baseURL + "/get").serializingData().response
        #expect(accepted.response?.status.code == 200, "\(String(describing: accepted.error))")
        try await identified.shutdown()
        try await server.shutdown()
    }

    @Test func aPKCS12ClientIdentity() async throws {
        let authority = try TestCertificateAuthority()
        let server = try await KiteTestServer.start(
            host: "127.0.0.1",
            port: 0,
            tls: KiteTestServer.TLSOptions(authority: authority, certificate: .leaf, clientCertificate: .required)
        )
        let bundle = NIOSSLPKCS12Bundle(
            certificateChain: try authority.client.chain.map(TLSOptions.nioCertificate),
            privateKey: try NIOSSLPrivateKey(bytes: Array(authority.client.privateKeyPEM.utf8), format: .pem)
        )
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("\(UUID().uuidString).p12")
        try Data(try bundle.serialize(passphrase: Array("s3cret".utf8))).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }

        var configuration = Session.Configuration()
        configuration.tls.trustRoots = .certificates([authority.root.certificate])
        configuration.tls.clientIdentity = try ClientIdentity(pkcs12File: file, passphrase: "s3cret")
        #expect(configuration.tls.clientIdentity?.certificateChain.first == authority.client.certificate)
        let session = Session(configuration: configuration)
        let response = await session.request(server.baseURL + "/get").serializingData().response
        #expect(response.response?.status.code == 200, "\(String(describing: response.error))")
        try await session.shutdown()
        try await server.shutdown()
        do {
            _ = try ClientIdentity(pkcs12File: file, passphrase: "wrong")
            Issue.record("a wrong passphrase opened the file")
        } catch {
            #expect(error.code == .invalidRequest && error.message.contains(file.lastPathComponent))
        }
    }

    @Test func theMinimumTLSVersionRefusesOlderServers() async throws {
        let authority = try TestCertificateAuthority()
        let server = try await RecordingTLSServer(presenting: authority.leaf, maximumTLSVersion: .tlsv12)
        let url = "https://127.0.0.1:\(server.port)/get"
        var configuration = Session.Configuration()
        configuration.tls.trustRoots = .certificates([authority.root.certificate])
        configuration.collectsConnectionMetrics = true
        let lenient = Session(configuration: configuration)
        let accepted = await lenient.request(url).serializingData().response
        #expect(accepted.response?.status.code == 200)
        #expect(accepted.metrics?.connection?.tlsVersion == "TLSv1.2")
        try await lenient.shutdown()
        configuration.tls.minimumVersion = .v1_3
        let strict = Session(configuration: configuration)
        let refused = await strict.request(url).serializingData().response
        #expect(refused.error?.code == .tlsFailed, "\(String(describing: refused.error))")
        try await strict.shutdown()
        try await server.shutdown()
    }

    @Test func certificatesLoadFromPEMBundlesDERFilesAndFolders() throws {
        let authority = try TestCertificateAuthority()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try (authority.leaf.certificatePEM + authority.intermediate.certificatePEM)
            .write(to: folder.appendingPathComponent("a-chain.pem"), atomically: true, encoding: .utf8)
        try Data(authority.root.certificateDER).write(to: folder.appendingPathComponent("b-root.cer"))
        try "not a certificate".write(to: folder.appendingPathComponent("notes.txt"), atomically: true, encoding: .utf8)
        let loaded = try Certificates.inDirectory(folder)
        #expect(loaded == [authority.leaf.certificate, authority.intermediate.certificate, authority.root.certificate])

        let bad = folder.appendingPathComponent("bad.pem")
        try "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n".write(
            to: bad,
            atomically: true,
            encoding: .utf8
        )
        #expect(throws: KiteError.self) { try Certificates.load(from: bad) }
        do {
            _ = try Certificates.load(from: folder.appendingPathComponent("missing.pem"))
            Issue.record("a missing file loaded")
        } catch {
            #expect(error.code == .invalidRequest && error.message.contains("missing.pem"))
        }
    }
}
