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
            let anchors = try verification.anchors.map(Self.nioCertificate)
            switch self.trustRoots {
            case .system:
                if !anchors.isEmpty { configuration.additionalTrustRoots = [.certificates(anchors)] }
            case .certificates(let roots):
                configuration.trustRoots = .certificates(try roots.map(Self.nioCertificate) + anchors)
            case .systemAnd(let roots):
                configuration.additionalTrustRoots = [.certificates(try roots.map(Self.nioCertificate) + anchors)]
            }
            if let identity = self.clientIdentity {
                configuration.certificateChain = try identity.certificateChain.map {
                    .certificate(try Self.nioCertificate($0))
                }
                configuration.privateKey = .privateKey(
                    try NIOSSLPrivateKey(
                        bytes: Array(identity.privateKey.serializeAsPEM().pemString.utf8),
                        format: .pem
                    )
                )
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

    static func nioCertificate(_ certificate: Certificate) throws -> NIOSSLCertificate {
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return try NIOSSLCertificate(bytes: serializer.serializedBytes, format: .der)
    }
}

/// A client certificate chain and its private key, for servers that require mutual TLS.
public struct ClientIdentity: Sendable {
    /// The client certificate first, then any intermediates.
    public let certificateChain: [Certificate]
    /// The client certificate's private key.
    public let privateKey: Certificate.PrivateKey

    /// - Parameters:
    ///   - certificateChain: The client certificate first, then any intermediates.
    ///   - privateKey: Its private key.
    public init(certificateChain: [Certificate], privateKey: Certificate.PrivateKey) {
        self.certificateChain = certificateChain
        self.privateKey = privateKey
    }

    /// Loads the chain and the key from PEM files (the key may also sit in the certificate file).
    ///
    /// - Throws: ``KiteError`` `invalidRequest` naming the file that could not be read or parsed.
    public init(certificateFile: URL, privateKeyFile: URL? = nil) throws(KiteError) {
        self.certificateChain = try Certificates.load(from: certificateFile)
        let keyFile = privateKeyFile ?? certificateFile
        let text = try Certificates.readText(keyFile)
        guard let block = Certificates.pemBlocks(in: text).first(where: { $0.label.hasSuffix("PRIVATE KEY") }) else {
            throw KiteError(code: .invalidRequest, message: "\(keyFile.path) holds no PEM private key")
        }
        do {
            self.privateKey = try Certificate.PrivateKey(pemEncoded: block.text)
        } catch {
            throw KiteError(
                code: .invalidRequest,
                message: "the private key in \(keyFile.path) could not be read: \(error)",
                underlyingError: error
            )
        }
    }
}
