import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS
import X509

/// Why a server's certificate failed the handshake's verification, in words a user can act on.
///
/// The TLS library reports only "certificate verify failed" (its verify result is not exposed). So after
/// such a failure Kite opens one more connection to the server that verifies nothing, reads the certificate
/// the server presents and closes it: no request byte is ever written on it. The reason is then: expired,
/// not yet valid, not for this host, self-signed, or issued by a root the session does not trust.
enum TrustDiagnosis {
    /// The reason for `host`, or a generic one when the server cannot be reached again within `timeout`.
    static func reason(host: String, port: Int, timeout: Duration, group: any EventLoopGroup) async -> String {
        guard let leaf = await self.leafCertificate(host: host, port: port, timeout: timeout, group: group) else {
            return "its certificate failed verification"
        }
        return self.reason(for: leaf, host: host, now: Date())
    }

    /// What is wrong with `leaf` for `host` at `now`, the first problem found.
    static func reason(for leaf: Certificate, host: String, now: Date) -> String {
        if leaf.notValidAfter < now {
            return "its certificate expired on \(Self.format(leaf.notValidAfter))"
        }
        if leaf.notValidBefore > now {
            return "its certificate is not valid before \(Self.format(leaf.notValidBefore))"
        }
        if !TrustChecks.names(host, leaf) {
            let names = Self.alternativeNames(of: leaf)
            guard !names.isEmpty else {
                // Verifiers match only subjectAltName, never the subject's common name (RFC 9525 §6.3, which
                // dropped RFC 6125's fallback to the CN), so a certificate without one names no host.
                return "its certificate has no subjectAltName, and its subject (\(leaf.subject)) does not name a host "
                    + "(RFC 9525): it needs a subjectAltName for \(host)"
            }
            return "its certificate is for another host (\(names.joined(separator: ", ")))"
        }
        if leaf.issuer == leaf.subject {
            return "its certificate is self-signed (\(leaf.subject)) and not among the trusted roots"
        }
        return "its certificate (issued by \(leaf.issuer)) does not lead to a trusted root"
    }

    private static func format(_ date: Date) -> String {
        ISO8601DateFormatter().string(from: date)
    }

    /// The DNS names and IP addresses of the certificate's subjectAltName extension; empty when it has none.
    private static func alternativeNames(of certificate: Certificate) -> [String] {
        guard let names = try? certificate.extensions.subjectAlternativeNames else { return [] }
        return names.map { name -> String in
            switch name {
            case .dnsName(let dns): return dns
            case .ipAddress(let bytes): return Self.address(Array(bytes.bytes))
            default: return "\(name)"
            }
        }
    }

    private static func address(_ bytes: [UInt8]) -> String {
        if bytes.count == 4 { return bytes.map(String.init).joined(separator: ".") }
        return stride(from: 0, to: bytes.count, by: 2).map {
            String((UInt16(bytes[$0]) << 8) | UInt16(bytes[$0 + 1]), radix: 16)
        }.joined(separator: ":")
    }

    /// The server's leaf certificate from a handshake that verifies nothing; `nil` when it fails.
    private static func leafCertificate(
        host: String,
        port: Int,
        timeout: Duration,
        group: any EventLoopGroup
    ) async -> Certificate? {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.certificateVerification = .none
        guard let context = try? NIOSSLContext(configuration: configuration) else { return nil }
        let serverName = TrustChecks.addressBytes(host) == nil ? host : nil
        let bootstrap = ClientBootstrap(group: group)
            .connectTimeout(TimeAmount(timeout))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let handler = try NIOSSLClientHandler(context: context, serverHostname: serverName)
                    try channel.pipeline.syncOperations.addHandler(handler)
                    try channel.pipeline.syncOperations.addHandler(HandshakeWaiter())
                }
            }
        guard let channel = try? await bootstrap.connect(host: host, port: port).get() else { return nil }
        defer { channel.close(promise: nil) }
        let certificate = try? await channel.eventLoop.flatSubmit { () -> EventLoopFuture<NIOSSLCertificate?> in
            guard let waiter = try? channel.pipeline.syncOperations.handler(type: HandshakeWaiter.self) else {
                return channel.eventLoop.makeSucceededFuture(nil)
            }
            return waiter.done.futureResult.flatMapThrowing {
                try channel.pipeline.syncOperations.nioSSL_peerCertificate()
            }
        }.get()
        guard let der = try? certificate?.toDERBytes() else { return nil }
        return try? Certificate(derEncoded: der)
    }

    /// Completes when the handshake is over (or the connection ends first).
    private final class HandshakeWaiter: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = NIOAny
        var done: EventLoopPromise<Void>!
        private var completed = false

        func handlerAdded(context: ChannelHandlerContext) {
            self.done = context.eventLoop.makePromise()
        }

        private func complete(_ result: Result<Void, any Error>) {
            guard !self.completed else { return }
            self.completed = true
            self.done.completeWith(result)
        }

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if let event = event as? TLSUserEvent, case .handshakeCompleted = event {
                self.complete(.success(()))
            }
            context.fireUserInboundEventTriggered(event)
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            self.complete(.failure(error))
        }

        func channelInactive(context: ChannelHandlerContext) {
            self.complete(.failure(ChannelError.eof))
            context.fireChannelInactive()
        }

        func handlerRemoved(context: ChannelHandlerContext) {
            self.complete(.failure(ChannelError.eof))
        }
    }
}
