import Testing

@testable import Kite

@Suite struct DigestAuthorizationTests {
    // RFC 7616 §3.9.1.
    static let rfcNonce = "7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v"
    static let rfcOpaque = "FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS"
    static let rfcCnonce = "f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ"

    /// The Digest answerer of the first challenge of `header`, through the parser.
    private func digest(_ header: String) throws -> DigestAuthorization {
        let challenge = try #require(AuthenticationChallenge.parse([header]).first)
        return try #require(DigestAuthorization(challenge: challenge))
    }

    /// The RFC 7616 §3.9.1 challenge.
    private func rfc7616(algorithm: String, qop: String = "auth, auth-int") throws -> DigestAuthorization {
        try self.digest(
            #"Digest realm="http-auth@example.org", qop="\#(qop)", algorithm=\#(algorithm), "#
                + #"nonce="\#(Self.rfcNonce)", opaque="\#(Self.rfcOpaque)""#
        )
    }

    private func answerMufasa(
        _ digest: inout DigestAuthorization,
        method: String = "GET",
        body: [UInt8] = []
    ) -> String {
        digest.authorization(
            username: "Mufasa",
            password: "Circle of Life",
            method: method,
            uri: "/dir/index.html",
            body: body,
            cnonce: Self.rfcCnonce
        )
    }

    @Test(arguments: [
        ("MD5", "8ca523f5e9506fed4657c9700eebdbec"),
        ("SHA-256", "753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1"),
    ])
    func answersTheRFC7616WorkedExample(algorithm: String, response: String) throws {
        var digest = try self.rfc7616(algorithm: algorithm)
        #expect(digest.qop == .auth)
        let value = self.answerMufasa(&digest)
        #expect(
            value
                == #"Digest username="Mufasa", realm="http-auth@example.org", nonce="\#(Self.rfcNonce)", "#
                + #"uri="/dir/index.html", algorithm=\#(algorithm), qop=auth, nc=00000001, "#
                + #"cnonce="\#(Self.rfcCnonce)", response="\#(response)", opaque="\#(Self.rfcOpaque)""#
        )
    }

    @Test func answersTheRFC2617ExampleWithoutAlgorithm() throws {
        let header =
            #"Digest realm="testrealm@host.com", qop="auth,auth-int", "#
            + #"nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", opaque="5ccc069c403ebaf9f0171e9517f40e41""#
        var digest = try self.digest(header)
        #expect(digest.algorithm == DigestAuthorization.Algorithm("MD5"))
        let value = digest.authorization(
            username: "Mufasa",
            password: "Circle Of Life",
            method: "GET",
            uri: "/dir/index.html",
            body: [],
            cnonce: "0a4f113b"
        )
        #expect(
            value
                == #"Digest username="Mufasa", realm="testrealm@host.com", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", "#
                + #"uri="/dir/index.html", qop=auth, nc=00000001, cnonce="0a4f113b", "#
                + #"response="6629fae49393a05397450978507c4ef1", opaque="5ccc069c403ebaf9f0171e9517f40e41""#
        )
    }

    @Test func eachAnswerCountsOneMoreUseOfTheNonce() throws {
        var digest = try self.rfc7616(algorithm: "MD5")
        _ = self.answerMufasa(&digest)
        let second = self.answerMufasa(&digest)
        #expect(digest.nonceCount == 2)
        #expect(second.contains("qop=auth, nc=00000002, "))
        #expect(second.contains(#"response="4b5d595ecf2db9df612ea5b45cd97101""#))
    }

    @Test(arguments: [(1, "00000001"), (255, "000000ff"), (0x1234_ABCD, "1234abcd"), (UInt32.max, "ffffffff")])
    func nonceCountIsEightLowercaseHexDigits(count: UInt32, text: String) {
        #expect(DigestAuthorization.eightHexDigits(count) == text)
    }

    @Test(arguments: [
        ("MD5-sess", "e783283f46242139c486a698fec7211d"),
        (
            "sha-512-SESS",
            "5bc820f8c0e5cf83d5ff0a673af99c13a028be576c765c41f23d4fb46722a44750a331317b0b8646d55243e0c06cbacf64cc061404459769fbedddb0ecfacc5f"
        ),
    ])
    func sessionAlgorithmsHashTheNonceAndCnonceIntoHA1(algorithm: String, response: String) throws {
        var digest = try self.rfc7616(algorithm: algorithm)
        #expect(digest.algorithm.isSession)
        let value = self.answerMufasa(&digest)
        #expect(value.contains(#"algorithm=\#(algorithm), qop=auth, "#), "the challenge's spelling is echoed")
        #expect(value.contains(#"response="\#(response)""#))
    }

    @Test func authIntHashesTheBody() throws {
        var digest = try self.rfc7616(algorithm: "SHA-256", qop: "auth-int")
        #expect(digest.qop == .authInt)
        let value = self.answerMufasa(&digest, method: "POST", body: Array("hello".utf8))
        #expect(value.contains("qop=auth-int, nc=00000001, "))
        #expect(value.contains(#"response="c98b95dbdb463c4483e324bced57d591946a6f84098142757b1333c52c47d62e""#))

        var empty = try self.rfc7616(algorithm: "MD5", qop: "auth-int")
        let emptyValue = self.answerMufasa(&empty, method: "POST")
        #expect(emptyValue.contains(#"response="35ec75c6389a8fd8412c13222b3affe8""#))
    }

    @Test(arguments: ["auth-int, auth", "auth,auth-int", " AUTH ", "auth-conf, auth"])
    func authIsPreferredWhenOffered(qop: String) throws {
        #expect(try self.rfc7616(algorithm: "MD5", qop: qop).qop == .auth)
    }

    @Test func withoutQopTheAnswerHasTheRFC2069Form() throws {
        let header =
            #"Digest realm="testrealm@host.com", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", "#
            + #"opaque="5ccc069c403ebaf9f0171e9517f40e41""#
        var digest = try self.digest(header)
        #expect(digest.qop == nil)
        let value = digest.authorization(
            username: "Mufasa",
            password: "Circle Of Life",
            method: "GET",
            uri: "/dir/index.html",
            body: [],
            cnonce: "0a4f113b"
        )
        #expect(
            value
                == #"Digest username="Mufasa", realm="testrealm@host.com", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", "#
                + #"uri="/dir/index.html", response="670fd8c2df070c60b045671b8b24ff02", "#
                + #"opaque="5ccc069c403ebaf9f0171e9517f40e41""#
        )
    }

    @Test func withoutQopASessionAlgorithmStillSendsItsCnonce() throws {
        let header =
            #"Digest realm="testrealm@host.com", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", algorithm=MD5-sess"#
        var digest = try self.digest(header)
        let value = digest.authorization(
            username: "Mufasa",
            password: "Circle Of Life",
            method: "GET",
            uri: "/dir/index.html",
            body: [],
            cnonce: "0a4f113b"
        )
        #expect(
            value
                == #"Digest username="Mufasa", realm="testrealm@host.com", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", "#
                + #"uri="/dir/index.html", algorithm=MD5-sess, cnonce="0a4f113b", "#
                + #"response="4726bc10c33fa6cb357eb27807b1cce8""#
        )
    }

    @Test func opaqueIsEchoedAndLeftOutWhenAbsent() throws {
        var withOpaque = try self.rfc7616(algorithm: "MD5")
        #expect(withOpaque.opaque == Self.rfcOpaque)
        let echoed = self.answerMufasa(&withOpaque)
        #expect(echoed.hasSuffix(#", opaque="\#(Self.rfcOpaque)""#))

        let challenge = AuthenticationChallenge(
            scheme: "digest",
            parameters: ["realm": "r", "nonce": "n", "qop": "auth"]
        )
        var without = try #require(DigestAuthorization(challenge: challenge))
        let value = self.answerMufasa(&without)
        #expect(
            value
                == #"Digest username="Mufasa", realm="r", nonce="n", uri="/dir/index.html", qop=auth, nc=00000001, "#
                + #"cnonce="\#(Self.rfcCnonce)", response="a383fe315f2d1ddbbdf807ae586e80ac""#
        )
    }

    @Test func quotedValuesEscapeQuotesAndBackslashes() throws {
        var digest = try self.rfc7616(algorithm: "MD5")
        let value = digest.authorization(
            username: #"a"b\c"#,
            password: "pw",
            method: "GET",
            uri: "/",
            body: [],
            cnonce: Self.rfcCnonce
        )
        #expect(value.hasPrefix(#"Digest username="a\"b\\c", realm="http-auth@example.org", "#))
        // The hash is over the user name itself, not its escaped form.
        #expect(value.contains(#"response="d80951a904816df5399f4d7bf315a30a""#))
        // And the parser reads the escaped form back to the user name.
        let fields = try #require(AuthenticationChallenge.parse([value]).first)
        #expect(fields.parameters["username"] == #"a"b\c"#)
    }

    @Test func aMissingCnonceIsSixteenRandomBytesInHex() throws {
        var digest = try self.rfc7616(algorithm: "MD5")
        var cnonces: [String] = []
        for _ in 0..<2 {
            let value = digest.authorization(username: "u", password: "p", method: "GET", uri: "/", body: [])
            let parsed = try #require(AuthenticationChallenge.parse([value]).first)
            let cnonce = try #require(parsed.parameters["cnonce"])
            #expect(cnonce.count == 32)
            #expect(cnonce.allSatisfy { "0123456789abcdef".contains($0) })
            cnonces.append(cnonce)
        }
        #expect(cnonces[0] != cnonces[1])
    }

    @Test(arguments: [
        #"Digest realm="r", nonce="n", algorithm=SHA-512-256"#,
        #"Digest realm="r", nonce="n", algorithm=SHA-1"#,
        #"Digest realm="r", nonce="n", algorithm=MD5-sess-sess"#,
        #"Digest realm="r", nonce="n", algorithm="""#,
        #"Digest realm="r", nonce="n", qop="auth-conf""#,
        #"Digest realm="r""#,
        #"Digest nonce="n""#,
        #"Basic realm="r", nonce="n""#,
        #"Bearer abc=="#,
    ])
    func unanswerableChallengesAreRefused(header: String) throws {
        let challenge = try #require(AuthenticationChallenge.parse([header]).first)
        #expect(DigestAuthorization(challenge: challenge) == nil)
    }

    @Test(arguments: ["md5", "Md5-Sess", "sha-256", "SHA-256-SESS", "SHA-512", "sha-512-sess"])
    func algorithmNamesIgnoreCase(name: String) throws {
        let challenge = AuthenticationChallenge(
            scheme: "digest",
            parameters: ["realm": "r", "nonce": "n", "algorithm": name]
        )
        #expect(DigestAuthorization(challenge: challenge) != nil)
    }

    @Test(arguments: [
        ("stale=TRUE", true), ("stale=true", true), (#"stale="True""#, true), ("stale=FALSE", false),
        ("stale=yes", false), ("x=1", false),
    ])
    func staleIsReadCaseInsensitively(parameter: String, stale: Bool) throws {
        let header = #"Digest realm="r", nonce="n", qop="auth", \#(parameter)"#
        let challenge = try #require(AuthenticationChallenge.parse([header]).first)
        let digest = try #require(DigestAuthorization(challenge: challenge))
        #expect(digest.isStale == stale)
        #expect(digest.realm == "r")
        #expect(digest.nonce == "n")
    }

    // MARK: Against the test server's /digest-auth

    /// Asks for `path`, answers its Digest challenge, and returns both statuses and the challenge.
    private func exchange(
        _ path: String,
        password: String = "passwd"
    ) async throws -> (first: Int, second: Int?, challenge: DigestAuthorization) {
        let url = try await SharedTestServer.shared.baseURL() + path
        let first = try #require(await Session.suite.request(url).serializingData().response.response)
        let challenges = AuthenticationChallenge.parse(first.headerFields[values: .wwwAuthenticate])
        var digest = try #require(
            challenges.first { $0.scheme == "digest" }.flatMap(DigestAuthorization.init(challenge:))
        )
        let authorization = digest.authorization(
            username: "user",
            password: password,
            method: "GET",
            uri: path,
            body: []
        )
        let second = await Session.suite.request(url, headers: [.authorization: authorization])
            .serializingData().response
        return (first.status.code, second.response?.status.code, digest)
    }

    @Test(arguments: [
        ("auth", "MD5"), ("auth", "SHA-256"), ("auth-int", "SHA-512-sess"), ("none", "MD5-sess"), ("none", "SHA-256"),
    ])
    func theTestServerAcceptsTheAnswer(qop: String, algorithm: String) async throws {
        let result = try await self.exchange("/digest-auth/\(qop)/user/passwd/\(algorithm)")
        #expect(result.first == 401)
        #expect(result.second == 200)
        #expect(!result.challenge.isStale)
        #expect(result.challenge.realm == "me@kennethreitz.com")
    }

    @Test func theTestServerRefusesAWrongPassword() async throws {
        let result = try await self.exchange("/digest-auth/auth/user/passwd/SHA-256", password: "other")
        #expect(result.first == 401)
        #expect(result.second == 401)
    }

    @Test func aStaleNonceIsReportedAndTheNewOneAccepted() async throws {
        let path = "/digest-auth/auth/user/passwd/MD5/0"
        let url = try await SharedTestServer.shared.baseURL() + path
        var headers = HTTPFields()
        var statuses: [Int] = []
        var stale: [Bool] = []
        for _ in 0..<3 {
            let head = try #require(
                await Session.suite.request(url, headers: headers).serializingData().response.response
            )
            statuses.append(head.status.code)
            let challenges = AuthenticationChallenge.parse(head.headerFields[values: .wwwAuthenticate])
            guard var digest = challenges.first.flatMap(DigestAuthorization.init(challenge:)) else { break }
            stale.append(digest.isStale)
            let value = digest.authorization(username: "user", password: "passwd", method: "GET", uri: path, body: [])
            headers[.authorization] = value
        }
        #expect(statuses == [401, 401, 200])
        #expect(stale == [false, true])
    }
}

@Suite struct CredentialTests {
    @Test(arguments: [
        // RFC 7617 §2 and §2.1.
        ("Aladdin", "open sesame", "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ=="),
        ("test", "123\u{A3}", "Basic dGVzdDoxMjPCow=="),
        ("", "", "Basic Og=="),
    ])
    func basicAuthorizationIsBase64OfUTF8UserColonPassword(user: String, password: String, value: String) {
        #expect(Credential(user: user, password: password).basicAuthorization() == value)
    }

    @Test func descriptionsNeverShowThePassword() {
        let credential = Credential(user: #"a"b"#, password: "hunter2")
        #expect(credential.description == #"Credential(user: "a\"b", password: ***)"#)
        #expect(String(reflecting: credential) == credential.description)
        #expect("\(credential)" == credential.description)
        var dumped = ""
        dump(credential, to: &dumped)
        #expect(!dumped.contains("hunter2"))
        #expect(dumped.contains(#"a\"b"#))
    }
}
