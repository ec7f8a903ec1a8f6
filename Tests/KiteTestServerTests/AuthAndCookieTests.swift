import AsyncHTTPClient
import Foundation
import Testing

@Suite("Authentication and cookies")
struct AuthAndCookieTests {
    private func basic(_ user: String, _ password: String) -> (String, String) {
        ("Authorization", "Basic " + Data("\(user):\(password)".utf8).base64EncodedString())
    }

    @Test("/basic-auth accepts the right credentials")
    func basicAuth() async throws {
        try await withHarness { harness in
            let ok = try await harness.fetch("/basic-auth/kite/p%40ss", headers: [basic("kite", "p@ss")])
            #expect(ok.status == 200)
            #expect(try ok.json() == ["authenticated": true, "user": "kite"])

            let wrong = try await harness.fetch("/basic-auth/kite/secret", headers: [basic("kite", "nope")])
            #expect(wrong.status == 401)
            #expect(wrong.header("WWW-Authenticate") == #"Basic realm="Fake Realm""#)
            #expect(wrong.body.isEmpty)

            let missing = try await harness.fetch("/basic-auth/kite/secret")
            #expect(missing.status == 401)
            let colonInPassword = try await harness.fetch("/basic-auth/u/a:b", headers: [basic("u", "a:b")])
            #expect(colonInPassword.status == 200)

            let hidden = try await harness.fetch("/hidden-basic-auth/kite/secret")
            #expect(hidden.status == 404)
            let hiddenOK = try await harness.fetch("/hidden-basic-auth/kite/secret", headers: [basic("kite", "secret")])
            #expect(try hiddenOK.json() == ["authenticated": true, "user": "kite"])
        }
    }

    @Test("/bearer needs a Bearer token")
    func bearer() async throws {
        try await withHarness { harness in
            let ok = try await harness.fetch("/bearer", headers: [("Authorization", "Bearer abc.def")])
            #expect(ok.status == 200)
            #expect(try ok.json() == ["authenticated": true, "token": "abc.def"])
            for headers in [[], [("Authorization", "Basic abc")]] {
                let denied = try await harness.fetch("/bearer", headers: headers)
                #expect(denied.status == 401)
                #expect(denied.header("WWW-Authenticate") == "Bearer")
            }
        }
    }

    @Test("/cookies lists the Cookie header")
    func cookies() async throws {
        try await withHarness { harness in
            let json = try await harness.fetch("/cookies", headers: [("Cookie", #"a=1; b="x y"; c="#)]).json()
            #expect(json == ["cookies": ["a": "1", "b": "x y", "c": ""]])
            #expect(try await harness.fetch("/cookies").json() == ["cookies": [:]])
        }
    }

    @Test("/cookies/set sets each pair and redirects to /cookies")
    func setCookies() async throws {
        try await withHarness { harness in
            let response = try await harness.fetch("/cookies/set?flavor=choc&size=big&flavor=ignored")
            #expect(response.status == 302)
            #expect(response.header("Location") == "/cookies")
            #expect(response.headers("Set-Cookie") == ["flavor=choc; Path=/", "size=big; Path=/"])
            let quoted = try await harness.fetch("/cookies/set?q=a%20b%3Bc")
            #expect(quoted.headers("Set-Cookie") == [#"q="a b\073c"; Path=/"#])
            let path = try await harness.fetch("/cookies/set/name/value")
            #expect(path.headers("Set-Cookie") == ["name=value; Path=/"])
        }
    }

    @Test("/cookies/delete expires the cookies")
    func deleteCookies() async throws {
        try await withHarness { harness in
            let response = try await harness.fetch("/cookies/delete?flavor&size")
            #expect(response.status == 302)
            #expect(response.header("Location") == "/cookies")
            #expect(
                response.headers("Set-Cookie") == [
                    "flavor=; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=0; Path=/",
                    "size=; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=0; Path=/",
                ]
            )
        }
    }
}
