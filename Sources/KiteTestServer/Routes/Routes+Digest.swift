import Crypto
import Foundation
import Hummingbird

/// httpbin's Digest authentication (RFC 7616): `/digest-auth/{qop}/{user}/{passwd}`,
/// `/digest-auth/{qop}/{user}/{passwd}/{algorithm}` and `…/{algorithm}/{stale_after}`.
///
/// `qop` is `auth`, `auth-int` or anything else for none; `algorithm` is `MD5` (default),
/// `SHA-256`, `SHA-512`, or one of them with `-sess`. Any nonce this server issued is accepted
/// (httpbin does not track them either). With `stale_after` `0` the first nonce handed out is
/// stale: a correct answer to it gets a new challenge with `stale=TRUE` (Kite-specific; httpbin
/// tracks staleness with cookies).
extension Router<HTTPBinRequestContext> {
    func addDigestRoutes() {
        let handler: Handler = { request, context in
            let qop = try context.text("qop")
            let user = try context.text("user")
            let password = try context.text("passwd")
            let algorithm = context.parameters["algorithm"].map(String.init) ?? "MD5"
            let staleFirst = context.parameters["stale_after"] == "0"
            guard DigestAlgorithm(algorithm) != nil else {
                throw HTTPBinError(.badRequest, "unsupported algorithm \(algorithm)")
            }
            let challenge = DigestChallenge(qop: qop, algorithm: algorithm)
            guard let authorization = request.headers[.authorization],
                let fields = DigestChallenge.parameters(of: authorization)
            else {
                return challenge.response(stale: false, nonce: staleFirst ? "stale-" : "")
            }
            let body = try await request.body.collect(upTo: 1 << 20)
            guard
                challenge.verifies(
                    fields,
                    user: user,
                    password: password,
                    method: request.method.rawValue,
                    body: Array(buffer: body)
                )
            else {
                return challenge.response(stale: false, nonce: "")
            }
            if fields["nonce"]?.hasPrefix("stale-") == true {
                return challenge.response(stale: true, nonce: "")
            }
            return .json(["authenticated": true, "user": .string(user)])
        }
        for path in [
            "/digest-auth/:qop/:user/:passwd", "/digest-auth/:qop/:user/:passwd/:algorithm",
            "/digest-auth/:qop/:user/:passwd/:algorithm/:stale_after",
        ] {
            self.route(RouterPath(path), methods: Self.anyMethod, use: handler)
        }
    }
}

/// A hash function of Digest authentication, and whether it is a `-sess` variant.
struct DigestAlgorithm {
    let hash: @Sendable ([UInt8]) -> String
    let session: Bool

    init?(_ name: String) {
        var base = name.uppercased()
        self.session = base.hasSuffix("-SESS")
        if self.session { base.removeLast(5) }
        switch base {
        case "MD5": self.hash = { Self.hex(Insecure.MD5.hash(data: $0)) }
        case "SHA-256": self.hash = { Self.hex(SHA256.hash(data: $0)) }
        case "SHA-512": self.hash = { Self.hex(SHA512.hash(data: $0)) }
        default: return nil
        }
    }

    func callAsFunction(_ text: String) -> String { self.hash(Array(text.utf8)) }

    static func hex(_ digest: some Sequence<UInt8>) -> String {
        digest.map { String(format: "%02x", $0) }.joined()
    }
}

/// The server's side of one Digest exchange.
struct DigestChallenge {
    static let realm = "me@kennethreitz.com"
    let qop: String
    let algorithm: String

    var usesQop: Bool { self.qop == "auth" || self.qop == "auth-int" }

    /// A 401 with a fresh challenge; `nonce` prefixes the random nonce.
    func response(stale: Bool, nonce prefix: String) -> Response {
        let nonce = prefix + DigestAlgorithm.hex((0..<16).map { _ in UInt8.random(in: 0...255) })
        let opaque = DigestAlgorithm.hex((0..<16).map { _ in UInt8.random(in: 0...255) })
        var value = "Digest realm=\"\(Self.realm)\", nonce=\"\(nonce)\""
        if self.usesQop { value += ", qop=\"\(self.qop)\"" }
        value += ", opaque=\"\(opaque)\", algorithm=\(self.algorithm), stale=\(stale ? "TRUE" : "FALSE")"
        return .text("", status: .unauthorized, headers: [.wwwAuthenticate: value])
    }

    /// Whether the Authorization fields answer this challenge for `user` and `password`.
    func verifies(_ fields: [String: String], user: String, password: String, method: String, body: [UInt8]) -> Bool {
        guard let hash = DigestAlgorithm(self.algorithm), fields["username"] == user,
            fields["realm"] == Self.realm, let nonce = fields["nonce"], let uri = fields["uri"],
            let answer = fields["response"]
        else { return false }
        var ha1 = hash("\(user):\(Self.realm):\(password)")
        if hash.session {
            ha1 = hash("\(ha1):\(nonce):\(fields["cnonce"] ?? "")")
        }
        let ha2 = self.qop == "auth-int" ? hash("\(method):\(uri):\(hash.hash(body))") : hash("\(method):\(uri)")
        let expected: String
        if self.usesQop {
            guard fields["qop"] == self.qop, let nc = fields["nc"], let cnonce = fields["cnonce"] else { return false }
            expected = hash("\(ha1):\(nonce):\(nc):\(cnonce):\(self.qop):\(ha2)")
        } else {
            expected = hash("\(ha1):\(nonce):\(ha2)")
        }
        return expected == answer.lowercased()
    }

    /// The `name=value` pairs of a `Digest` Authorization header (values quoted or not).
    static func parameters(of header: String) -> [String: String]? {
        guard header.lowercased().hasPrefix("digest ") else { return nil }
        var fields: [String: String] = [:]
        var rest = Substring(header.dropFirst(7))
        while !rest.isEmpty {
            rest = rest.drop { $0 == " " || $0 == "," }
            guard let equals = rest.firstIndex(of: "=") else { break }
            let name = rest[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            rest = rest[rest.index(after: equals)...]
            var value = ""
            if rest.first == "\"" {
                rest = rest.dropFirst()
                while let character = rest.first, character != "\"" {
                    if character == "\\" { rest = rest.dropFirst() }
                    if let next = rest.first { value.append(next) }
                    rest = rest.dropFirst()
                }
                rest = rest.dropFirst()
            } else {
                let end = rest.firstIndex(of: ",") ?? rest.endIndex
                value = rest[..<end].trimmingCharacters(in: .whitespaces)
                rest = rest[end...]
            }
            fields[name] = value
        }
        return fields
    }
}
