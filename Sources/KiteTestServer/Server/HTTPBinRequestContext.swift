import Hummingbird
import NIOCore

/// The request context of the test server: Hummingbird's core storage plus the client address.
struct HTTPBinRequestContext: RequestContext, RemoteAddressRequestContext {
    /// The largest request body the echo endpoints collect (256 MiB).
    static let maximumUploadSize = 256 * 1024 * 1024

    var coreContext: CoreRequestContextStorage
    let remoteAddress: SocketAddress?

    init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.remoteAddress = source.channel.remoteAddress
    }

    var maxUploadSize: Int { Self.maximumUploadSize }
}
