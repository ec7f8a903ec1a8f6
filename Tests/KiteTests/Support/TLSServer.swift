import Crypto
import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import SwiftASN1
import X509

/// A TLS listener on 127.0.0.1 with a certificate generated for the test (swift-certificates), not
/// signed by any trusted authority: clients that verify certificates must refuse it.
final class UntrustedTLSServer: Sendable {
    let port: Int
    private let channel: any Channel

    init() async throws {
        let (certificate, key) = try TestCertificate.selfSigned(commonName: "Kite test server")
        let configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(certificate)],
            privateKey: .privateKey(key)
        )
        let context = try NIOSSLContext(configuration: configuration)
        self.channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        self.port = self.channel.localAddress?.port ?? 0
    }

    func shutdown() async throws {
        try await self.channel.close()
    }
}

/// Certificates made in the test with swift-certificates.
enum TestCertificate {
    /// A self-signed certificate for 127.0.0.1, valid from an hour ago for two hours, and its key.
    static func selfSigned(commonName: String) throws -> (NIOSSLCertificate, NIOSSLPrivateKey) {
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName { CommonName(commonName) }
        let now = Date()
        let certificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: Certificate.PublicKey(key.publicKey),
            notValidBefore: now.addingTimeInterval(-3600),
            notValidAfter: now.addingTimeInterval(3600),
            issuer: name,
            subject: name,
            extensions: try Certificate.Extensions {
                SubjectAlternativeNames([.ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1]))])
            },
            issuerPrivateKey: Certificate.PrivateKey(key)
        )
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return (
            try NIOSSLCertificate(bytes: serializer.serializedBytes, format: .der),
            try NIOSSLPrivateKey(bytes: Array(key.derRepresentation), format: .der)
        )
    }
}
