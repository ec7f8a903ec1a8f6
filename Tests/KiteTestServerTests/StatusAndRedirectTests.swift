import AsyncHTTPClient
import Testing

@Suite("Status codes and redirects")
struct StatusAndRedirectTests {
    @Test("/status answers with the requested code", arguments: [200, 201, 204, 400, 404, 500, 503])
    func plainStatus(code: Int) async throws {
        try await withHarness { harness in
            for method in ["GET", "POST", "PUT", "PATCH", "DELETE"] {
                let response = try await harness.fetch("/status/\(code)", method: method)
                #expect(response.status == code)
                #expect(response.body.isEmpty)
            }
        }
    }

    @Test("redirect codes from /status carry Location: /redirect/1", arguments: [301, 302, 303, 307, 308])
    func redirectStatus(code: Int) async throws {
        try await withHarness { harness in
            let response = try await harness.fetch("/status/\(code)")
            #expect(response.status == code)
            #expect(response.header("Location") == "/redirect/1")
        }
    }

    @Test("/status special cases: 304, 401, 418")
    func specialStatus() async throws {
        try await withHarness { harness in
            let notModified = try await harness.fetch("/status/304")
            #expect(notModified.status == 304)
            #expect(notModified.header("Location") == nil)
            let unauthorized = try await harness.fetch("/status/401")
            #expect(unauthorized.header("WWW-Authenticate") == #"Basic realm="Fake Realm""#)
            let teapot = try await harness.fetch("/status/418")
            #expect(teapot.status == 418)
            #expect(teapot.text.contains("-=[ teapot ]=-"))
            #expect(teapot.header("X-More-Info") == "http://tools.ietf.org/html/rfc2324")
        }
    }

    @Test("/status picks from a weighted list and rejects invalid codes")
    func weightedAndInvalid() async throws {
        try await withHarness { harness in
            for _ in 0..<5 {
                let code = try await harness.fetch("/status/201:0,202:1").status
                #expect(code == 202)
            }
            let either = try await harness.fetch("/status/200,204").status
            #expect(either == 200 || either == 204)
            for invalid in ["abc", "99", "100", "600", "200:x,201"] {
                let response = try await harness.fetch("/status/\(invalid)")
                #expect(response.status == 400, "\(invalid)")
                #expect(response.text == "Invalid status code")
            }
        }
    }

    @Test("/redirect/n walks relative-redirect down to /get")
    func redirectChain() async throws {
        try await withHarness { harness in
            let three = try await harness.fetch("/redirect/3")
            #expect(three.status == 302)
            #expect(three.header("Location") == "/relative-redirect/2")
            #expect(three.header("Content-Type") == "text/html; charset=utf-8")
            #expect(three.text.contains(#"<a href="/relative-redirect/2">"#))
            #expect(try await harness.fetch("/redirect/1").header("Location") == "/get")
            #expect(try await harness.fetch("/relative-redirect/2").header("Location") == "/relative-redirect/1")
            let last = try await harness.fetch("/relative-redirect/1")
            #expect(last.status == 302)
            #expect(last.header("Location") == "/get")
            #expect(try await harness.fetch("/redirect/0").status == 400)
            #expect(try await harness.fetch("/redirect/x").status == 400)
        }
    }

    @Test("absolute redirects use the Host the client addressed")
    func absoluteRedirects() async throws {
        try await withHarness { harness in
            let base = harness.server.baseURL
            let absolute = try await harness.fetch("/redirect/3?absolute=true")
            #expect(absolute.header("Location") == "\(base)/absolute-redirect/2")
            #expect(try await harness.fetch("/redirect/1?absolute=TRUE").header("Location") == "\(base)/get")
            #expect(try await harness.fetch("/absolute-redirect/2").header("Location") == "\(base)/absolute-redirect/1")
            let last = try await harness.fetch("/absolute-redirect/1")
            #expect(last.status == 302)
            #expect(last.header("Location") == "\(base)/get")
        }
    }

    @Test("a following client ends at /get")
    func followRedirects() async throws {
        let configuration = HTTPClient.Configuration(redirectConfiguration: .follow(max: 10, allowCycles: false))
        try await withHarness(configuration: configuration) { harness in
            let response = try await harness.fetch("/redirect/4")
            #expect(response.status == 200)
            #expect(try response.json()["url"] == .string("\(harness.server.baseURL)/get"))
        }
    }

    @Test("/redirect-to sends the given Location and status")
    func redirectTo() async throws {
        try await withHarness { harness in
            let plain = try await harness.fetch("/redirect-to?url=https%3A%2F%2Fexample.com%2Fa%3Fb%3Dc")
            #expect(plain.status == 302)
            #expect(plain.header("Location") == "https://example.com/a?b=c")
            let permanent = try await harness.fetch("/redirect-to?url=/get&status_code=307", method: "POST")
            #expect(permanent.status == 307)
            #expect(permanent.header("Location") == "/get")
            let outOfRange = try await harness.fetch("/redirect-to?url=/get&status_code=200")
            #expect(outOfRange.status == 302)
            #expect(try await harness.fetch("/redirect-to").status == 400)
            #expect(try await harness.fetch("/redirect-to?url=/a%0D%0AX-Evil:%201").status == 400)
        }
    }

    @Test("/links pages link to each other")
    func links() async throws {
        try await withHarness { harness in
            let redirect = try await harness.fetch("/links/3")
            #expect(redirect.status == 302)
            #expect(redirect.header("Location") == "/links/3/0")
            let page = try await harness.fetch("/links/3/1")
            #expect(
                page.text
                    == "<html><head><title>Links</title></head><body><a href='/links/3/0'>0</a> 1 "
                    + "<a href='/links/3/2'>2</a> </body></html>"
            )
        }
    }
}
