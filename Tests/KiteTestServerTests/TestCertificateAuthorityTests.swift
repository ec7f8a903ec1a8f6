import Crypto
import Foundation
import KiteTestServer
import SwiftASN1
import Testing
import X509

@Suite("Test certificate authority")
struct TestCertificateAuthorityTests {
    /// A whole second, as certificates store times to the second.
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    /// Validates `leaf` with swift-certificates' RFC 5280 policy at the current time, and the server
    /// identity policy for `hostname` or `ip` when either is given.
    static func validate(
        _ leaf: TestCertificateAuthority.Credential,
        roots: [TestCertificateAuthority.Credential],
        hostname: String? = nil,
        ip: String? = nil
    ) async -> CertificateValidationResult {
        var verifier = Verifier(rootCertificates: CertificateStore(roots.map(\.certificate))) {
            RFC5280Policy()
            if hostname != nil || ip != nil {
                ServerIdentityPolicy(serverHostname: hostname, serverIP: ip)
            }
        }
        return await verifier.validate(leaf: leaf.certificate, intermediates: CertificateStore(leaf.chain.dropFirst()))
    }

    /// The certificates of a validated chain, or `nil` when validation failed.
    static func chain(_ result: CertificateValidationResult) -> [Certificate]? {
        guard case .validCertificate(let chain) = result else { return nil }
        return Array(chain)
    }

    @Test(
        "the leaf chains through the intermediate to the root for localhost, 127.0.0.1 and ::1",
        arguments: [("localhost", nil), (nil, "127.0.0.1"), (nil, "::1")] as [(String?, String?)]
    )
    func leafChainsToRoot(hostname: String?, ip: String?) async throws {
        let authority = try TestCertificateAuthority()
        let result = await Self.validate(authority.leaf, roots: [authority.root], hostname: hostname, ip: ip)
        #expect(
            Self.chain(result)
                == [authority.leaf.certificate, authority.intermediate.certificate, authority.root.certificate]
        )
    }

    @Test("the leaf is valid from an hour before now for a day")
    func leafValidity() throws {
        let leaf = try TestCertificateAuthority(now: Self.now).leaf.certificate
        #expect(leaf.notValidBefore == Self.now - 3600)
        #expect(leaf.notValidAfter == Self.now + 86400)
    }

    @Test("the leaf names localhost, 127.0.0.1 and ::1 and is for server authentication")
    func leafExtensions() throws {
        let leaf = try TestCertificateAuthority(now: Self.now).leaf.certificate
        let names = try #require(try leaf.extensions.subjectAlternativeNames)
        #expect(
            Array(names) == [
                .dnsName("localhost"),
                .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1])),
                .ipAddress(ASN1OctetString(contentBytes: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1])),
            ]
        )
        #expect(try leaf.extensions.extendedKeyUsage == ExtendedKeyUsage([.serverAuth]))
        #expect(try leaf.extensions.basicConstraints == .notCertificateAuthority)
        #expect(try leaf.extensions.keyUsage == KeyUsage(digitalSignature: true))
    }

    @Test("the root and the intermediate are certificate authorities that sign certificates and CRLs")
    func authorities() throws {
        let authority = try TestCertificateAuthority(now: Self.now)
        #expect(
            try authority.root.certificate.extensions.basicConstraints == .isCertificateAuthority(maxPathLength: nil)
        )
        #expect(
            try authority.intermediate.certificate.extensions.basicConstraints
                == .isCertificateAuthority(maxPathLength: 0)
        )
        for credential in [authority.root, authority.intermediate, authority.otherRoot] {
            #expect(try credential.certificate.extensions.keyUsage == KeyUsage(keyCertSign: true, cRLSign: true))
        }
        #expect(authority.root.certificate.issuer == authority.root.certificate.subject)
        #expect(authority.intermediate.certificate.issuer == authority.root.certificate.subject)
        #expect(authority.root.chain == [authority.root.certificate])
    }

    @Test("the expired certificate fails only because it expired")
    func expired() async throws {
        let fixed = try TestCertificateAuthority(now: Self.now).expired.certificate
        #expect(fixed.notValidBefore == Self.now - 2 * 86400)
        #expect(fixed.notValidAfter == Self.now - 86400)
        let authority = try TestCertificateAuthority()
        let result = await Self.validate(authority.expired, roots: [authority.root], hostname: "localhost")
        #expect(Self.chain(result) == nil)
        // Made a day and a half ahead, the "expired" certificate is valid now.
        let ahead = try TestCertificateAuthority(now: Date() + 1.5 * 86400)
        let valid = await Self.validate(ahead.expired, roots: [ahead.root], hostname: "localhost")
        #expect(Self.chain(valid)?.count == 3)
    }

    @Test("the wrong-host certificate is valid for wrong.example only")
    func wrongHost() async throws {
        let authority = try TestCertificateAuthority()
        let localhost = await Self.validate(authority.wrongHost, roots: [authority.root], hostname: "localhost")
        #expect(Self.chain(localhost) == nil)
        let loopback = await Self.validate(authority.wrongHost, roots: [authority.root], ip: "127.0.0.1")
        #expect(Self.chain(loopback) == nil)
        let named = await Self.validate(authority.wrongHost, roots: [authority.root], hostname: "wrong.example")
        #expect(Self.chain(named)?.count == 3)
    }

    @Test("the self-signed and the untrusted leaf are valid only for a client that trusts their own root")
    func untrusted() async throws {
        let authority = try TestCertificateAuthority()
        for leaf in [authority.selfSigned, authority.untrustedLeaf] {
            let refused = await Self.validate(leaf, roots: [authority.root], hostname: "localhost")
            #expect(Self.chain(refused) == nil)
        }
        let selfSigned = await Self.validate(authority.selfSigned, roots: [authority.selfSigned], hostname: "localhost")
        #expect(Self.chain(selfSigned) == [authority.selfSigned.certificate])
        let other = await Self.validate(authority.untrustedLeaf, roots: [authority.otherRoot], hostname: "localhost")
        #expect(Self.chain(other) == [authority.untrustedLeaf.certificate, authority.otherRoot.certificate])
    }

    @Test("the client certificate is for client authentication and chains to the root")
    func client() async throws {
        let authority = try TestCertificateAuthority()
        #expect(try authority.client.certificate.extensions.extendedKeyUsage == ExtendedKeyUsage([.clientAuth]))
        #expect(authority.client.commonName == "Kite Test Client")
        #expect(authority.client.chain == [authority.client.certificate, authority.intermediate.certificate])
        let result = await Self.validate(authority.client, roots: [authority.root])
        #expect(Self.chain(result)?.count == 3)
    }

    @Test("public-key pins are the base64 SHA-256 of the SubjectPublicKeyInfo")
    func pins() throws {
        let authority = try TestCertificateAuthority()
        for credential in authority.credentials {
            // For P-256, swift-crypto's DER public key is the SubjectPublicKeyInfo.
            let spki = credential.privateKey.publicKey.derRepresentation
            let expected = Data(SHA256.hash(data: spki)).base64EncodedString()
            #expect(credential.publicKeySHA256 == expected)
            #expect(credential.pinnedPublicKey == "sha256//" + expected)
        }
        #expect(Set(authority.credentials.map(\.publicKeySHA256)).count == authority.credentials.count)
    }

    @Test("PEM text round-trips to the same certificates and keys")
    func pem() throws {
        let authority = try TestCertificateAuthority()
        for credential in authority.credentials {
            #expect(try Certificate(pemEncoded: credential.certificatePEM) == credential.certificate)
            #expect(credential.certificatePEM.hasPrefix("-----BEGIN CERTIFICATE-----\n"))
            #expect(credential.certificatePEM.hasSuffix("-----END CERTIFICATE-----\n"))
            let key = try P256.Signing.PrivateKey(pemRepresentation: credential.privateKeyPEM)
            #expect(key.rawRepresentation == credential.privateKey.rawRepresentation)
            #expect(credential.privateKeyPEM.hasPrefix("-----BEGIN PRIVATE KEY-----\n"))
            let chain = try PEMDocument.parseMultiple(pemString: credential.chainPEM).map(
                Certificate.init(pemDocument:)
            )
            #expect(chain == credential.chain)
            var serializer = DER.Serializer()
            try serializer.serialize(credential.certificate)
            #expect(credential.certificateDER == serializer.serializedBytes)
        }
    }

    @Test("write(to:) writes each certificate, key and chain, keys readable by the owner only")
    func write() throws {
        let authority = try TestCertificateAuthority()
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("kite-ca-test-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let files = try authority.write(to: directory)
        let names = [
            "root", "intermediate", "leaf", "expired", "wrong-host", "self-signed", "other-root", "untrusted-leaf",
            "client",
        ]
        let chains = ["leaf", "expired", "wrong-host", "client"]
        #expect(
            Set(files.keys)
                == Set(names.map { "\($0).pem" } + names.map { "\($0)-key.pem" } + chains.map { "\($0)-chain.pem" })
        )
        #expect(
            try Set(FileManager.default.contentsOfDirectory(atPath: directory.path)) == Set(files.keys)
        )
        for credential in authority.credentials {
            let certificate = try #require(files["\(credential.name).pem"])
            #expect(try String(contentsOf: certificate, encoding: .utf8) == credential.certificatePEM)
            let key = try #require(files["\(credential.name)-key.pem"])
            #expect(try String(contentsOf: key, encoding: .utf8) == credential.privateKeyPEM)
            let attributes = try FileManager.default.attributesOfItem(atPath: key.path)
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        }
        let leafChain = try #require(files["leaf-chain.pem"])
        #expect(try String(contentsOf: leafChain, encoding: .utf8) == authority.leaf.chainPEM)
        #expect(authority.leaf.chainPEM == authority.leaf.certificatePEM + authority.intermediate.certificatePEM)
        // Writing again replaces the files.
        #expect(try authority.write(to: directory) == files)
    }
}
