import Foundation
import Testing

/// Values that reached a trap in async-http-client or NIO, each fed to a whole Kite process (``Probe``): before the
/// guards, the process died (SIGILL) and took every request in it along; now the request fails with a `KiteError`
/// naming the value, and the process lives on.
@Suite struct HostileEngineInputTests {
    /// The fault server's `/raw` URL that answers with exactly `bytes`, then `then` (`fin`, `rst`, `stay`).
    static func raw(_ bytes: String, then: String = "fin") async throws -> String {
        let encoded = Data(bytes.utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        return try await FaultServer.url("/raw?b64=\(encoded)&then=\(then)")
    }

    static let kinds = ["data", "download", "stream", "upload"]

    // MARK: A status below 100 (async-http-client's HTTPRequestStateMachine)

    @Test(arguments: ["000 Zero", "001 One", "050 Fifty", "099 Ninety-nine"], Self.kinds)
    func aStatusBelow100FailsAsInvalidHTTPInEveryRequestKind(statusLine: String, kind: String) async throws {
        let url = try await Self.raw("HTTP/1.1 \(statusLine)\r\nContent-Length: 3\r\n\r\nabc")
        let outcome = try await Probe.run(kind, url)
        #expect(outcome.exitedNormally, "\(outcome)")
        let status = String(statusLine.prefix(3))
        #expect(
            outcome.output
                == "error invalidResponse the response status \(status) is not a three-digit code in 100...999",
            "\(outcome)"
        )
    }

    @Test(arguments: ["Content-Length: 0\r\n", "", "Transfer-Encoding: chunked\r\n"])
    func aStatusBelow100WithoutABodyFailsToo(framing: String) async throws {
        let body = framing.hasPrefix("Transfer") ? "0\r\n\r\n" : ""
        let url = try await Self.raw("HTTP/1.1 099 X\r\n\(framing)\r\n\(body)")
        let outcome = try await Probe.run("data", url)
        #expect(outcome.exitedNormally, "\(outcome)")
        #expect(outcome.output.hasPrefix("error invalidResponse the response status 099 "), "\(outcome)")
    }

    @Test func anUnsolicitedSwitchingProtocolsIsAnError() async throws {
        let url = try await Self.raw("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\nnot HTTP at all")
        let outcome = try await Probe.run("data", url)
        #expect(outcome.exitedNormally, "\(outcome)")
        #expect(
            outcome.output
                == "error invalidResponse the server switched protocols (101) though the request offered no upgrade",
            "\(outcome)"
        )
    }

    // MARK: 65,535 header fields or more (swift-http-types' HTTPFields)

    /// `HTTPFields` traps at its 65,535th field. NIO's decoder refuses a head of 65,535 fields itself (65,534 pass,
    /// measured with this route), one short of the trap: Kite refuses more than 10,000 before it builds the fields.
    @Test func aResponseWithMoreThan10000FieldsIsInvalid() async throws {
        let outcome = try await Probe.run("data", try await FaultServer.url("/many-fields?count=65533"))
        #expect(outcome.exitedNormally, "\(outcome)")
        #expect(
            outcome.output == "error invalidResponse the response has 65534 header fields, more than 10000",
            "\(outcome)"
        )
    }

    // MARK: A huge request head answered before it was read (async-http-client's RequestBag)

    @Test func aDownloadWhoseHeadIsTooLargeIsRefusedBeforeItIsSent() async throws {
        // The server answers 200 before reading, as one that refuses a huge head does; with an 8 MB head the socket
        // is still unwritable then, and async-http-client trapped once it turned writable.
        let server = try Sockets.EarlyAnswer(
            head: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n",
            rest: "0\r\n\r\n",
            delay: .milliseconds(300)
        )
        let outcome = try await Probe.run("download-big-head", "http://127.0.0.1:\(server.port)/")
        #expect(outcome.exitedNormally, "\(outcome)")
        #expect(outcome.output.hasPrefix("error invalidHeader the request's header fields hold 80000"), "\(outcome)")
        #expect(outcome.output.hasSuffix("bytes, more than 262144"), "\(outcome)")
        // Within the limit the same exchange works.
        let small = try await Probe.run(
            "download-big-head",
            "http://127.0.0.1:\(server.port)/",
            ["--header-bytes", "1000"]
        )
        #expect(small.output == "response 200 0", "\(small)")
    }

    // MARK: A long IPv6 zone through a SOCKS proxy (NIOSOCKS writes a name's length in one byte)

    @Test func aLongIPv6ZoneIsAnInvalidURL() async throws {
        // A SOCKS5 proxy that selects "no authentication" at once: the client then writes its request for the host.
        let proxy = try Sockets.EarlyAnswer(head: "\u{5}\u{0}", rest: "", delay: .zero)
        let zone = String(repeating: "x", count: 300)
        let url = "https://[fe80::1%25\(zone)]/"
        let options = ["--proxy-host", "127.0.0.1", "--proxy-port", "\(proxy.port)", "--proxy-kind", "socks"]
        let outcome = try await Probe.run("proxy", url, options)
        #expect(outcome.exitedNormally, "\(outcome)")
        #expect(
            outcome.output == "error invalidURL URL \"\(url)\" has an IPv6 zone of 300 bytes, longer than 15",
            "\(outcome)"
        )
    }

    // MARK: A URL without a scheme named to the cache (swift-http-types' HTTPRequest(method:url:))

    @Test(arguments: ["relative/path", "//host/x", "mailto:kite@example.com", "file:///etc/passwd"])
    func theCacheTakesAURLNoRequestCouldHave(url: String) async throws {
        let outcome = try await Probe.run("cache-remove", url)
        #expect(outcome.exitedNormally, "\(outcome)")
        #expect(outcome.output == "response - 0", "\(outcome)")
    }

    // MARK: A port above 65535 (NIO's SocketAddress)

    @Test(arguments: [
        ("http://127.0.0.1:99999/x", "99999"), ("http://[::1]:70000/", "70000"),
        ("http://127.0.0.1:4294967296/", "4294967296"), ("http://localhost:99999/", "99999"),
        ("http://127.0.0.1:0/", "0"), ("https://127.0.0.1:65536/", "65536"),
    ])
    func aPortOutside1To65535IsAnInvalidURLWhateverTheHost(url: String, port: String) async throws {
        for kind in Self.kinds {
            let outcome = try await Probe.run(kind, url)
            #expect(outcome.exitedNormally, "\(kind): \(outcome)")
            #expect(
                outcome.output == "error invalidURL URL \"\(url)\" has the port \(port), which is not in 1...65535",
                "\(kind): \(outcome)"
            )
        }
    }

    @Test(arguments: ["http://127.0.0.1:99999/x", "http://[::1]:70000/", "http://127.0.0.1:65536"])
    func aRedirectToAPortAbove65535IsAnInvalidURL(location: String) async throws {
        let url = try await FaultServer.url("/redirect-scheme?to=\(location)")
        let outcome = try await Probe.run("data", url)
        #expect(outcome.exitedNormally, "\(outcome)")
        let port = location.split(separator: ":").last?.split(separator: "/").first ?? ""
        #expect(outcome.output.hasPrefix("error invalidURL the server redirected to URL \""), "\(outcome)")
        #expect(outcome.output.hasSuffix("has the port \(port), which is not in 1...65535"), "\(outcome)")
    }

    // MARK: The same over HTTP/2 (swift-nio-http2's codec, then async-http-client)

    @Test(arguments: [
        ("000", "the response status 000 is not a three-digit code in 100...999"),
        ("099", "the response status 099 is not a three-digit code in 100...999"),
        ("-1", "the response status \"-1\" is not a three-digit code"),
        ("", "the response status \"\" is not a three-digit code"),
        ("+99", "the response status \"+99\" is not a three-digit code"),
        ("1000", "the response status \"1000\" is not a three-digit code"),
        ("101", "the server switched protocols (101) though the request offered no upgrade"),
    ])
    func anHTTP2StatusThatIsNotAThreeDigitCodeFailsAsInvalidHTTP(status: String, message: String) async throws {
        let server = try await RawHTTP2Server { stream in
            RawHTTP2Server.headers(stream: stream, [(":status", status), ("content-length", "3")], endStream: false)
                + RawHTTP2Server.data(stream: stream, Array("abc".utf8), endStream: true)
        }
        defer { Task { try? await server.shutdown() } }
        let ca = FileManager.default.temporaryDirectory.appendingPathComponent("kite-h2-ca-\(UUID()).pem")
        try server.certificatePEM.write(to: ca, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: ca) }
        for kind in Self.kinds {
            let outcome = try await Probe.run(kind, "https://127.0.0.1:\(server.port)/", ["--ca", ca.path])
            #expect(outcome.exitedNormally, "\(kind): \(outcome)")
            #expect(outcome.output == "error invalidResponse \(message)", "\(kind): \(outcome)")
        }
    }

    /// NIOHTTP2's own header validation refuses this one first: it resets the stream.
    @Test func anHTTP2HeadWithoutStatusFailsTheRequest() async throws {
        let server = try await RawHTTP2Server { stream in
            RawHTTP2Server.headers(stream: stream, [("content-length", "0")], endStream: true)
        }
        defer { Task { try? await server.shutdown() } }
        let ca = FileManager.default.temporaryDirectory.appendingPathComponent("kite-h2-ca-\(UUID()).pem")
        try server.certificatePEM.write(to: ca, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: ca) }
        let outcome = try await Probe.run("data", "https://127.0.0.1:\(server.port)/", ["--ca", ca.path])
        #expect(outcome.exitedNormally, "\(outcome)")
        #expect(
            outcome.output == "error connectionLost the server reset the request's HTTP/2 stream (PROTOCOL_ERROR)",
            "\(outcome)"
        )
    }
}
