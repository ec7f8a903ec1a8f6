import AsyncHTTPClient
import Testing

@Suite("Caching and response headers")
struct CachingTests {
    @Test("/cache answers 304 to conditional requests")
    func cache() async throws {
        try await withHarness { harness in
            let fresh = try await harness.fetch("/cache?a=b")
            #expect(fresh.status == 200)
            #expect(try fresh.json()["args"] == ["a": "b"])
            let lastModified = try #require(fresh.header("Last-Modified"))
            #expect(lastModified.hasSuffix(" GMT"))
            #expect(lastModified.count == 29)
            let entityTag = try #require(fresh.header("ETag"))
            #expect(entityTag.count == 32)

            let byDate = try await harness.fetch("/cache", headers: [("If-Modified-Since", lastModified)])
            #expect(byDate.status == 304)
            #expect(byDate.body.isEmpty)
            let byTag = try await harness.fetch("/cache", headers: [("If-None-Match", entityTag)])
            #expect(byTag.status == 304)
        }
    }

    @Test("/cache/n sets Cache-Control")
    func cacheControl() async throws {
        try await withHarness { harness in
            let response = try await harness.fetch("/cache/60")
            #expect(response.status == 200)
            #expect(response.header("Cache-Control") == "public, max-age=60")
            #expect(try response.json()["url"] == .string("\(harness.server.baseURL)/cache/60"))
        }
    }

    @Test("/etag honours If-None-Match and If-Match")
    func etag() async throws {
        try await withHarness { harness in
            let plain = try await harness.fetch("/etag/abc")
            #expect(plain.status == 200)
            #expect(plain.header("ETag") == "abc")
            #expect(try plain.json()["url"] == .string("\(harness.server.baseURL)/etag/abc"))

            for match in ["\"abc\"", "abc", "\"x\", W/\"abc\"", "*"] {
                let notModified = try await harness.fetch("/etag/abc", headers: [("If-None-Match", match)])
                #expect(notModified.status == 304, "\(match)")
                #expect(notModified.header("ETag") == "abc")
            }
            #expect(try await harness.fetch("/etag/abc", headers: [("If-None-Match", "\"x\"")]).status == 200)
            #expect(try await harness.fetch("/etag/abc", headers: [("If-Match", "\"x\"")]).status == 412)
            #expect(try await harness.fetch("/etag/abc", headers: [("If-Match", "\"abc\"")]).status == 200)
            #expect(try await harness.fetch("/etag/abc", headers: [("If-Match", "*")]).status == 200)
        }
    }

    @Test("/response-headers echoes the query as headers and lists them in the body")
    func responseHeaders() async throws {
        try await withHarness { harness in
            for method in ["GET", "POST"] {
                let response = try await harness.fetch(
                    "/response-headers?X-Kite=1&X-Kite=2&freeform=hello",
                    method: method
                )
                #expect(response.status == 200)
                #expect(response.headers("X-Kite") == ["1", "2"])
                #expect(response.header("freeform") == "hello")
                let json = try response.json()
                #expect(
                    json == [
                        "Content-Length": .string(String(response.body.count)),
                        "Content-Type": "application/json",
                        "X-Kite": ["1", "2"],
                        "freeform": "hello",
                    ]
                )
                #expect(response.header("Content-Length") == String(response.body.count))
            }
            #expect(try await harness.fetch("/response-headers?X-Bad=a%0D%0Ab").status == 400)
            #expect(try await harness.fetch("/response-headers?Content-Length=5").status == 400)
            #expect(try await harness.fetch("/response-headers", method: "PUT").status == 405)
        }
    }
}
