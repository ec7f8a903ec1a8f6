import Testing

@testable import Kite

@Suite struct AuthenticationChallengeTests {
    private func challenge(
        _ scheme: String,
        _ parameters: [String: String] = [:],
        token68: String? = nil
    ) -> AuthenticationChallenge {
        AuthenticationChallenge(scheme: scheme, parameters: parameters, token68: token68)
    }

    @Test func readsHttpbinsDigestChallenge() {
        let header =
            #"Digest realm="me@kennethreitz.com", nonce="3c3b8b5b7e1f0a2d4c6e8f0a1b2c3d4e", "#
            + #"qop="auth, auth-int", opaque="0a1b2c3d4e5f60718293a4b5c6d7e8f9", algorithm=MD5, stale=FALSE"#
        #expect(
            AuthenticationChallenge.parse([header]) == [
                self.challenge(
                    "digest",
                    [
                        "realm": "me@kennethreitz.com", "nonce": "3c3b8b5b7e1f0a2d4c6e8f0a1b2c3d4e",
                        "qop": "auth, auth-int", "opaque": "0a1b2c3d4e5f60718293a4b5c6d7e8f9", "algorithm": "MD5",
                        "stale": "FALSE",
                    ]
                )
            ]
        )
    }

    @Test func readsSeveralChallengesInOneField() {
        #expect(
            AuthenticationChallenge.parse([#"Basic realm="a", Digest realm="b", nonce="n""#]) == [
                self.challenge("basic", ["realm": "a"]),
                self.challenge("digest", ["realm": "b", "nonce": "n"]),
            ]
        )
    }

    @Test func readsRFC9110sExample() {
        // RFC 9110 §11.6.1, with its "title" unescaped.
        let header = #"Newauth realm="apps", type=1, title="Login to \"apps\"", Basic realm="simple""#
        #expect(
            AuthenticationChallenge.parse([header]) == [
                self.challenge("newauth", ["realm": "apps", "type": "1", "title": #"Login to "apps""#]),
                self.challenge("basic", ["realm": "simple"]),
            ]
        )
    }

    @Test func readsChallengesAcrossFieldValuesInOrder() {
        #expect(
            AuthenticationChallenge.parse([#"Bearer realm="api""#, "Negotiate", #"Basic realm="x""#]) == [
                self.challenge("bearer", ["realm": "api"]),
                self.challenge("negotiate"),
                self.challenge("basic", ["realm": "x"]),
            ]
        )
    }

    @Test(arguments: [
        ("Bearer abc==", "bearer", "abc=="),
        ("Bearer  a-b.c_d~e+f/g=  ", "bearer", "a-b.c_d~e+f/g="),
        ("Negotiate YIIB9wYGKwYBBQUCoIIB6zCCAeegMDAu", "negotiate", "YIIB9wYGKwYBBQUCoIIB6zCCAeegMDAu"),
    ])
    func readsToken68(header: String, scheme: String, token68: String) {
        #expect(AuthenticationChallenge.parse([header]) == [self.challenge(scheme, token68: token68)])
    }

    @Test func token68IsFollowedByTheNextChallenge() {
        #expect(
            AuthenticationChallenge.parse([#"Negotiate abc=, Basic realm="r""#]) == [
                self.challenge("negotiate", token68: "abc="),
                self.challenge("basic", ["realm": "r"]),
            ]
        )
    }

    @Test func schemesAndNamesAreLowercasedButValuesAreNot() {
        #expect(
            AuthenticationChallenge.parse([#"DIGEST REALM="Mixed Case", Algorithm=SHA-256"#]) == [
                self.challenge("digest", ["realm": "Mixed Case", "algorithm": "SHA-256"])
            ]
        )
    }

    @Test func quotedStringsUndoEscapesAndKeepCommasAndSpaces() {
        let header = #"Digest realm="a \"b\" \\ c, d=e", nonce="x\yz""#
        #expect(
            AuthenticationChallenge.parse([header]) == [
                self.challenge("digest", ["realm": #"a "b" \ c, d=e"#, "nonce": "xyz"])
            ]
        )
    }

    @Test func optionalWhitespaceAndEmptyElementsAreAllowed() {
        let header = "  ,, Basic \t realm = \"r\" ,  , charset=UTF-8 ,,Digest realm=x,nonce=\"\" ,"
        #expect(
            AuthenticationChallenge.parse([header]) == [
                self.challenge("basic", ["realm": "r", "charset": "UTF-8"]),
                self.challenge("digest", ["realm": "x", "nonce": ""]),
            ]
        )
    }

    @Test func aRepeatedParameterKeepsItsFirstValue() {
        #expect(
            AuthenticationChallenge.parse([#"Basic realm="first", REALM="second""#]) == [
                self.challenge("basic", ["realm": "first"])
            ]
        )
    }

    @Test func nonASCIIQuotedTextIsUTF8() {
        #expect(
            AuthenticationChallenge.parse([#"Basic realm="Zürich \#u{1F510}""#]) == [
                self.challenge("basic", ["realm": "Zürich \u{1F510}"])
            ]
        )
    }

    @Test(
        arguments: [
            ("", []),
            (",", []),
            (" , ,, ", []),
            ("=", []),
            ("==", []),
            (#"="x""#, []),
            (#"realm="r""#, []),
            ("\"", []),
            ("\\", []),
            ("\u{0}", []),
            (#"Basic realm="unterminated"#, [AuthenticationChallenge(scheme: "basic")]),
            (
                #"Digest realm="r", nonce="unterminated, qop="auth""#,
                [AuthenticationChallenge(scheme: "digest", parameters: ["realm": "r"])]
            ),
            (
                #"Basic realm="a", "oops", Digest realm="b""#,
                [
                    AuthenticationChallenge(scheme: "basic", parameters: ["realm": "a"]),
                    AuthenticationChallenge(scheme: "digest", parameters: ["realm": "b"]),
                ]
            ),
            (
                #"Basic realm="a" junk, nonce=n"#,
                [AuthenticationChallenge(scheme: "basic", parameters: ["nonce": "n"])]
            ),
            (#"Basic realm=, x=1"#, [AuthenticationChallenge(scheme: "basic", token68: "realm=")]),
            (#"Basic"x", Bearer t"#, [.init(scheme: "basic"), .init(scheme: "bearer", token68: "t")]),
            (#"Basic realm="a\"#, [AuthenticationChallenge(scheme: "basic")]),
            ("Basic realm=\"a\u{1}b\", Bearer t", [.init(scheme: "basic"), .init(scheme: "bearer", token68: "t")]),
            ("Basic realm=\"a\u{7F}\"", [AuthenticationChallenge(scheme: "basic")]),
            (#"Bearer abc==, error="invalid""#, [AuthenticationChallenge(scheme: "bearer", token68: "abc==")]),
            ("Basic a b c", [AuthenticationChallenge(scheme: "basic")]),
            ("Basic @@@, Digest", [.init(scheme: "basic"), .init(scheme: "digest")]),
        ] as [(String, [AuthenticationChallenge])]
    )
    func malformedInputYieldsWhatCanBeRead(header: String, expected: [AuthenticationChallenge]) {
        #expect(AuthenticationChallenge.parse([header]) == expected)
    }

    @Test func anyBytesEndWithoutATrap() {
        // Every string of up to four bytes over the characters that steer the parser.
        let alphabet: [UInt8] = Array(#"a="\, tB/"#.utf8) + [0x09, 0x00, 0xFF]
        var inputs: [[UInt8]] = [[]]
        var layer: [[UInt8]] = [[]]
        for _ in 0..<4 {
            layer = layer.flatMap { prefix in alphabet.map { prefix + [$0] } }
            inputs += layer
        }
        var challenges = 0
        for input in inputs {
            let parsed = AuthenticationChallenge.parse([String(decoding: input, as: UTF8.self)])
            challenges += parsed.count
            #expect(parsed.count <= input.count)
        }
        #expect(challenges > 0)
    }
}
