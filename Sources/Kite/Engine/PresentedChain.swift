import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSOCKS
import NIOSSL
import X509

/// The certificate chain a server presents, read on a connection of its own after a handshake failed
/// verification: along the request's route (through its proxy's `CONNECT`, with its credential, or its SOCKS5
/// handshake), and refused from the handshake's verification callback, so the handshake never completes and no
/// request byte is written. The session's ``TrustFailureExplaining`` reads the reason from it.
enum PresentedChain {
    /// How long the read may take: connection, proxy tunnel and handshake together.
    static let timeout = Duration.seconds(2)

    /// The chain the server at `host:port` presents (the leaf first), through `proxy`; `nil` when none arrives
    /// within `timeout` (the server or proxy cannot be reached, the proxy refuses the tunnel).
    static func read(
        host: String,
        port: Int,
        through proxy: ProxyServer?,
        timeout: Duration,
        group: any EventLoopGroup
    ) async -> [Certificate]? {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.certificateVerification = .none
        guard let context = try? NIOSSLContext(configuration: configuration) else { return nil }
        // An IP address is no server name (RFC 6066 §3).
        let serverName = (try? SocketAddress(ipAddress: host, port: 0)) == nil ? host : nil
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
        /// The proxy's handlers, removed with this one once the tunnel is open. Not this handler itself: an array
        /// of its own that held it was a reference cycle, and every tunnel stayed in memory with its handlers.
        private var proxyHandlers: [any RemovableChannelHandler] = []
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
                self.proxyHandlers = [socks]
            case .http:
                let encoder = HTTPRequestEncoder()
                let decoder = ByteToMessageHandler(HTTPResponseDecoder(leftOverBytesStrategy: .dropBytes))
                try operations.addHandler(encoder)
                try operations.addHandler(decoder)
                try operations.addHandler(self)
                self.proxyHandlers = [decoder, encoder]
                let authority = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
                var headers = HTTPHeaders([("Host", authority)])
                if let authorization = proxy.authorization {
                    headers.add(name: "Proxy-Authorization", value: authorization)
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
            let removed = ([self] + self.proxyHandlers).map { operations.removeHandler($0) }
            self.proxyHandlers = []
            EventLoopFuture.andAllSucceed(removed, on: context.eventLoop).cascade(to: self.opened)
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            self.opened.fail(error)
        }
    }
}
