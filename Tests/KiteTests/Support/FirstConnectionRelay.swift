import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Testing

/// A loopback listener that relays its first connection to another loopback port and accepts every later one
/// without ever reading or writing a byte: a server that answers once, then goes silent.
final class FirstConnectionRelay: Sendable {
    let port: Int
    private let listener: any Channel

    private init(listener: any Channel) throws {
        self.listener = listener
        self.port = try #require(listener.localAddress?.port)
    }

    static func start(to targetPort: Int) async throws -> FirstConnectionRelay {
        let accepted = NIOLockedValueBox(0)
        let listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelOption(.autoRead, value: false)
            .childChannelInitializer { inbound in
                let first = accepted.withLockedValue { count in
                    count += 1
                    return count == 1
                }
                guard first else { return inbound.eventLoop.makeSucceededVoidFuture() }
                return ClientBootstrap(group: inbound.eventLoop)
                    .connect(host: "127.0.0.1", port: targetPort)
                    .flatMap { outbound in
                        outbound.pipeline.addHandler(Pipe(to: inbound)).flatMap {
                            inbound.pipeline.addHandler(Pipe(to: outbound))
                        }.flatMap {
                            inbound.setOption(.autoRead, value: true)
                        }
                    }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        return try FirstConnectionRelay(listener: listener)
    }

    func stop() {
        self.listener.close(promise: nil)
    }

    /// Writes what one side reads to the other, and closes the other when one closes.
    private final class Pipe: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        let partner: any Channel

        init(to partner: any Channel) {
            self.partner = partner
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            self.partner.writeAndFlush(self.unwrapInboundIn(data), promise: nil)
        }

        func channelInactive(context: ChannelHandlerContext) {
            self.partner.close(promise: nil)
            context.fireChannelInactive()
        }
    }
}
