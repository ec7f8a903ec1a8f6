import Crypto
import Foundation
import SwiftASN1
import X509

/// A throwaway public key infrastructure for testing TLS clients, generated when it is created.
///
/// The authority holds a root CA, an intermediate CA signed by it, and certificates for the cases
/// a TLS client must tell apart: a valid server certificate (``leaf``), an ``expired`` one, one for
/// the wrong host name (``wrongHost``), a ``selfSigned`` one, one signed by an unrelated root
/// (``untrustedLeaf``, issued by ``otherRoot``), and a ``client`` certificate for mutual TLS. All
/// keys are P-256. Server certificates name `localhost`, `127.0.0.1` and `::1` (except
/// ``wrongHost``), so a client that trusts ``root`` can reach a ``KiteTestServer`` on loopback.
///
/// Nothing is written to disk unless you call ``write(to:)``; every value is also available as PEM
/// text and as an `X509.Certificate`.
///
/// ```swift
/// let authority = try TestCertificateAuthority()
/// let server = try await KiteTestServer.start(
///     host: "127.0.0.1",
///     port: 0,
///     tls: KiteTestServer.TLSOptions(authority: authority)
/// )
/// print(authority.root.certificatePEM)  // trust this in the client
/// print(authority.leaf.pinnedPublicKey)  // sha256//…, for curl --pinnedpubkey
/// try await server.shutdown()
/// ```
public struct TestCertificateAuthority: Sendable {
    /// The self-signed root CA that signs ``intermediate``; trust it to trust the server.
    public let root: Credential
    /// A CA signed by ``root`` that signs the server and client certificates.
    public let intermediate: Credential
    /// A valid server certificate for `localhost`, `127.0.0.1` and `::1`, signed by ``intermediate``.
    ///
    /// It is valid from an hour ago for a day and its ``Credential/chain`` is the leaf and
    /// ``intermediate``, which is what the server sends.
    public let leaf: Credential
    /// Like ``leaf``, but it expired a day ago.
    public let expired: Credential
    /// Like ``leaf``, but for the host name `wrong.example` only.
    public let wrongHost: Credential
    /// A self-signed server certificate for `localhost`, `127.0.0.1` and `::1`.
    ///
    /// Like one made by `openssl req -x509`, it is marked as a CA and has no key usage extension, so
    /// a client can trust it as its own root.
    public let selfSigned: Credential
    /// A self-signed root CA that is unrelated to ``root``; it signs ``untrustedLeaf``.
    public let otherRoot: Credential
    /// A server certificate for `localhost`, `127.0.0.1` and `::1` signed by ``otherRoot``, so a client
    /// that trusts only ``root`` refuses it.
    public let untrustedLeaf: Credential
    /// A client certificate (extended key usage `clientAuth`) signed by ``intermediate``, for mutual
    /// TLS; send its ``Credential/chain`` with its ``Credential/privateKey``.
    public let client: Credential

    /// Every certificate of the authority, roots first.
    public var credentials: [Credential] {
        [
            self.root, self.intermediate, self.leaf, self.expired, self.wrongHost, self.selfSigned, self.otherRoot,
            self.untrustedLeaf, self.client,
        ]
    }

    /// Generates a new authority with fresh keys.
    ///
    /// Certificate authorities are valid from a week before `now` for 30 days; server and client
    /// certificates from an hour before `now` for a day (``expired`` from two days before `now` to a
    /// day before it).
    ///
    /// ```swift
    /// let authority = try TestCertificateAuthority()
    /// ```
    ///
    /// - Parameter now: The time the validity periods are computed from.
    /// - Throws: An error from signing or encoding a certificate, which does not happen with the
    ///   P-256 keys the authority uses.
    public init(now: Date = Date()) throws {
        let hour: TimeInterval = 3600
        let day: TimeInterval = 24 * hour
        let authorityValidity = (now - 7 * day, now + 30 * day)
        let validity = (now - hour, now + day)
        let loopbackNames: [GeneralName] = [
            .dnsName("localhost"),
            .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1])),
            .ipAddress(ASN1OctetString(contentBytes: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1])),
        ]

        self.root = try Self.makeAuthority(name: "root", commonName: "Kite Test Root CA", validity: authorityValidity)
        self.intermediate = try Self.issue(
            Profile(
                name: "intermediate",
                commonName: "Kite Test Intermediate CA",
                validity: authorityValidity,
                kind: .authority(maxPathLength: 0)
            ),
            by: self.root
        )
        self.leaf = try Self.issue(
            Profile(name: "leaf", commonName: "localhost", validity: validity, kind: .server(loopbackNames)),
            by: self.intermediate
        )
        self.expired = try Self.issue(
            Profile(
                name: "expired",
                commonName: "localhost",
                validity: (now - 2 * day, now - day),
                kind: .server(loopbackNames)
            ),
            by: self.intermediate
        )
        self.wrongHost = try Self.issue(
            Profile(
                name: "wrong-host",
                commonName: "wrong.example",
                validity: validity,
                kind: .server([.dnsName("wrong.example")])
            ),
            by: self.intermediate
        )
        self.selfSigned = try Self.issue(
            Profile(name: "self-signed", commonName: "localhost", validity: validity, kind: .server(loopbackNames)),
            by: nil
        )
        self.otherRoot = try Self.makeAuthority(
            name: "other-root",
            commonName: "Kite Other Root CA",
            validity: authorityValidity
        )
        self.untrustedLeaf = try Self.issue(
            Profile(name: "untrusted-leaf", commonName: "localhost", validity: validity, kind: .server(loopbackNames)),
            by: self.otherRoot
        )
        self.client = try Self.issue(
            Profile(name: "client", commonName: "Kite Test Client", validity: validity, kind: .client),
            by: self.intermediate
        )
    }

    /// The certificate a server presents for `certificate`.
    ///
    /// ```swift
    /// let served = authority.credential(for: .wrongHost)  // authority.wrongHost
    /// ```
    ///
    /// - Parameter certificate: Which server certificate.
    /// - Returns: The credential, whose ``Credential/chain`` is what the server sends.
    public func credential(for certificate: ServerCertificate) -> Credential {
        switch certificate {
        case .leaf: self.leaf
        case .expired: self.expired
        case .wrongHost: self.wrongHost
        case .selfSigned: self.selfSigned
        case .untrustedLeaf: self.untrustedLeaf
        }
    }

    /// Writes every certificate and key as PEM files into `directory`, creating it if needed.
    ///
    /// For each credential named `name` (`root`, `intermediate`, `leaf`, `expired`, `wrong-host`,
    /// `self-signed`, `other-root`, `untrusted-leaf`, `client`) it writes `name.pem` (the
    /// certificate) and `name-key.pem` (its PKCS #8 private key, readable by the owner only), and for
    /// certificates issued by ``intermediate`` also `name-chain.pem` (the certificate followed by the
    /// intermediate). Existing files are replaced.
    ///
    /// ```swift
    /// let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kite-tls")
    /// let files = try authority.write(to: directory)
    /// print(files["root.pem"]!.path)  // pass to curl --cacert
    /// ```
    ///
    /// - Parameter directory: The directory to write into.
    /// - Returns: The URL of each written file, keyed by its file name (such as `root.pem`).
    /// - Throws: The error from creating the directory or writing a file.
    @discardableResult
    public func write(to directory: URL) throws -> [String: URL] {
        let fileManager = FileManager.default
        try fileManager.createDirectory(at: directory, withIntermediateDirectories: true)
        var files: [String: URL] = [:]
        func write(_ text: String, to fileName: String, permissions: Int) throws {
            let url = directory.appendingPathComponent(fileName)
            if fileManager.fileExists(atPath: url.path) {
                try fileManager.removeItem(at: url)
            }
            guard
                fileManager.createFile(
                    atPath: url.path,
                    contents: Data(text.utf8),
                    attributes: [.posixPermissions: permissions]
                )
            else {
                throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path])
            }
            files[fileName] = url
        }
        for credential in self.credentials {
            try write(credential.certificatePEM, to: "\(credential.name).pem", permissions: 0o644)
            try write(credential.privateKeyPEM, to: "\(credential.name)-key.pem", permissions: 0o600)
            if credential.chain.count > 1 {
                try write(credential.chainPEM, to: "\(credential.name)-chain.pem", permissions: 0o644)
            }
        }
        return files
    }
}

extension TestCertificateAuthority {
    /// The certificates a ``KiteTestServer`` can present.
    public enum ServerCertificate: Sendable, Hashable, CaseIterable {
        /// ``TestCertificateAuthority/leaf``: valid, trusted through ``TestCertificateAuthority/root``.
        case leaf
        /// ``TestCertificateAuthority/expired``: expired a day ago.
        case expired
        /// ``TestCertificateAuthority/wrongHost``: for `wrong.example` only.
        case wrongHost
        /// ``TestCertificateAuthority/selfSigned``: self-signed.
        case selfSigned
        /// ``TestCertificateAuthority/untrustedLeaf``: signed by ``TestCertificateAuthority/otherRoot``.
        case untrustedLeaf
    }
}

// MARK: - Issuing certificates

extension TestCertificateAuthority {
    /// What a certificate is for and what it says.
    private struct Profile {
        enum Kind {
            case authority(maxPathLength: Int?)
            case server([GeneralName])
            case client
        }

        var name: String
        var commonName: String
        var validity: (notBefore: Date, notAfter: Date)
        var kind: Kind
    }

    private static func makeAuthority(
        name: String,
        commonName: String,
        validity: (Date, Date)
    ) throws -> Credential {
        try Self.issue(
            Profile(name: name, commonName: commonName, validity: validity, kind: .authority(maxPathLength: nil)),
            by: nil
        )
    }

    /// Makes a certificate with a new key, signed by `issuer`, or self-signed when `issuer` is `nil`.
    private static func issue(_ profile: Profile, by issuer: Credential?) throws -> Credential {
        let key = P256.Signing.PrivateKey()
        let subject = try DistinguishedName {
            OrganizationName("Kite")
            CommonName(profile.commonName)
        }
        let keyIdentifier = Self.keyIdentifier(of: key.publicKey)
        let issuerKeyIdentifier = issuer.map { Self.keyIdentifier(of: $0.privateKey.publicKey) } ?? keyIdentifier
        let extensions = try Certificate.Extensions {
            switch profile.kind {
            case .authority(let maxPathLength):
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: maxPathLength))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            case .server(let names) where issuer == nil:
                // Trusted as its own root, a self-signed certificate must be a CA to swift-certificates,
                // and have no key usage (or one allowing certificate signing) to BoringSSL, as
                // `openssl req -x509` makes it.
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames(names)
            case .server(let names):
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames(names)
            case .client:
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.clientAuth])
            }
            SubjectKeyIdentifier(keyIdentifier: keyIdentifier)
            AuthorityKeyIdentifier(keyIdentifier: issuerKeyIdentifier)
        }
        let certificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: Certificate.PublicKey(key.publicKey),
            notValidBefore: profile.validity.notBefore,
            notValidAfter: profile.validity.notAfter,
            issuer: issuer?.certificate.subject ?? subject,
            subject: subject,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: extensions,
            issuerPrivateKey: Certificate.PrivateKey(issuer?.privateKey ?? key)
        )
        // A server or client sends its certificate and the intermediates above it, not the root.
        var chain = [certificate]
        if let issuer, !issuer.isSelfSigned {
            chain += issuer.chain
        }
        return try Credential(name: profile.name, certificate: certificate, privateKey: key, chain: chain)
    }

    /// The SHA-1 of the public key's bits, as RFC 5280 section 4.2.1.2 suggests for key identifiers.
    private static func keyIdentifier(of publicKey: P256.Signing.PublicKey) -> ArraySlice<UInt8> {
        ArraySlice(Insecure.SHA1.hash(data: publicKey.x963Representation))
    }
}
