import Hummingbird
import HummingbirdCore
import HummingbirdHTTP2
import NIOSSL
import SwiftASN1
import X509

extension KiteTestServer {
    /// How a ``KiteTestServer`` serves TLS: which certificate of which authority it presents, and
    /// whether it asks for a client certificate.
    ///
    /// ```swift
    /// let authority = try TestCertificateAuthority()
    /// let mutual = KiteTestServer.TLSOptions(authority: authority, clientCertificate: .required)
    /// let server = try await KiteTestServer.start(host: "127.0.0.1", port: 0, tls: mutual)
    /// ```
    public struct TLSOptions: Sendable {
        /// The authority whose certificates the server uses.
        public var authority: TestCertificateAuthority
        /// The certificate the server presents, sent with its intermediate.
        public var certificate: TestCertificateAuthority.ServerCertificate
        /// Whether the server asks for a client certificate.
        public var clientCertificate: ClientCertificatePolicy

        /// Whether a client without a certificate is refused.
        public var requiresClientCertificate: Bool {
            self.clientCertificate == .required
        }

        /// Makes TLS options.
        ///
        /// ```swift
        /// let options = KiteTestServer.TLSOptions(authority: try TestCertificateAuthority(), certificate: .wrongHost)
        /// ```
        ///
        /// - Parameters:
        ///   - authority: The authority whose certificates the server uses.
        ///   - certificate: The certificate the server presents.
        ///   - clientCertificate: Whether the server asks for a client certificate.
        public init(
            authority: TestCertificateAuthority,
            certificate: TestCertificateAuthority.ServerCertificate = .leaf,
            clientCertificate: ClientCertificatePolicy = .notRequested
        ) {
            self.authority = authority
            self.certificate = certificate
            self.clientCertificate = clientCertificate
        }

        /// Whether a server asks the client for a certificate during the handshake.
        ///
        /// A client certificate is accepted when it chains to the authority's
        /// ``TestCertificateAuthority/root``, whether or not the client sends the intermediate along;
        /// its host name is not checked.
        public enum ClientCertificatePolicy: Sendable, Hashable {
            /// The server does not ask for a client certificate.
            case notRequested
            /// The server asks for one, accepts clients without one, and refuses a certificate it
            /// does not trust.
            case requested
            /// The server refuses clients without a certificate it trusts.
            case required
        }

        /// The Hummingbird server: HTTP/2 and HTTP/1.1 chosen through ALPN over TLS.
        func makeServerBuilder() throws -> HTTPServerBuilder {
            // `http2Upgrade` sets the ALPN protocols to `h2` and `http/1.1` itself.
            try .http2Upgrade(tlsConfiguration: self.makeTLSConfiguration())
        }

        /// The server's TLS configuration.
        func makeTLSConfiguration() throws -> TLSConfiguration {
            let served = self.authority.credential(for: self.certificate)
            var configuration = TLSConfiguration.makeServerConfiguration(
                certificateChain: try served.chain.map { .certificate(try Self.sslCertificate($0)) },
                privateKey: .privateKey(
                    try NIOSSLPrivateKey(bytes: Array(served.privateKey.derRepresentation), format: .der)
                )
            )
            let trusted = [self.authority.root.certificate, self.authority.intermediate.certificate]
            switch self.clientCertificate {
            case .notRequested:
                break
            case .requested:
                configuration.certificateVerification = .optionalVerification
                configuration.trustRoots = .certificates(try trusted.map(Self.sslCertificate))
            case .required:
                configuration.certificateVerification = .noHostnameVerification
                configuration.trustRoots = .certificates(try trusted.map(Self.sslCertificate))
            }
            return configuration
        }

        /// Converts a swift-certificates certificate for NIOSSL.
        private static func sslCertificate(_ certificate: Certificate) throws -> NIOSSLCertificate {
            var serializer = DER.Serializer()
            try serializer.serialize(certificate)
            return try NIOSSLCertificate(bytes: serializer.serializedBytes, format: .der)
        }
    }
}
