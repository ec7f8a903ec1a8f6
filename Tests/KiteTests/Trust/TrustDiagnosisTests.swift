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

    /// A self-signed certificate with `commonName`, valid around `now` unless `expired`, with `names` as its
    /// subjectAltName DNS names (none: no subjectAltName extension at all).
    static func certificate(commonName: String, names: [String], expired: Bool = false) throws -> Certificate {
        let key = P256.Signing.PrivateKey()
        let subject = try DistinguishedName { CommonName(commonName) }
        let extensions =
            names.isEmpty
            ? Certificate.Extensions()
            : try Certificate.Extensions { SubjectAlternativeNames(names.map { .dnsName($0) }) }
        return try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: Certificate.PublicKey(key.publicKey),
            notValidBefore: Self.now.addingTimeInterval(expired ? -7200 : -3600),
            notValidAfter: Self.now.addingTimeInterval(expired ? -3600 : 3600),
            issuer: subject,
            subject: subject,
            extensions: extensions,
            issuerPrivateKey: Certificate.PrivateKey(key)
        )
    }

    @Test func aCertificateWithOnlyACommonNameIsReportedAsNamingNoHostNotAsAnotherHosts() throws {
        // What `openssl req -x509 -subj /CN=localhost` makes: the CN is the host asked for, but no client
        // matches a CN any more (RFC 9525).
        let leaf = try Self.certificate(commonName: "localhost", names: [])
        let reason = TrustDiagnosis.reason(for: leaf, host: "localhost", now: Self.now)
        #expect(
            reason
                == "its certificate has no subjectAltName, and its subject (CN=localhost) does not name a host "
                + "(RFC 9525): it needs a subjectAltName for localhost"
        )
    }

    @Test func aCertificateForOtherNamesIsReportedWithThem() throws {
        let leaf = try Self.certificate(commonName: "localhost", names: ["wrong.example", "other.example"])
        let reason = TrustDiagnosis.reason(for: leaf, host: "localhost", now: Self.now)
        #expect(reason == "its certificate is for another host (wrong.example, other.example)")
    }

    @Test func aCertificateForTheHostIsReportedAsSelfSigned() throws {
        let leaf = try Self.certificate(commonName: "Kite test", names: ["localhost"])
        let reason = TrustDiagnosis.reason(for: leaf, host: "localhost", now: Self.now)
        #expect(reason == "its certificate is self-signed (CN=Kite test) and not among the trusted roots")
    }

    @Test func expiryIsReportedBeforeTheNames() throws {
        let leaf = try Self.certificate(commonName: "localhost", names: [], expired: true)
        let reason = TrustDiagnosis.reason(for: leaf, host: "localhost", now: Self.now)
        #expect(reason.hasPrefix("its certificate expired on "), "\(reason)")
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
