import Crypto
import Foundation
import SwiftASN1
import X509

extension TestCertificateAuthority {
    /// A certificate of a ``TestCertificateAuthority`` with its private key, in the forms TLS
    /// libraries and command-line tools take.
    ///
    /// ```swift
    /// let leaf = try TestCertificateAuthority().leaf
    /// print(leaf.chainPEM)  // the leaf, then the intermediate
    /// print(leaf.pinnedPublicKey)  // sha256//…, for curl --pinnedpubkey
    /// ```
    public struct Credential: Sendable {
        /// The name the credential's files get from ``TestCertificateAuthority/write(to:)``, such as
        /// `leaf` or `wrong-host`.
        public let name: String
        /// The certificate.
        public let certificate: Certificate
        /// The certificate's private key.
        public let privateKey: P256.Signing.PrivateKey
        /// The certificate followed by the intermediate certificates up to, but not including, its
        /// root: what a server or client sends in the handshake.
        public let chain: [Certificate]
        /// The certificate in DER.
        public let certificateDER: [UInt8]
        /// The certificate as a PEM `CERTIFICATE` block, ending with a newline.
        public let certificatePEM: String
        /// The private key as a PEM PKCS #8 `PRIVATE KEY` block, ending with a newline.
        public let privateKeyPEM: String
        /// The certificates of ``chain`` as PEM blocks, one after another.
        public let chainPEM: String
        /// The base64 SHA-256 of the certificate's DER SubjectPublicKeyInfo: the public-key pin of
        /// HTTP Public Key Pinning, curl's `--pinnedpubkey` and HTTPie.
        public let publicKeySHA256: String

        /// The public-key pin as curl's `--pinnedpubkey` takes it: `sha256//` and ``publicKeySHA256``.
        public var pinnedPublicKey: String {
            "sha256//" + self.publicKeySHA256
        }

        /// The certificate's common name, such as `localhost`.
        public var commonName: String? {
            self.certificate.subject.commonName
        }

        /// Whether the certificate is its own issuer (a root, or ``TestCertificateAuthority/selfSigned``).
        var isSelfSigned: Bool {
            self.certificate.issuer == self.certificate.subject
        }

        init(name: String, certificate: Certificate, privateKey: P256.Signing.PrivateKey, chain: [Certificate]) throws {
            self.name = name
            self.certificate = certificate
            self.privateKey = privateKey
            self.chain = chain
            var serializer = DER.Serializer()
            try serializer.serialize(certificate)
            self.certificateDER = serializer.serializedBytes
            self.certificatePEM = try Self.pem(of: certificate)
            self.privateKeyPEM = Self.terminated(privateKey.pemRepresentation)
            self.chainPEM = try chain.map(Self.pem(of:)).joined()
            var keySerializer = DER.Serializer()
            try keySerializer.serialize(certificate.publicKey)
            self.publicKeySHA256 = Data(SHA256.hash(data: keySerializer.serializedBytes)).base64EncodedString()
        }

        private static func pem(of certificate: Certificate) throws -> String {
            Self.terminated(try certificate.serializeAsPEM().pemString)
        }

        private static func terminated(_ text: String) -> String {
            text.hasSuffix("\n") ? text : text + "\n"
        }
    }
}

extension DistinguishedName {
    /// The value of the last common name attribute, if it is a string.
    var commonName: String? {
        let names = self.flatMap { $0 }.filter { $0.type == .RDNAttributeType.commonName }
        return names.last.flatMap { String($0.value) }
    }
}
