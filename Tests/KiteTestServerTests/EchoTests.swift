import AsyncHTTPClient
import Testing

@Suite("Body echo endpoints")
struct EchoTests {
    @Test("POST /post with a JSON body fills data and json", arguments: ["/post", "/put", "/patch", "/delete"])
    func jsonBody(path: String) async throws {
        let method = path.dropFirst().uppercased()
        try await withHarness { harness in
            let body = #"{"name": "kite", "tags": ["a", "b"], "count": 3, "ratio": 0.5, "ok": true, "none": null}"#
            let response = try await harness.fetch(
                path + "?q=1",
                method: method,
                contentType: "application/json",
                text: body
            )
            #expect(response.status == 200)
            let json = try response.json()
            #expect(
                json.object.map { Set($0.keys) } == [
                    "args", "data", "files", "form", "headers", "json", "origin", "url",
                ]
            )
            #expect(json["args"] == ["q": "1"])
            #expect(json["data"] == .string(body))
            #expect(json["form"] == [:])
            #expect(json["files"] == [:])
            #expect(
                json["json"] == [
                    "name": "kite", "tags": ["a", "b"], "count": 3, "ratio": 0.5, "ok": true, "none": nil,
                ]
            )
            #expect(json["headers"]?["Content-Type"] == "application/json")
            #expect(json["headers"]?["Content-Length"] == .string(String(body.utf8.count)))
        }
    }

    @Test("text bodies are echoed as data with json null")
    func textBody() async throws {
        try await withHarness { harness in
            let json = try await harness.fetch(
                "/post",
                method: "POST",
                contentType: "text/plain",
                text: "héllo\n\"wörld\""
            )
            .json()
            #expect(json["data"] == "héllo\n\"wörld\"")
            #expect(json["json"] == .null)
            let scalar = try await harness.fetch("/post", method: "POST", contentType: "text/plain", text: " 42 ")
                .json()
            #expect(scalar["json"] == 42)
            let empty = try await harness.fetch("/post", method: "POST").json()
            #expect(empty["data"] == "")
            #expect(empty["json"] == .null)
        }
    }

    @Test("urlencoded forms fill form and leave data empty")
    func urlencodedForm() async throws {
        try await withHarness { harness in
            let json = try await harness.fetch(
                "/post",
                method: "POST",
                contentType: "application/x-www-form-urlencoded",
                text: "name=Kite+Flyer&tag=a&tag=b&symbol=%26%3D&flag"
            ).json()
            #expect(json["form"] == ["name": "Kite Flyer", "tag": ["a", "b"], "symbol": "&=", "flag": ""])
            #expect(json["data"] == "")
            #expect(json["json"] == .null)
            #expect(json["files"] == [:])
        }
    }

    @Test("multipart forms fill form and files")
    func multipartForm() async throws {
        try await withHarness { harness in
            let boundary = "kite-boundary-1234"
            var body: [UInt8] = []
            func add(_ text: String) { body += Array(text.utf8) }
            add("--\(boundary)\r\nContent-Disposition: form-data; name=\"field\"\r\n\r\nvalue one\r\n")
            add("--\(boundary)\r\nContent-Disposition: form-data; name=\"field\"\r\n\r\nvalue two\r\n")
            add("--\(boundary)\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nline1\r\nline2\r\n")
            add(
                "--\(boundary)\r\nContent-Disposition: form-data; name=\"upload\"; filename=\"a.txt\"\r\n"
                    + "Content-Type: text/plain\r\n\r\nfile contents\r\n"
            )
            add(
                "--\(boundary)\r\nContent-Disposition: form-data; name=\"binary\"; filename=\"b.bin\"\r\n"
                    + "Content-Type: image/x-test\r\n\r\n"
            )
            body += [0xFF, 0x00, 0xFE]
            add("\r\n--\(boundary)--\r\n")
            let response = try await harness.fetch(
                "/post",
                method: "POST",
                headers: [("Content-Type", "multipart/form-data; boundary=\(boundary)")],
                body: body
            )
            #expect(response.status == 200)
            let json = try response.json()
            #expect(json["form"] == ["field": ["value one", "value two"], "note": "line1\r\nline2"])
            #expect(json["files"] == ["upload": "file contents", "binary": "data:image/x-test;base64,/wD+"])
            #expect(json["data"] == "")
            #expect(json["json"] == .null)
        }
    }

    @Test("a malformed multipart body is a 400")
    func malformedMultipart() async throws {
        try await withHarness { harness in
            let response = try await harness.fetch(
                "/post",
                method: "POST",
                contentType: "multipart/form-data; boundary=xyz",
                text: "this is not multipart"
            )
            #expect(response.status == 400)
        }
    }

    @Test("binary bodies are reported as a base64 data URL")
    func binaryBody() async throws {
        try await withHarness { harness in
            let json = try await harness.fetch(
                "/post",
                method: "POST",
                headers: [("Content-Type", "application/octet-stream")],
                body: [0x00, 0xFF, 0x10, 0x80]
            ).json()
            #expect(json["data"] == "data:application/octet-stream;base64,AP8QgA==")
            #expect(json["json"] == .null)
        }
    }

    @Test("/anything echoes any method, path and body")
    func anything() async throws {
        try await withHarness { harness in
            let response = try await harness.fetch(
                "/anything/some/path?x=y",
                method: "PUT",
                contentType: "application/json",
                text: #"{"a": [1, 2]}"#
            )
            #expect(response.status == 200)
            let json = try response.json()
            #expect(json["method"] == "PUT")
            #expect(json["args"] == ["x": "y"])
            #expect(json["json"] == ["a": [1, 2]])
            #expect(json["url"] == .string("\(harness.server.baseURL)/anything/some/path?x=y"))

            let custom = try await harness.fetch("/anything", method: "PURGE").json()
            #expect(custom["method"] == "PURGE")
            #expect(
                custom.object.map { Set($0.keys) } == [
                    "args", "data", "files", "form", "headers", "json", "method", "origin", "url",
                ]
            )

            let head = try await harness.fetch("/anything", method: "HEAD")
            #expect(head.status == 200)
            #expect(head.body.isEmpty)

            #expect(try await harness.fetch("/anythingelse").status == 404)
        }
    }
}
