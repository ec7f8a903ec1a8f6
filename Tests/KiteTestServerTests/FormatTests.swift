import AsyncHTTPClient
import Testing

@Suite("Fixed documents")
struct FormatTests {
    @Test("/html is an HTML page")
    func html() async throws {
        try await withHarness { harness in
            let response = try await harness.fetch("/html")
            #expect(response.status == 200)
            #expect(response.header("Content-Type") == "text/html; charset=utf-8")
            #expect(response.text.hasPrefix("<!DOCTYPE html>"))
            #expect(response.text.contains("<h1>Herman Melville - Moby-Dick</h1>"))
        }
    }

    @Test("/json is the slideshow")
    func json() async throws {
        try await withHarness { harness in
            let response = try await harness.fetch("/json")
            #expect(response.header("Content-Type") == "application/json")
            let expected: JSON = [
                "slideshow": [
                    "author": "Yours Truly",
                    "date": "date of publication",
                    "slides": [
                        ["title": "Wake up to WonderWidgets!", "type": "all"],
                        [
                            "items": ["Why <em>WonderWidgets</em> are great", "Who <em>buys</em> WonderWidgets"],
                            "title": "Overview",
                            "type": "all",
                        ],
                    ],
                    "title": "Sample Slide Show",
                ]
            ]
            #expect(try response.json() == expected)
            #expect(response.text.hasPrefix("{\n  \"slideshow\": {\n    \"author\": \"Yours Truly\","))
        }
    }

    @Test("/records/{n} is a JSON array of n numbered records")
    func records() async throws {
        try await withHarness { harness in
            let response = try await harness.fetch("/records/3")
            #expect(response.status == 200)
            #expect(response.header("Content-Type") == "application/json")
            let first: JSON = [
                "id": 0, "name": "record 0", "email": "user0@example.com", "active": true, "score": 0.5,
                "tags": ["alpha", "beta"],
            ]
            let records = try response.json()
            #expect(records[0] == first)
            #expect(records[2]?["email"] == "user2@example.com")
            #expect(records[1]?["active"] == false)
            #expect(records[3] == nil)
            let large = try await harness.fetch("/records/8000")
            #expect(large.text.count > 900_000)
            #expect(large.text.hasSuffix(#""tags":["alpha","beta"]}]"#))
        }
    }

    @Test("/xml is the slideshow as XML")
    func xml() async throws {
        try await withHarness { harness in
            let response = try await harness.fetch("/xml")
            #expect(response.header("Content-Type") == "application/xml")
            #expect(response.text.hasPrefix("<?xml version='1.0' encoding='us-ascii'?>"))
            #expect(response.text.contains("<title>Wake up to WonderWidgets!</title>"))
            #expect(response.text.hasSuffix("</slideshow>"))
        }
    }

    @Test("/image/png is a valid 16x16 PNG")
    func png() async throws {
        try await withHarness { harness in
            let response = try await harness.fetch("/image/png")
            #expect(response.status == 200)
            #expect(response.header("Content-Type") == "image/png")
            let bytes = response.body
            #expect(Array(bytes.prefix(8)) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
            #expect(Array(bytes[12..<16]) == Array("IHDR".utf8))
            let width = bytes[16..<20].reduce(0) { $0 << 8 | Int($1) }
            let height = bytes[20..<24].reduce(0) { $0 << 8 | Int($1) }
            #expect(width == 16)
            #expect(height == 16)
            #expect(Array(bytes.suffix(8).prefix(4)) == Array("IEND".utf8))
            #expect(response.header("Content-Length") == String(bytes.count))
        }
    }

    @Test("/robots.txt and /deny")
    func robots() async throws {
        try await withHarness { harness in
            let robots = try await harness.fetch("/robots.txt")
            #expect(robots.text == "User-agent: *\nDisallow: /deny\n")
            #expect(robots.header("Content-Type") == "text/plain")
            let deny = try await harness.fetch("/deny")
            #expect(deny.text.contains("YOU SHOULDN'T BE HERE"))
        }
    }
}
