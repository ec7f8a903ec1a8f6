import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSOCKS
import NIOSSL
import SwiftASN1
import X509

/// Why a server's certificate failed the handshake's verification, in words a user can act on.
///
/// The TLS library reports only "certificate verify failed" (its verify result is not exposed, and
/// async-http-client closes the failed connection before any handler of Kite's sees it). So after such a failure
/// Kite opens one more connection to the server, along the request's route (through its proxy), and takes the
/// chain the server presents from the handshake's verification callback, which then refuses it: the handshake
/// never completes and no request byte is written. The whole of it is bounded by ``timeout``, and
/// ``TLSOptions/diagnosesTrustFailures`` turns it off.
///
/// The reason is the first problem a user must fix: a chain that leads to no trusted root (self-signed, or an
/// unknown issuer), then the validity period, then the names; a further problem with the names is said too.
enum TrustDiagnosis {
    /// How long the diagnosis may take: connection, proxy tunnel and handshake together.
    static let timeout = Duration.seconds(2)

    /// What the handshake that failed checked against.
    struct Expectation: Sendable {
        /// The certificates it trusted besides the system's.
        var roots: [Certificate]
        var includesSystemRoots: Bool
        /// Whether it checked the host name.
        var checksName: Bool
    }

    /// The reason for `host`, or a generic one when the server cannot be reached again within `timeout`.
    static func reason(
        host: String,
        port: Int,
        through proxy: ProxyServer?,
        expecting expectation: Expectation,
        timeout: Duration,
        group: any EventLoopGroup
    ) async -> String {
        guard
            let chain = await self.presentedChain(
                host: host,
                port: port,
                through: proxy,
                timeout: timeout,
                group: group
            )
        else {
            return "its certificate failed verification"
        }
        var roots = expectation.roots
        if expectation.includesSystemRoots { roots += SystemRoots.certificates }
        return await self.reason(for: chain, host: host, roots: roots, checksName: expectation.checksName, now: Date())
    }

    /// What is wrong with `chain` (the leaf first) for `host` at `now`, given the trusted `roots`.
    static func reason(
        for chain: [Certificate],
        host: String,
        roots: [Certificate],
        checksName: Bool = true,
        now: Date
    ) async -> String {
        guard let leaf = chain.first else { return "its certificate failed verification" }
        var problems: [String] = []
        // Chain building and signatures only: the period and the names are told apart below.
        var verifier = Verifier(rootCertificates: CertificateStore(roots)) {}
        if case .couldNotValidate = await verifier.validate(
            leaf: leaf,
            intermediates: CertificateStore(chain.dropFirst())
        ) {
            problems.append(
                leaf.issuer == leaf.subject
                    ? "its certificate is self-signed (\(leaf.subject)) and not among the trusted roots"
                    : "its certificate (issued by \(leaf.issuer)) does not lead to a trusted root"
            )
        }
        if let problem = self.validityProblem(of: leaf, now: now) { problems.append(problem) }
        if checksName, !TrustChecks.names(host, leaf) {
            let names = Self.alternativeNames(of: leaf)
            // Verifiers match only subjectAltName, never the subject's common name (RFC 9525 §6.3, which dropped
            // RFC 6125's fallback to the CN), so a certificate without one names no host.
            problems.append(
                names.isEmpty
                    ? "its certificate has no subjectAltName, and its subject (\(leaf.subject)) does not name a host "
                        + "(RFC 9525): it needs a subjectAltName for \(host)"
                    : "its certificate is for another host (\(names.joined(separator: ", ")))"
            )
        }
        guard let first = problems.first else { return "its certificate failed verification" }
        return ([first] + problems.dropFirst().map { "also, \($0)" }).joined(separator: "; ")
    }

    /// Why `leaf` is not valid at `now`, or `nil` when it is.
    static func validityProblem(of leaf: Certificate, now: Date) -> String? {
        if leaf.notValidAfter < now { return "its certificate expired on \(Self.format(leaf.notValidAfter))" }
        if leaf.notValidBefore > now {
            return "its certificate is not valid before \(Self.format(leaf.notValidBefore))"
        }
        return nil
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

    /// The chain the server presents in a handshake that Kite's callback refuses; `nil` when none arrives within
    /// `timeout` (the server or proxy cannot be reached, the proxy refuses the tunnel).
    private static func presentedChain(
        host: String,
        port: Int,
        through proxy: ProxyServer?,
        timeout: Duration,
        group: any EventLoopGroup
    ) async -> [Certificate]? {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.certificateVerification = .none
        guard let context = try? NIOSSLContext(configuration: configuration) else { return nil }
        let serverName = TrustChecks.addressBytes(host) == nil ? host : nil
        let presented = group.next().makePromise(of: [NIOSSLCertificate].self)
        let deadline = NIODeadline.now() + TimeAmount(timeout)
        let bootstrap = ClientBootstrap(group: group).connectTimeout(TimeAmount(timeout))
        let channel: any Channel
        do {
            channel = try await bootstrap.connect(host: proxy?.host ?? host, port: proxy?.port ?? port).get()
        } catch {
            return nil
        }
        defer { channel.close(promise: nil) }
        let timer = channel.eventLoop.scheduleTask(deadline: deadline) {
            presented.fail(ChannelError.connectTimeout(TimeAmount(timeout)))
        }
        defer { timer.cancel() }
        let started = channel.eventLoop.submit {
            let operations = channel.pipeline.syncOperations
            let tunnel = try Tunnel(to: host, port: port, through: proxy, on: operations)
            tunnel.opened.futureResult.assumeIsolated().whenSuccess {
                do {
                    let handler = try NIOSSLClientHandler(context: context, serverHostname: serverName) {
                        chain,
                        answer in
                        presented.succeed(chain)
                        answer.succeed(NIOSSLVerificationResult.failed)
                    }
                    try channel.pipeline.syncOperations.addHandler(handler)
                } catch {
                    presented.fail(error)
                }
            }
            tunnel.opened.futureResult.whenFailure { presented.fail($0) }
            channel.closeFuture.whenComplete { _ in presented.fail(ChannelError.eof) }
        }
        guard (try? await started.get()) != nil, let chain = try? await presented.futureResult.get() else {
            return nil
        }
        return chain.compactMap { certificate in
            (try? certificate.toDERBytes()).flatMap { try? Certificate(derEncoded: $0) }
        }
    }

    /// Opens the way to `host:port`: at once for a direct connection, else through the proxy's `CONNECT` (with
    /// its credential) or SOCKS5 handshake, whose handlers are removed once the tunnel is open.
    private final class Tunnel: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = HTTPClientResponsePart

        let opened: EventLoopPromise<Void>
        private var removable: [any RemovableChannelHandler] = []
        private var accepted = false

        init(
            to host: String,
            port: Int,
            through proxy: ProxyServer?,
            on operations: ChannelPipeline.SynchronousOperations
        ) throws {
            self.opened = operations.eventLoop.makePromise()
            guard let proxy else {
                self.opened.succeed()
                return
            }
            switch proxy.kind {
            case .socks:
                let socks = SOCKSClientHandler(targetAddress: .domain(host, port: port))
                try operations.addHandler(socks)
                try operations.addHandler(self)
                self.removable = [socks, self]
            case .http:
                let encoder = HTTPRequestEncoder()
                let decoder = ByteToMessageHandler(HTTPResponseDecoder(leftOverBytesStrategy: .dropBytes))
                try operations.addHandler(encoder)
                try operations.addHandler(decoder)
                try operations.addHandler(self)
                self.removable = [self, decoder, encoder]
                let authority = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
                var headers = HTTPHeaders([("Host", authority)])
                if let credential = proxy.credential {
                    headers.add(name: "Proxy-Authorization", value: credential.basicAuthorization())
                }
                let head = HTTPRequestHead(version: .http1_1, method: .CONNECT, uri: authority, headers: headers)
                operations.writeAndFlush(NIOAny(HTTPClientRequestPart.head(head)), promise: nil)
                operations.writeAndFlush(NIOAny(HTTPClientRequestPart.end(nil)), promise: nil)
            }
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch self.unwrapInboundIn(data) {
            case .head(let head):
                self.accepted = (200..<300).contains(head.status.code)
                if !self.accepted { self.opened.fail(ChannelError.inappropriateOperationForState) }
            case .body:
                break
            case .end:
                if self.accepted { self.open(context) }
            }
        }

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if event is SOCKSProxyEstablishedEvent { self.open(context) }
            context.fireUserInboundEventTriggered(event)
        }

        /// Removes the proxy's handlers, then opens the way: the TLS handler's bytes must not meet them.
        private func open(_ context: ChannelHandlerContext) {
            let operations = context.pipeline.syncOperations
            let removed = self.removable.map { operations.removeHandler($0) }
            EventLoopFuture.andAllSucceed(removed, on: context.eventLoop).cascade(to: self.opened)
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            self.opened.fail(error)
        }
    }
}

/// The system's trust roots as certificates, read once from Debian's (or Red Hat's) bundle: what the TLS library
/// trusts for `TLSOptions.TrustRoots.system` on Linux.
enum SystemRoots {
    static let certificates: [Certificate] = {
        let bundles = ["/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt"]
        guard let text = bundles.lazy.compactMap({ try? String(contentsOfFile: $0, encoding: .utf8) }).first,
            let documents = try? PEMDocument.parseMultiple(pemString: text)
        else { return [] }
        return documents.compactMap { try? Certificate(pemDocument: $0) }
    }()
}
