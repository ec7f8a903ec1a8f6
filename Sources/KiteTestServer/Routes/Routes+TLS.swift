import Hummingbird
import NIOCore
import NIOSSL
import X509

/// `/tls`: what the request's TLS connection negotiated. Only a server that serves TLS has it.
extension Router<HTTPBinRequestContext> {
    func addTLSRoutes() {
        self.route("/tls") { _, context in
            .json(try await Self.tlsConnectionJSON(for: context.channel))
        }
    }

    /// The protocol, TLS version and client certificate of the connection `channel` belongs to.
    ///
    /// For HTTP/1.1 `channel` is the TLS connection itself; for HTTP/2 it is a stream whose parent
    /// is the TLS connection.
    private static func tlsConnectionJSON(for channel: any Channel) async throws -> JSONValue {
        let connection: any Channel
        let protocolName: String
        if (try? await channel.pipeline.containsHandler(type: NIOSSLHandler.self).get()) != nil {
            connection = channel
            protocolName = "http/1.1"
        } else if let parent = channel.parent {
            connection = parent
            protocolName = "h2"
        } else {
            throw HTTPBinError(.internalServerError, "The request did not come over TLS")
        }
        let version = try await connection.nioSSL_tlsVersion().get()
        let peerCertificate = try await connection.nioSSL_peerCertificate().get()
        var clientCertificate = JSONValue.null
        if let peerCertificate {
            let certificate = try Certificate(derEncoded: peerCertificate.toDERBytes())
            clientCertificate = [
                "subject": .string(certificate.subject.description),
                "common_name": certificate.subject.commonName.map(JSONValue.string) ?? .null,
            ]
        }
        return [
            "protocol": .string(protocolName),
            "tls_version": version.map { .string(Self.name(of: $0)) } ?? .null,
            "client_certificate": clientCertificate,
        ]
    }

    private static func name(of version: TLSVersion) -> String {
        switch version {
        case .tlsv1: "TLSv1"
        case .tlsv11: "TLSv1.1"
        case .tlsv12: "TLSv1.2"
        case .tlsv13: "TLSv1.3"
        }
    }
}
