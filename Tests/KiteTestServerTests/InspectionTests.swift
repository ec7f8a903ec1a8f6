import AsyncHTTPClient
import Testing

@Suite("Request inspection")
struct InspectionTests {
    @Test("GET /get echoes args, headers, origin and url")
    func get() async throws {
        try await withHarness { harness in
            let response = try await harness.fetch(
                "/get?a=1&a=2&b=hello+world&c=%C3%A9t%C3%A9&empty=",
                headers: [("User-Agent", "kite-tests"), ("X-Custom-Header", "one"), ("x-custom-header", "two")]
            )
            #expect(response.status == 200)
            #expect(response.header("Content-Type") == "application/json")
            let json = try response.json()
            #expect(json.object.map { Set($0.keys) } == ["args", "headers", "origin", "url"])
            #expect(json["args"] == ["a": ["1", "2"], "b": "hello world", "c": "été", "empty": ""])
            #expect(json["origin"] == "127.0.0.1")
            let port = harness.server.port
            #expect(json["url"] == .string("http://127.0.0.1:\(port)/get?a=1&a=2&b=hello+world&c=%C3%A9t%C3%A9&empty="))
            let headers = try #require(json["headers"])
            #expect(headers["User-Agent"] == "kite-tests")
            #expect(headers["X-Custom-Header"] == "one,two")
            #expect(headers["Host"] == .string("127.0.0.1:\(port)"))
        }
    }

    @Test("HEAD /get has the headers of GET and no body")
    func head() async throws {
        try await withHarness { harness in
            let get = try await harness.fetch("/get")
            let head = try await harness.fetch("/get", method: "HEAD")
            #expect(head.status == 200)
            #expect(head.body.isEmpty)
            #expect(head.header("Content-Type") == "application/json")
            #expect(head.header("Content-Length") == get.header("Content-Length"))
        }
    }

    @Test("wrong method on /get and /post is 405")
    func methodNotAllowed() async throws {
        try await withHarness { harness in
            let postToGet = try await harness.fetch("/get", method: "POST", body: Array("x".utf8))
            #expect(postToGet.status == 405)
            #expect(postToGet.header("Allow") == "GET, HEAD, OPTIONS")
            let getToPost = try await harness.fetch("/post")
            #expect(getToPost.status == 405)
            #expect(getToPost.header("Allow") == "OPTIONS, POST")
            #expect(try await harness.fetch("/put", method: "DELETE").status == 405)
            #expect(try await harness.fetch("/delete", method: "PATCH").status == 405)
        }
    }

    @Test("/headers, /ip and /user-agent")
    func headersIPAndUserAgent() async throws {
        try await withHarness { harness in
            let headers = try await harness.fetch("/headers", headers: [("Accept", "text/plain"), ("X-API-Key", "k")])
            let json = try headers.json()
            #expect(json.object.map { Array($0.keys) } == ["headers"])
            #expect(json["headers"]?["Accept"] == "text/plain")
            #expect(json["headers"]?["X-Api-Key"] == "k")

            let ip = try await harness.fetch("/ip").json()
            #expect(ip == ["origin": "127.0.0.1"])

            let forwarded = try await harness.fetch("/ip", headers: [("X-Forwarded-For", "10.1.2.3")]).json()
            #expect(forwarded == ["origin": "10.1.2.3"])

            let agent = try await harness.fetch("/user-agent", headers: [("User-Agent", "Kite/1.0")]).json()
            #expect(agent == ["user-agent": "Kite/1.0"])
        }
    }

    @Test("/uuid returns a lowercase UUID")
    func uuid() async throws {
        try await withHarness { harness in
            let json = try await harness.fetch("/uuid").json()
            let uuid = try #require(json["uuid"]?.string)
            #expect(uuid.count == 36)
            #expect(uuid == uuid.lowercased())
            #expect(uuid.split(separator: "-").map(\.count) == [8, 4, 4, 4, 12])
        }
    }

    @Test("OPTIONS answers as a CORS preflight and responses carry CORS headers")
    func cors() async throws {
        try await withHarness { harness in
            let preflight = try await harness.fetch(
                "/get",
                method: "OPTIONS",
                headers: [("Origin", "https://example.com"), ("Access-Control-Request-Headers", "X-Thing")]
            )
            #expect(preflight.status == 200)
            #expect(preflight.body.isEmpty)
            #expect(preflight.header("Access-Control-Allow-Origin") == "https://example.com")
            #expect(preflight.header("Access-Control-Allow-Methods") == "GET, POST, PUT, DELETE, PATCH, OPTIONS")
            #expect(preflight.header("Access-Control-Allow-Headers") == "X-Thing")
            #expect(preflight.header("Access-Control-Max-Age") == "3600")
            let get = try await harness.fetch("/get")
            #expect(get.header("Access-Control-Allow-Origin") == "*")
            #expect(get.header("Access-Control-Allow-Credentials") == "true")
        }
    }

    @Test("unknown paths are 404")
    func notFound() async throws {
        try await withHarness { harness in
            let unknown = try await harness.fetch("/does-not-exist")
            #expect(unknown.status == 404)
            #expect(try await harness.fetch("/get/extra").status == 404)
        }
    }

    @Test("/delay waits and then echoes the request")
    func delay() async throws {
        try await withHarness { harness in
            let clock = ContinuousClock()
            let start = clock.now
            let response = try await harness.fetch("/delay/0.3?x=1")
            #expect(start.duration(to: clock.now) >= .milliseconds(290))
            #expect(response.status == 200)
            let json = try response.json()
            #expect(json["args"] == ["x": "1"])
            #expect(json.object.map { Set($0.keys) } == ["args", "data", "files", "form", "headers", "origin", "url"])

            let posted = try await harness.fetch("/delay/0", method: "POST", contentType: "text/plain", text: "hi")
            #expect(try posted.json()["data"] == "hi")
            #expect(try await harness.fetch("/delay/abc").status == 400)
            #expect(try await harness.fetch("/delay/-1").status == 400)
        }
    }
}
