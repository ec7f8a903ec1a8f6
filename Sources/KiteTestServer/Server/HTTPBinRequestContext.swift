import Hummingbird
import NIOCore

/// The request context of the test server: Hummingbird's core storage plus the client address,
/// the channel the request came on and whether the connection is TLS.
struct HTTPBinRequestContext: RequestContext, RemoteAddressRequestContext {
    /// The largest request body the echo endpoints collect (256 MiB).
    static let maximumUploadSize = 256 * 1024 * 1024

    var coreContext: CoreRequestContextStorage
    let remoteAddress: SocketAddress?
    /// The channel of the request: the connection for HTTP/1.1, the stream for HTTP/2.
    let channel: any Channel
    /// Whether the request came over TLS; ``TLSConnectionMiddleware`` sets it.
    var isSecure = false

    init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.remoteAddress = source.channel.remoteAddress
        self.channel = source.channel
    }

    var maxUploadSize: Int { Self.maximumUploadSize }
}
