import AsyncHTTPClient
import KiteTestServer
import NIOCore
import NIOHTTP1
import NIOSSL

/// What a TLS request brought back: the HTTP version, the status and the body.
struct TLSFetched: Sendable {
    var version: HTTPVersion
    var status: Int
    var body: [UInt8]

    func json() throws -> JSON {
        try JSON(bytes: self.body)
    }
}

/// Runs `body` with a server started with `options`, shutting it down afterwards.
func withTLSServer(
    _ options: KiteTestServer.TLSOptions,
    _ body: (KiteTestServer) async throws -> Void
) async throws {
    let server = try await KiteTestServer.start(host: "127.0.0.1", port: 0, tls: options)
    do {
        try await body(server)
    } catch {
        try? await server.shutdown()
        throw error
    }
    try await server.shutdown()
}

/// Sends GET `url` with a new client that trusts `trustRoots` only and presents `identity`, and
/// collects the response.
///
/// The client does not retry a failed connection, so a TLS failure surfaces at once as the error.
func fetchOverTLS(
    _ url: String,
    trusting trustRoots: [TestCertificateAuthority.Credential],
    identity: TestCertificateAuthority.Credential? = nil,
    sendingIntermediates: Bool = true,
    httpVersion: HTTPClient.Configuration.HTTPVersion = .automatic,
    hostnameVerification: Bool = true
) async throws -> TLSFetched {
    var tls = TLSConfiguration.makeClientConfiguration()
    tls.trustRoots = .certificates(
        try trustRoots.map { try NIOSSLCertificate(bytes: Array($0.certificatePEM.utf8), format: .pem) }
    )
    if !hostnameVerification {
        tls.certificateVerification = .noHostnameVerification
    }
    if let identity {
        let pem = sendingIntermediates ? identity.chainPEM : identity.certificatePEM
        tls.certificateChain = try NIOSSLCertificate.fromPEMBytes(Array(pem.utf8)).map { .certificate($0) }
        tls.privateKey = .privateKey(try NIOSSLPrivateKey(bytes: Array(identity.privateKeyPEM.utf8), format: .pem))
    }
    var configuration = HTTPClient.Configuration(
        tlsConfiguration: tls,
        redirectConfiguration: .disallow,
        timeout: .init(connect: .seconds(5), read: .seconds(10))
    )
    configuration.httpVersion = httpVersion
    configuration.connectionPool.retryConnectionEstablishment = false
    let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    do {
        let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 1024 * 1024)
        try await client.shutdown()
        return TLSFetched(
            version: response.version,
            status: Int(response.status.code),
            body: Array(body.readableBytesView)
        )
    } catch {
        try? await client.shutdown()
        throw error
    }
}
