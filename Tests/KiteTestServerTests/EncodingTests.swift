import AsyncHTTPClient
import CompressNIO
import NIOCore
import Testing

@Suite("Content encodings")
struct EncodingTests {
    private static let decompressing = HTTPClient.Configuration(
        redirectConfiguration: .disallow,
        decompression: .enabled(limit: .none)
    )

    /// Inflates `bytes` with CompressNIO.
    private static func inflate(_ bytes: [UInt8], _ algorithm: ZlibAlgorithm) throws -> [UInt8] {
        var buffer = ByteBuffer(bytes: bytes)
        let inflated = try buffer.decompress(with: algorithm)
        return Array(inflated.readableBytesView)
    }

    @Test("/gzip is gzip-compressed JSON with Content-Length of the compressed bytes")
    func gzip() async throws {
        try await withHarness { harness in
            let raw = try await harness.fetch("/gzip", headers: [("User-Agent", "gz")])
            #expect(raw.status == 200)
            #expect(raw.header("Content-Encoding") == "gzip")
            #expect(raw.header("Content-Type") == "application/json")
            #expect(raw.header("Content-Length") == String(raw.body.count))
            #expect(Array(raw.body.prefix(3)) == [0x1F, 0x8B, 0x08])

            let plain = try Self.inflate(raw.body, .gzip)
            let json = try JSON(bytes: plain)
            #expect(json["gzipped"] == true)
            #expect(json["method"] == "GET")
            #expect(json["origin"] == "127.0.0.1")
            #expect(json["headers"]?["User-Agent"] == "gz")
            #expect(json.object.map { Set($0.keys) } == ["gzipped", "headers", "method", "origin"])
            // The gzip trailer records the uncompressed size.
            let trailer = raw.body.suffix(4).reversed().reduce(0) { $0 << 8 | Int($1) }
            #expect(trailer == plain.count)

            // A client that decompresses on its own (NIO's decoder) gets the same document.
            let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: Self.decompressing)
            let inflated = try await harness.fetch("/gzip", client: client)
            try await client.shutdown()
            #expect(try inflated.json()["gzipped"] == true)
        }
    }

    @Test("/deflate is zlib-wrapped deflate JSON")
    func deflate() async throws {
        try await withHarness { harness in
            let raw = try await harness.fetch("/deflate")
            #expect(raw.status == 200)
            #expect(raw.header("Content-Encoding") == "deflate")
            #expect(raw.header("Content-Length") == String(raw.body.count))
            let header = try #require(raw.body.count >= 2 ? Array(raw.body.prefix(2)) : nil)
            #expect(header[0] == 0x78)
            #expect((Int(header[0]) * 256 + Int(header[1])) % 31 == 0)

            let json = try JSON(bytes: Self.inflate(raw.body, .zlib))
            #expect(json["deflated"] == true)
            #expect(json["method"] == "GET")
            #expect(json.object.map { Set($0.keys) } == ["deflated", "headers", "method", "origin"])

            let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: Self.decompressing)
            let inflated = try await harness.fetch("/deflate", client: client)
            try await client.shutdown()
            #expect(try inflated.json()["deflated"] == true)
        }
    }

    @Test("/encoding/utf8 is multilingual UTF-8 HTML")
    func utf8() async throws {
        try await withHarness { harness in
            let response = try await harness.fetch("/encoding/utf8")
            #expect(response.status == 200)
            #expect(response.header("Content-Type") == "text/html; charset=utf-8")
            #expect(response.text.contains("Ξεσκεπάζω"))
            #expect(response.text.contains("Съешь же ещё"))
            #expect(response.text.contains("我能吞下玻璃"))
            #expect(response.text.contains("🪁"))
            #expect(String(validating: response.body, as: UTF8.self) != nil)
        }
    }

    @Test("/base64 decodes URL-safe base64")
    func base64() async throws {
        try await withHarness { harness in
            let response = try await harness.fetch("/base64/SFRUUEJJTiBpcyBhd2Vzb21l")
            #expect(response.status == 200)
            #expect(response.text == "HTTPBIN is awesome")
            #expect(response.header("Content-Type") == "text/html; charset=utf-8")
            // "??>" encodes to "Pz8-" in the URL-safe alphabet; padding may be left out.
            #expect(try await harness.fetch("/base64/Pz8-").text == "??>")
            #expect(try await harness.fetch("/base64/YQ").text == "a")
            let invalid = try await harness.fetch("/base64/%21%21%21")
            #expect(invalid.status == 400)
            #expect(invalid.text.hasPrefix("Incorrect Base64 data"))
        }
    }
}
