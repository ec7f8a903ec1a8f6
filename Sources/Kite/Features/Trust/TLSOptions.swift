import Foundation
import NIOSSL
import SwiftASN1
import X509

/// A session's TLS settings: trust roots, a client certificate for mutual TLS, the lowest TLS version.
///
/// ```swift
/// var configuration = Session.Configuration()
/// configuration.tls.trustRoots = .certificates(try Certificates.load(from: caFile))  // a private CA only
/// configuration.tls.clientIdentity = try ClientIdentity(certificateFile: certFile, privateKeyFile: keyFile)
/// configuration.tls.minimumVersion = .v1_3
/// ```
public struct TLSOptions: Sendable {
    /// Which certificates anchor the server's chain.
    public enum TrustRoots: Sendable {
        /// The system's roots (Debian: `/etc/ssl/certs`).
        case system
        /// These certificates only.
        case certificates([Certificate])
        /// The system's roots and these.
        case systemAnd([Certificate])
    }

    /// The lowest TLS version the session accepts.
    public enum Version: Sendable, Hashable {
        case v1_2
        case v1_3
    }

    /// The roots that anchor server chains; the system's by default.
    public var trustRoots = TrustRoots.system
    /// The certificate the session presents when a server asks for one (mutual TLS).
    public var clientIdentity: ClientIdentity?
    /// The lowest TLS version accepted; TLS 1.2 by default.
    public var minimumVersion = Version.v1_2
    /// Whether a certificate the handshake refuses is read again to name the reason (`true` by default).
    ///
    /// The TLS library says only "certificate verify failed". To say what is wrong (self-signed, an unknown
    /// issuer, expired, for another host), Kite opens one more connection along the request's route (through its
    /// proxy), takes the certificates the server presents and refuses them, so no request byte is written; it
    /// takes at most 2 seconds. Set `false` where that second connection is unwelcome: the error then says
    /// "its certificate failed verification".
    public var diagnosesTrustFailures = true

    /// Creates the default options: system roots, no client certificate, TLS 1.2 or later.
    public init() {}

    /// Whether these are the defaults (the engine then keeps async-http-client's own TLS setup).
    var isDefault: Bool {
        if case .system = self.trustRoots, self.clientIdentity == nil, self.minimumVersion == .v1_2 { return true }
        return false
    }

    /// The engine's TLS configuration for these options and a handshake verification.
    func makeConfiguration(verification: HandshakeVerification) throws(KiteError) -> TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.minimumTLSVersion = self.minimumVersion == .v1_3 ? .tlsv13 : .tlsv12
        switch verification.mode {
        case .full: configuration.certificateVerification = .fullVerification
        case .withoutHostname: configuration.certificateVerification = .noHostnameVerification
        case .none: configuration.certificateVerification = .none
        }
        do {
            let (roots, includesSystem) = self.trustedCertificates(anchoring: verification.anchors)
            let certificates = try roots.map(Self.nioCertificate)
            if !includesSystem {
                configuration.trustRoots = .certificates(certificates)
            } else if !certificates.isEmpty {
                configuration.additionalTrustRoots = [.certificates(certificates)]
            }
            if let identity = self.clientIdentity {
                configuration.certificateChain = identity.tlsChain.map { .certificate($0) }
                configuration.privateKey = .privateKey(identity.tlsKey)
            }
        } catch {
            throw KiteError(
                code: .invalidRequest,
                message: "the TLS settings could not be applied: \(error)",
                underlyingError: error
            )
        }
        return configuration
    }

    /// The roots a handshake with `anchors` trusts: these certificates, and the system's when `includesSystem`.
    func trustedCertificates(anchoring anchors: [Certificate]) -> (certificates: [Certificate], includesSystem: Bool) {
        switch self.trustRoots {
        case .system: (anchors, true)
        case .certificates(let roots): (roots + anchors, false)
        case .systemAnd(let roots): (roots + anchors, true)
        }
    }

    static func nioCertificate(_ certificate: Certificate) throws -> NIOSSLCertificate {
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return try NIOSSLCertificate(bytes: serializer.serializedBytes, format: .der)
    }
}

/// A client certificate chain and its private key, for servers that require mutual TLS.
///
/// ```swift
/// let identity = try ClientIdentity(certificateFile: URL(fileURLWithPath: "client.pem"),
///                                   privateKeyFile: URL(fileURLWithPath: "client-key.pem"))
/// let fromKeychainExport = try ClientIdentity(pkcs12File: URL(fileURLWithPath: "client.p12"), passphrase: "secret")
/// ```
public struct ClientIdentity: Sendable {
    /// The client certificate first, then any intermediates.
    public let certificateChain: [Certificate]
    /// The chain and the key as the TLS library takes them.
    let tlsChain: [NIOSSLCertificate]
    let tlsKey: NIOSSLPrivateKey
    /// The key's type ("Ed25519") when the TLS library cannot encode the key, else `nil`. BoringSSL encodes RSA, EC
    /// and DSA keys only, and swift-nio-ssl hashes a TLS configuration by its key's encoding, trapping when there is
    /// none: so ``ManagedTrust`` refuses to make the per-host configuration a ``ServerTrustManager`` asks for, which
    /// the engine hashes, with such a key. Without a trust manager nothing hashes it, and the key works.
    let unencodableKeyType: String?

    /// - Parameters:
    ///   - certificateChain: The client certificate first, then any intermediates.
    ///   - privateKey: Its private key.
    /// - Throws: ``KiteError`` `invalidRequest` when the TLS library cannot take them.
    public init(certificateChain: [Certificate], privateKey: Certificate.PrivateKey) throws(KiteError) {
        self.certificateChain = certificateChain
        do {
            self.tlsChain = try certificateChain.map(TLSOptions.nioCertificate)
            self.tlsKey = try NIOSSLPrivateKey(bytes: Array(privateKey.serializeAsPEM().pemString.utf8), format: .pem)
        } catch {
            throw KiteError(
                code: .invalidRequest,
                message: "the client certificate or key cannot be used: \(error)",
                underlyingError: error
            )
        }
        self.unencodableKeyType = Self.unencodableType(of: self.tlsKey, named: privateKey.description)
    }

    /// `name`'s algorithm ("Ed25519" of "Ed25519.PrivateKey") when `key` has no DER encoding, else `nil`.
    private static func unencodableType(of key: NIOSSLPrivateKey, named name: String) -> String? {
        guard (try? key.derBytes) == nil else { return nil }
        return String(name.prefix { $0 != "." })
    }

    /// Loads the chain and the key from PEM files (the key may also sit in the certificate file).
    ///
    /// - Throws: ``KiteError`` `invalidRequest` naming the file that could not be read or parsed.
    public init(certificateFile: URL, privateKeyFile: URL? = nil) throws(KiteError) {
        let chain = try Certificates.load(from: certificateFile)
        let keyFile = privateKeyFile ?? certificateFile
        let text = try Certificates.readText(keyFile)
        guard let block = Certificates.pemBlocks(in: text).first(where: { $0.label.hasSuffix("PRIVATE KEY") }) else {
            throw KiteError(code: .invalidRequest, message: "\(keyFile.path) holds no PEM private key")
        }
        let key: Certificate.PrivateKey
        do {
            key = try Certificate.PrivateKey(pemEncoded: block.text)
        } catch {
            throw KiteError(
                code: .invalidRequest,
                message: "the private key in \(keyFile.path) could not be read: \(error)",
                underlyingError: error
            )
        }
        try self.init(certificateChain: chain, privateKey: key)
    }

    /// Loads the chain and the key from a PKCS#12 file (`.p12`, `.pfx`), as keychains and browsers export them.
    ///
    /// A file without a private key (a trust store), or whose certificates are none of them the key's, is refused
    /// before the TLS library reads it, since it would stop the process.
    ///
    /// - Throws: ``KiteError`` `invalidRequest` naming the file when it cannot be read or decrypted, or holds no
    ///   private key or no certificate for its key.
    public init(pkcs12File: URL, passphrase: String? = nil) throws(KiteError) {
        let contents: [UInt8]
        do {
            contents = Array(try DownloadFiles.contents(of: pkcs12File))
        } catch {
            throw KiteError(
                code: .invalidRequest,
                message: "could not read \(pkcs12File.path): \(error)",
                underlyingError: error
            )
        }
        if let reason = PKCS12Check.problem(in: contents, passphrase: passphrase) {
            throw KiteError(code: .invalidRequest, message: "the PKCS#12 file \(pkcs12File.path) \(reason)")
        }
        do {
            let bundle = try NIOSSLPKCS12Bundle(buffer: contents, passphrase: passphrase.map { Array($0.utf8) })
            self.tlsChain = bundle.certificateChain
            self.tlsKey = bundle.privateKey
            self.certificateChain = try bundle.certificateChain.map { try Certificate(derEncoded: try $0.toDERBytes()) }
            self.unencodableKeyType = Self.unencodableType(
                of: bundle.privateKey,
                named: self.certificateChain.first?.publicKey.description ?? "unknown"
            )
        } catch {
            throw KiteError(
                code: .invalidRequest,
                message: "\(pkcs12File.path) is not a PKCS#12 file this passphrase opens: \(error)",
                underlyingError: error
            )
        }
    }
}
