import Crypto
import Foundation
import SwiftASN1
import Testing
import X509

@testable import Kite

/// The reason a trust failure names, read from the server's certificate (`TrustDiagnosis`), for certificates
/// made in the test.
@Suite struct TrustDiagnosisTests {
    static let now = Date()

    /// A certificate with `commonName`, valid around `now` unless `expired`, with `names` as its subjectAltName DNS
    /// names (none: no subjectAltName extension at all): self-signed, or signed by `issuer`.
    static func certificate(
        commonName: String,
        names: [String],
        expired: Bool = false,
        issuer: (certificate: Certificate, key: P256.Signing.PrivateKey)? = nil
    ) throws -> Certificate {
        try self.signed(commonName: commonName, names: names, expired: expired, issuer: issuer).certificate
    }

    /// `certificate(…)` with its private key.
    static func signed(
        commonName: String,
        names: [String] = [],
        expired: Bool = false,
        issuer: (certificate: Certificate, key: P256.Signing.PrivateKey)? = nil
    ) throws -> (certificate: Certificate, key: P256.Signing.PrivateKey) {
        let key = P256.Signing.PrivateKey()
        let subject = try DistinguishedName { CommonName(commonName) }
        let extensions =
            names.isEmpty
            ? Certificate.Extensions()
            : try Certificate.Extensions { SubjectAlternativeNames(names.map { .dnsName($0) }) }
        let certificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: Certificate.PublicKey(key.publicKey),
            notValidBefore: Self.now.addingTimeInterval(expired ? -7200 : -3600),
            notValidAfter: Self.now.addingTimeInterval(expired ? -3600 : 3600),
            issuer: issuer?.certificate.subject ?? subject,
            subject: subject,
            extensions: extensions,
            issuerPrivateKey: Certificate.PrivateKey(issuer?.key ?? key)
        )
        return (certificate, key)
    }

    @Test func aSelfSignedCertificateWithOnlyACommonNameIsReportedAsSelfSignedThenAsNamingNoHost() async throws {
        // What `openssl req -x509 -subj /CN=localhost` makes: not trusted, and even once trusted the CN is the host
        // asked for, but no client matches a CN any more (RFC 9525).
        let leaf = try Self.certificate(commonName: "localhost", names: [])
        let reason = await TrustDiagnosis.reason(for: [leaf], host: "localhost", roots: [], now: Self.now)
        #expect(
            reason
                == "its certificate is self-signed (CN=localhost) and not among the trusted roots; also, its "
                + "certificate has no subjectAltName, and its subject (CN=localhost) does not name a host "
                + "(RFC 9525): it needs a subjectAltName for localhost"
        )
        // Trusted (say, pinned as a root), only the name is left.
        let trusted = await TrustDiagnosis.reason(for: [leaf], host: "localhost", roots: [leaf], now: Self.now)
        #expect(trusted.hasPrefix("its certificate has no subjectAltName"), "\(trusted)")
    }

    @Test func aTrustedCertificateForOtherNamesIsReportedWithThem() async throws {
        let leaf = try Self.certificate(commonName: "localhost", names: ["wrong.example", "other.example"])
        let reason = await TrustDiagnosis.reason(for: [leaf], host: "localhost", roots: [leaf], now: Self.now)
        #expect(reason == "its certificate is for another host (wrong.example, other.example)")
        // A handshake that did not check the name has nothing to say about it.
        let nameless = await TrustDiagnosis.reason(
            for: [leaf],
            host: "localhost",
            roots: [leaf],
            checksName: false,
            now: Self.now
        )
        #expect(nameless == "its certificate failed verification")
    }

    @Test func anUntrustedIssuerIsReportedBeforeTheNames() async throws {
        let root = try Self.signed(commonName: "Kite test root")
        let other = try Self.certificate(commonName: "another root", names: [])
        let leaf = try Self.certificate(commonName: "leaf", names: ["wrong.example"], issuer: root)
        let untrusted = await TrustDiagnosis.reason(for: [leaf], host: "localhost", roots: [other], now: Self.now)
        #expect(
            untrusted
                == "its certificate (issued by CN=Kite test root) does not lead to a trusted root; also, its "
                + "certificate is for another host (wrong.example)"
        )
        let trusted = await TrustDiagnosis.reason(
            for: [leaf],
            host: "localhost",
            roots: [root.certificate],
            now: Self.now
        )
        #expect(trusted == "its certificate is for another host (wrong.example)")
    }

    @Test func expiryOfATrustedCertificateIsReportedBeforeTheNames() async throws {
        let leaf = try Self.certificate(commonName: "localhost", names: [], expired: true)
        let reason = await TrustDiagnosis.reason(for: [leaf], host: "localhost", roots: [leaf], now: Self.now)
        #expect(reason.hasPrefix("its certificate expired on "), "\(reason)")
        #expect(reason.contains("; also, its certificate has no subjectAltName"), "\(reason)")
    }
}

/// Host names against a certificate's subjectAltName (`TrustChecks.names`), which the evaluators' host check
/// (`requireName`) and the diagnosis share.
@Suite struct CertificateNameTests {
    @Test(
        arguments: [
            ("localhost", ["localhost"], true),
            ("LOCALHOST", ["localhost"], true),
            ("localhost", ["localhost.example"], false),
            ("api.example.com", ["*.example.com"], true),
            ("example.com", ["*.example.com"], false),
            ("a.b.example.com", ["*.example.com"], false),
            ("example.com", ["*.com"], false),
            ("com", ["*"], false),
            ("", [""], false),
        ]
    )
    func aHostMatchesANameExactlyOrByOneLeftmostWildcard(host: String, names: [String], matches: Bool) throws {
        let leaf = try TrustDiagnosisTests.certificate(commonName: "test", names: names)
        #expect(TrustChecks.names(host, leaf) == matches)
    }

    @Test func aPinnedSingleLabelHostPassesTheHostCheck() throws {
        let leaf = try TrustDiagnosisTests.certificate(commonName: "test", names: ["localhost"])
        #expect(throws: Never.self) { try TrustChecks.requireName("localhost", in: leaf) }
    }
}

/// The diagnosis over the network: bounded by its own timeout, whatever the server does on the second connection.
@Suite(.timeLimit(.minutes(1))) struct TrustDiagnosisNetworkTests {
    @Test func aServerSilentOnTheSecondConnectionDelaysTheErrorByTwoSecondsAtMost() async throws {
        let (_, untrusted) = try await TrustServers.shared.server(.selfSigned)
        let relay = try await FirstConnectionRelay.start(to: try #require(URL(string: untrusted)?.port))
        defer { relay.stop() }
        var configuration = Session.Configuration()
        configuration.timeouts.connect = .seconds(10)
        let session = Session(configuration: configuration)
        defer { Task { try? await session.shutdown() } }
        let clock = ContinuousClock()
        let start = clock.now
        let error = await session.request("https://127.0.0.1:\(relay.port)/get").serializingData().response.error
        let took = start.duration(to: clock.now)
        #expect(error?.code == .serverTrustEvaluationFailed)
        #expect(error?.message == "the server 127.0.0.1 is not trusted: its certificate failed verification")
        // Two seconds for the diagnosis, the rest for one handshake on loopback; the connect timeout is 10 s.
        #expect(took < .seconds(6), "\(took)")
    }
}
