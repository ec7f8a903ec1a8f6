import Crypto
import Foundation
import Testing

/// The Digest authentication routes (httpbin's shapes) and the Kite-only retry helpers.
@Suite("Digest authentication and retry helpers")
struct RetryAndDigestTests {
    /// The challenge's parameters, as a client reads them.
    static func challenge(_ header: String?) throws -> [String: String] {
        let header = try #require(header)
        #expect(header.hasPrefix("Digest "))
        var fields: [String: String] = [:]
        for part in header.dropFirst(7).split(separator: ",") {
            let pair = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2 else { continue }
            fields[pair[0]] = pair[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        }
        return fields
    }

    static func hex(_ digest: some Sequence<UInt8>) -> String { digest.map { String(format: "%02x", $0) }.joined() }

    static func hash(_ algorithm: String, _ text: String) -> String {
        algorithm.hasPrefix("SHA-256")
            ? Self.hex(SHA256.hash(data: Array(text.utf8))) : Self.hex(Insecure.MD5.hash(data: Array(text.utf8)))
    }

    /// An Authorization header answering `challenge` (RFC 7616 §3.4.1, qop=auth).
    static func answer(_ challenge: [String: String], user: String, password: String, uri: String) -> String {
        let algorithm = challenge["algorithm"] ?? "MD5"
        let realm = challenge["realm"] ?? ""
        let nonce = challenge["nonce"] ?? ""
        let cnonce = "0a4f113b"
        var ha1 = Self.hash(algorithm, "\(user):\(realm):\(password)")
        if algorithm.hasSuffix("-sess") { ha1 = Self.hash(algorithm, "\(ha1):\(nonce):\(cnonce)") }
        let ha2 = Self.hash(algorithm, "GET:\(uri)")
        let response = Self.hash(algorithm, "\(ha1):\(nonce):00000001:\(cnonce):auth:\(ha2)")
        return """
            Digest username="\(user)", realm="\(realm)", nonce="\(nonce)", uri="\(uri)", algorithm=\(algorithm), \
            qop=auth, nc=00000001, cnonce="\(cnonce)", response="\(response)", opaque="\(challenge["opaque"] ?? "")"
            """
    }

    @Test("/digest-auth accepts a correct answer", arguments: ["MD5", "SHA-256", "MD5-sess", "SHA-256-sess"])
    func digest(algorithm: String) async throws {
        try await withHarness { harness in
            let path = "/digest-auth/auth/kite/secret/\(algorithm)"
            let first = try await harness.fetch(path)
            #expect(first.status == 401)
            let challenge = try Self.challenge(first.header("WWW-Authenticate"))
            #expect(challenge["qop"] == "auth")
            #expect(challenge["algorithm"] == algorithm)
            #expect(challenge["stale"] == "FALSE")

            let ok = try await harness.fetch(
                path,
                headers: [("Authorization", Self.answer(challenge, user: "kite", password: "secret", uri: path))]
            )
            #expect(ok.status == 200)
            #expect(try ok.json() == ["authenticated": true, "user": "kite"])

            let wrong = try await harness.fetch(
                path,
                headers: [("Authorization", Self.answer(challenge, user: "kite", password: "nope", uri: path))]
            )
            #expect(wrong.status == 401)
        }
    }

    @Test("/digest-auth with stale_after 0 answers the first nonce with stale=TRUE")
    func staleNonce() async throws {
        try await withHarness { harness in
            let path = "/digest-auth/auth/kite/secret/MD5/0"
            let first = try Self.challenge(try await harness.fetch(path).header("WWW-Authenticate"))
            let stale = try await harness.fetch(
                path,
                headers: [("Authorization", Self.answer(first, user: "kite", password: "secret", uri: path))]
            )
            #expect(stale.status == 401)
            let second = try Self.challenge(stale.header("WWW-Authenticate"))
            #expect(second["stale"] == "TRUE")
            #expect(second["nonce"] != first["nonce"])
            let ok = try await harness.fetch(
                path,
                headers: [("Authorization", Self.answer(second, user: "kite", password: "secret", uri: path))]
            )
            #expect(ok.status == 200)
        }
    }

    @Test("/flaky fails the first requests per key, then succeeds")
    func flaky() async throws {
        try await withHarness { harness in
            let key = UUID().uuidString
            let statuses = try await [1, 2, 3].asyncMap { _ in
                try await harness.fetch("/flaky/\(key)?failures=2&status=502").status
            }
            #expect(statuses == [502, 502, 200])
            let other = try await harness.fetch("/flaky/\(UUID().uuidString)?failures=0")
            #expect(try other.json()["attempt"] == 1)
        }
    }

    @Test("/retry-after sends delta-seconds or an HTTP-date")
    func retryAfter() async throws {
        try await withHarness { harness in
            let delta = try await harness.fetch("/retry-after/3")
            #expect(delta.status == 503)
            #expect(delta.header("Retry-After") == "3")
            let date = try await harness.fetch("/retry-after/120?form=date&status=429")
            #expect(date.status == 429)
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
            let header = try #require(date.header("Retry-After"))
            let when = try #require(formatter.date(from: header))
            #expect(abs(when.timeIntervalSinceNow - 120) < 5)
        }
    }
}

extension Array {
    /// Maps in order, one element at a time.
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var result: [T] = []
        for element in self { result.append(try await transform(element)) }
        return result
    }
}
