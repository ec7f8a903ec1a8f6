import AsyncHTTPClient
import Foundation
import KiteTestServer
import NIOCore
import NIOEmbedded
import NIOHTTP1
import NIOPosix
import NIOSOCKS
import NIOSSL
import Testing

@testable import Kite

/// Engine errors map to Kite codes by their cases, read from their structure, not their text.
@Suite struct EngineErrorCaseTests {
    @Test func clientErrorCasesAreReadWithAndWithoutPayloads() {
        #expect(EngineErrorCase.name(of: .invalidHeaderFieldNames(["Bad Name"])) == "invalidHeaderFieldNames")
        #expect(EngineErrorCase.name(of: .invalidHeaderFieldValues(["a\r\nb"])) == "invalidHeaderFieldValues")
        #expect(EngineErrorCase.name(of: .readTimeout) == "readTimeout")
        #expect(EngineErrorCase.name(of: .remoteConnectionClosed) == "remoteConnectionClosed")
    }

    @Test func headerCasesBecomeInvalidHeaderAndOthersDoNot() {
        let transport = AHCTransport(configuration: .default, canShutDown: true)
        defer { transport.shutdownInBackground() }
        let header = transport.kiteError(from: HTTPClientError.invalidHeaderFieldValues(["x"]), authority: nil)
        #expect(header.code == .invalidHeader)
        let proxy = transport.kiteError(from: HTTPClientError.invalidProxyResponse, authority: nil)
        #expect(proxy.code == .connectionLost, "no header in the case: not a header error")
    }

    @Test func certificateVerifyFailedIsBoringSSLsPackedCode() {
        // ERR_PACK(ERR_LIB_SSL, SSL_R_CERTIFICATE_VERIFY_FAILED) = 0x1000007d.
        #expect(EngineErrorCase.certificateVerifyFailed == 0x1000_007D)
    }
}

/// Every dependency error the engine maps, built as the dependency builds it, and the ``KiteError`` code (and
/// timeout) it becomes: a dependency update that changes a mapping fails here. (AHC's `CONNECT` handler fails
/// with a private type that cannot be built outside AHC; `HostileProxyTests` meets it through a real proxy.)
@Suite struct EngineErrorMappingTests {
    static let transport = AHCTransport(configuration: .default, canShutDown: false)

    static let cases: [(any Error, KiteError.Code, KiteError.TimeoutKind?)] = [
        (HTTPClientError.connectTimeout, .timedOut, .connect),
        (HTTPClientError.tlsHandshakeTimeout, .timedOut, .connect),
        (HTTPClientError.getConnectionFromPoolTimeout, .timedOut, .connect),
        (HTTPClientError.readTimeout, .timedOut, .idleRead),
        (HTTPClientError.deadlineExceeded, .timedOut, .total),
        (HTTPClientError.cancelled, .cancelled, nil),
        (HTTPClientError.requestStreamCancelled, .cancelled, nil),
        (HTTPClientError.redirectLimitReached, .tooManyRedirects, nil),
        (HTTPClientError.redirectCycleDetected, .tooManyRedirects, nil),
        (HTTPClientError.remoteConnectionClosed, .connectionLost, nil),
        (HTTPClientError.alreadyShutdown, .sessionShutDown, nil),
        (HTTPClientError.invalidURL, .invalidURL, nil),
        (HTTPClientError.emptyHost, .invalidURL, nil),
        (HTTPClientError.emptyScheme, .invalidURL, nil),
        (HTTPClientError.bodyLengthMismatch, .invalidRequest, nil),
        (HTTPClientError.traceRequestWithBody, .invalidRequest, nil),
        (HTTPClientError.invalidHeaderFieldNames(["Bad Name"]), .invalidHeader, nil),
        (HTTPClientError.invalidHeaderFieldValues(["a\r\nb"]), .invalidHeader, nil),
        (HTTPClientError.identityCodingIncorrectlyPresent, .invalidHeader, nil),
        (HTTPClientError.invalidProxyResponse, .connectionLost, nil),
        (ChannelError.connectTimeout(.seconds(3)), .timedOut, .connect),
        (ChannelError.ioOnClosedChannel, .connectionLost, nil),
        (ChannelError.alreadyClosed, .connectionLost, nil),
        (ChannelError.outputClosed, .connectionLost, nil),
        (ChannelError.inputClosed, .connectionLost, nil),
        (ChannelError.eof, .connectionLost, nil),
        (IOError(errnoCode: ECONNREFUSED, reason: "connect"), .connectionFailed, nil),
        (IOError(errnoCode: ENETUNREACH, reason: "connect"), .connectionFailed, nil),
        (IOError(errnoCode: ECONNRESET, reason: "read"), .connectionLost, nil),
        (IOError(errnoCode: EPIPE, reason: "write"), .connectionLost, nil),
        (HTTPParserError.invalidEOFState, .connectionLost, nil),
        (HTTPParserError.invalidStatus, .invalidResponse, nil),
        (NIOTooManyBytesError(maxBytes: 10), .invalidResponse, nil),
        (CancellationError(), .cancelled, nil),
        (IdleWriteTimeoutError(timeout: .seconds(60)), .timedOut, .idleWrite),
        (NIOSSLExtraError.failedToValidateHostname, .serverTrustEvaluationFailed, nil),
        (NIOSSLError.uncleanShutdown, .tlsFailed, nil),
    ]

    @Test(arguments: 0..<Self.cases.count)
    func eachDependencyErrorMapsToItsCode(_ index: Int) {
        let (error, code, timeout) = Self.cases[index]
        let mapped = Self.transport.kiteError(from: error, authority: "example.test")
        #expect(mapped.code == code, "\(error) became \(mapped)")
        #expect(mapped.timeout == timeout, "\(error) became \(mapped)")
    }

    /// A real handshake failure (BoringSSL's packed verify code, read from its structure), made in memory.
    @Test func aHandshakeThatRefusesTheCertificateIsATrustFailureAndOtherTLSFailuresAreNot() throws {
        let authority = try TestCertificateAuthority()
        let credential = authority.selfSigned
        let chain = try credential.chain.map { NIOSSLCertificateSource.certificate(try TLSOptions.nioCertificate($0)) }
        let key = try NIOSSLPrivateKey(bytes: Array(credential.privateKeyPEM.utf8), format: .pem)
        let server = EmbeddedChannel()
        let serverContext = try NIOSSLContext(
            configuration: .makeServerConfiguration(certificateChain: chain, privateKey: .privateKey(key))
        )
        try server.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: serverContext))
        var clientConfiguration = TLSConfiguration.makeClientConfiguration()
        clientConfiguration.trustRoots = .certificates([try TLSOptions.nioCertificate(authority.root.certificate)])
        let client = EmbeddedChannel()
        try client.pipeline.syncOperations.addHandler(
            NIOSSLClientHandler(
                context: try NIOSSLContext(configuration: clientConfiguration),
                serverHostname: "localhost"
            )
        )
        let address = try SocketAddress(ipAddress: "127.0.0.1", port: 443)
        _ = server.connect(to: address)
        _ = client.connect(to: address)
        var failure: (any Error)?
        for _ in 0..<10 where failure == nil {
            do {
                while let bytes = try client.readOutbound(as: ByteBuffer.self) { try server.writeInbound(bytes) }
                while let bytes = try server.readOutbound(as: ByteBuffer.self) { try client.writeInbound(bytes) }
            } catch {
                failure = error
            }
        }
        let error = try #require(failure)
        #expect(AHCTransport.isVerificationFailure(error), "\(error)")
        let mapped = Self.transport.kiteError(from: error, authority: "localhost")
        #expect(mapped.code == .serverTrustEvaluationFailed)
        #expect(mapped.message == "the server localhost is not trusted: its certificate failed verification")
        // The failed handshake closed the channels already, so `finish()` throws before it runs their loops; the
        // pipelines' teardown waits there, and each channel stayed in a cycle with its handlers (LeakSanitizer).
        _ = try? server.finish()
        _ = try? client.finish()
        server.embeddedEventLoop.run()
        client.embeddedEventLoop.run()
    }

    /// Proxy failures, said in terms of the proxy.
    @Test func proxyErrorsBecomeProxyFailedOrConnectTimeouts() async throws {
        let client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton)
        defer { Task { try? await client.shutdown() } }
        let proxy = ProxyServer(kind: .http, host: "proxy.test", port: 3128)
        let proxied = ProxyClients.Proxied(server: proxy, client: client, forwards: false)
        let cases: [(any Error, KiteError.Code, KiteError.TimeoutKind?)] = [
            (HTTPClientError.proxyAuthenticationRequired, .proxyFailed, nil),
            (HTTPClientError.invalidProxyResponse, .proxyFailed, nil),
            (HTTPClientError.httpProxyHandshakeTimeout, .timedOut, .connect),
            (HTTPClientError.socksHandshakeTimeout, .timedOut, .connect),
            (SOCKSError.ConnectionFailed(reply: .notAllowed), .proxyFailed, nil),
            (SOCKSError.InvalidServerState(), .proxyFailed, nil),
            (SOCKSError.UnexpectedRead(), .proxyFailed, nil),
            (IOError(errnoCode: ECONNREFUSED, reason: "connect"), .connectionFailed, nil),
        ]
        for (error, code, timeout) in cases {
            let mapped = Self.transport.failure(from: error, through: proxied, authority: "api.test:443")
            #expect(mapped.code == code && mapped.timeout == timeout, "\(error) became \(mapped)")
            #expect(mapped.message.contains("proxy http://proxy.test:3128"), "\(mapped)")
        }
    }
}
