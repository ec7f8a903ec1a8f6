import AsyncHTTPClient
import KiteTestServer
import NIOHTTP1
import NIOSSL
import Testing

@Suite("TLS serving")
struct TLSServerTests {
    @Test("a client that trusts the test root gets /get over HTTP/2, and the echoed url is https")
    func leafOverHTTP2() async throws {
        let authority = try TestCertificateAuthority()
        try await withTLSServer(.init(authority: authority)) { server in
            #expect(server.baseURL == "https://127.0.0.1:\(server.port)")
            let response = try await fetchOverTLS(server.baseURL + "/get?a=1", trusting: [authority.root])
            #expect(response.status == 200)
            #expect(response.version == .http2)
            #expect(try response.json()["url"] == .string("https://127.0.0.1:\(server.port)/get?a=1"))
        }
    }

    @Test("a client limited to HTTP/1.1 gets /get over HTTP/1.1 with TLS")
    func leafOverHTTP1() async throws {
        let authority = try TestCertificateAuthority()
        try await withTLSServer(.init(authority: authority)) { server in
            let response = try await fetchOverTLS(
                server.baseURL + "/get",
                trusting: [authority.root],
                httpVersion: .http1Only
            )
            #expect(response.status == 200)
            #expect(response.version == .http1_1)
            #expect(try response.json()["url"] == .string("https://127.0.0.1:\(server.port)/get"))
        }
    }

    @Test("/tls reports the protocol ALPN chose and the TLS version", arguments: [true, false])
    func tlsEndpointReportsTheProtocol(http2: Bool) async throws {
        let authority = try TestCertificateAuthority()
        try await withTLSServer(.init(authority: authority)) { server in
            let response = try await fetchOverTLS(
                server.baseURL + "/tls",
                trusting: [authority.root],
                httpVersion: http2 ? .automatic : .http1Only
            )
            #expect(response.status == 200)
            #expect(
                try response.json() == [
                    "protocol": .string(http2 ? "h2" : "http/1.1"),
                    "tls_version": "TLSv1.3",
                    "client_certificate": nil,
                ]
            )
        }
    }

    @Test("an expired certificate is refused")
    func expiredIsRefused() async throws {
        let authority = try TestCertificateAuthority()
        try await withTLSServer(.init(authority: authority, certificate: .expired)) { server in
            await expectCertificateRefused {
                try await fetchOverTLS(server.baseURL + "/get", trusting: [authority.root])
            }
        }
    }

    @Test("a certificate for another host is refused, and accepted without host name verification")
    func wrongHostIsRefused() async throws {
        let authority = try TestCertificateAuthority()
        try await withTLSServer(.init(authority: authority, certificate: .wrongHost)) { server in
            await #expect(throws: NIOSSLExtraError.failedToValidateHostname) {
                try await fetchOverTLS(server.baseURL + "/get", trusting: [authority.root])
            }
            let unchecked = try await fetchOverTLS(
                server.baseURL + "/get",
                trusting: [authority.root],
                hostnameVerification: false
            )
            #expect(unchecked.status == 200)
        }
    }

    @Test("a self-signed certificate is refused unless the client trusts that certificate")
    func selfSignedIsRefused() async throws {
        let authority = try TestCertificateAuthority()
        try await withTLSServer(.init(authority: authority, certificate: .selfSigned)) { server in
            await expectCertificateRefused {
                try await fetchOverTLS(server.baseURL + "/get", trusting: [authority.root])
            }
            let trusted = try await fetchOverTLS(server.baseURL + "/get", trusting: [authority.selfSigned])
            #expect(trusted.status == 200)
        }
    }

    @Test("a certificate from another root is refused unless the client trusts that root")
    func untrustedLeafIsRefused() async throws {
        let authority = try TestCertificateAuthority()
        try await withTLSServer(.init(authority: authority, certificate: .untrustedLeaf)) { server in
            await expectCertificateRefused {
                try await fetchOverTLS(server.baseURL + "/get", trusting: [authority.root])
            }
            let trusted = try await fetchOverTLS(server.baseURL + "/get", trusting: [authority.otherRoot])
            #expect(trusted.status == 200)
        }
    }

    @Test("a server that requires a client certificate refuses a client without one")
    func mutualTLSRefusesAnonymousClients() async throws {
        let authority = try TestCertificateAuthority()
        try await withTLSServer(.init(authority: authority, clientCertificate: .required)) { server in
            // With TLS 1.3 the client finishes its handshake first; the server then closes the connection.
            await #expect(throws: HTTPClientError.remoteConnectionClosed) {
                try await fetchOverTLS(server.baseURL + "/get", trusting: [authority.root])
            }
        }
    }

    @Test("a server that requires a client certificate accepts the test client's, with or without its intermediate")
    func mutualTLSAcceptsTheTestClient() async throws {
        let authority = try TestCertificateAuthority()
        let options = KiteTestServer.TLSOptions(authority: authority, clientCertificate: .required)
        #expect(options.requiresClientCertificate)
        try await withTLSServer(options) { server in
            let response = try await fetchOverTLS(
                server.baseURL + "/get",
                trusting: [authority.root],
                identity: authority.client
            )
            #expect(response.status == 200)
            #expect(response.version == .http2)
            let leafOnly = try await fetchOverTLS(
                server.baseURL + "/tls",
                trusting: [authority.root],
                identity: authority.client,
                sendingIntermediates: false
            )
            #expect(leafOnly.status == 200)
            #expect(
                try leafOnly.json()["client_certificate"] == [
                    "subject": "CN=Kite Test Client,O=Kite", "common_name": "Kite Test Client",
                ]
            )
        }
    }

    @Test("a server that requires a client certificate refuses one from another root")
    func mutualTLSRefusesForeignClients() async throws {
        let authority = try TestCertificateAuthority()
        try await withTLSServer(.init(authority: authority, clientCertificate: .required)) { server in
            await #expect(throws: HTTPClientError.remoteConnectionClosed) {
                try await fetchOverTLS(
                    server.baseURL + "/get",
                    trusting: [authority.root],
                    identity: authority.untrustedLeaf
                )
            }
        }
    }

    @Test("a server that requests a client certificate accepts clients with and without one")
    func requestedClientCertificateIsOptional() async throws {
        let authority = try TestCertificateAuthority()
        try await withTLSServer(.init(authority: authority, clientCertificate: .requested)) { server in
            let anonymous = try await fetchOverTLS(server.baseURL + "/tls", trusting: [authority.root])
            #expect(anonymous.status == 200)
            #expect(try anonymous.json()["client_certificate"] == .some(.null))
            let identified = try await fetchOverTLS(
                server.baseURL + "/tls",
                trusting: [authority.root],
                identity: authority.client,
                httpVersion: .http1Only
            )
            #expect(identified.status == 200)
            #expect(try identified.json()["client_certificate"]?["common_name"] == "Kite Test Client")
            #expect(try identified.json()["protocol"] == "http/1.1")
        }
    }

    @Test("a plain server has no /tls endpoint and an http base URL")
    func plainServerHasNoTLSEndpoint() async throws {
        try await withHarness { harness in
            #expect(harness.server.tls == nil)
            #expect(harness.server.baseURL.hasPrefix("http://"))
            let response = try await harness.fetch("/tls")
            #expect(response.status == 404)
        }
    }
}

/// Expects `body` to fail because BoringSSL refused the server's certificate chain.
func expectCertificateRefused(
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () async throws -> TLSFetched
) async {
    let error = await #expect(throws: NIOSSLError.self, sourceLocation: sourceLocation) {
        try await body()
    }
    guard case .handshakeFailed(let reason) = error else {
        Issue.record("Expected a failed handshake, got \(String(describing: error))", sourceLocation: sourceLocation)
        return
    }
    #expect("\(reason)".contains("CERTIFICATE_VERIFY_FAILED"), sourceLocation: sourceLocation)
}
