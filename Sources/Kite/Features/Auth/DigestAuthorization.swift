import Crypto
import Foundation

/// The client side of HTTP Digest authentication (RFC 7616) for one challenge.
///
/// Made from a `digest` challenge; each call of ``authorization(username:password:method:uri:body:cnonce:)``
/// answers it for one request, counting the uses of the nonce. Supports `MD5`, `SHA-256` and `SHA-512`
/// and their `-sess` variants, `qop` `auth` (preferred) and `auth-int`, and the RFC 2069 form when the
/// challenge has no `qop`.
///
/// ```swift
/// let challenge = AuthenticationChallenge.parse([wwwAuthenticate]).first { $0.scheme == "digest" }
/// if let challenge, var digest = DigestAuthorization(challenge: challenge) {
///     let value = digest.authorization(username: "u", password: "p", method: "GET", uri: "/x", body: [])
/// }
/// ```
struct DigestAuthorization: Sendable {
    /// The hash function a challenge names, and whether it is a `-sess` variant.
    struct Algorithm: Sendable, Equatable {
        enum Hash: Sendable, Equatable {
            case md5
            case sha256
            case sha512
        }

        var hash: Hash
        var isSession: Bool

        /// Reads `MD5`, `MD5-sess`, `SHA-256`, `SHA-256-sess`, `SHA-512` or `SHA-512-sess`, in any case.
        init?(_ name: String) {
            var base = name.lowercased()
            self.isSession = base.hasSuffix("-sess")
            if self.isSession {
                base.removeLast(5)
            }
            switch base {
            case "md5": self.hash = .md5
            case "sha-256": self.hash = .sha256
            case "sha-512": self.hash = .sha512
            default: return nil
            }
        }

        /// The lowercase hex digest of `bytes`.
        func callAsFunction(_ bytes: some Sequence<UInt8>) -> String {
            let data = Array(bytes)
            switch self.hash {
            case .md5: return Self.hex(Insecure.MD5.hash(data: data))
            case .sha256: return Self.hex(SHA256.hash(data: data))
            case .sha512: return Self.hex(SHA512.hash(data: data))
            }
        }

        func callAsFunction(_ text: String) -> String {
            self(text.utf8)
        }

        static func hex(_ bytes: some Sequence<UInt8>) -> String {
            let digits = Array("0123456789abcdef".utf8)
            var text: [UInt8] = []
            for byte in bytes {
                text.append(digits[Int(byte >> 4)])
                text.append(digits[Int(byte & 0x0F)])
            }
            return String(decoding: text, as: UTF8.self)
        }
    }

    /// The quality of protection a response uses.
    enum QualityOfProtection: String, Sendable {
        case auth
        case authInt = "auth-int"
    }

    /// The protection space.
    var realm: String
    /// The server's nonce.
    var nonce: String
    /// The challenge's `opaque`, sent back unchanged.
    var opaque: String?
    /// The hash function and whether HA1 is a session key.
    var algorithm: Algorithm
    /// The challenge's spelling of `algorithm`, echoed in the answer; `nil` when it had none (MD5).
    var algorithmName: String?
    /// The `qop` the answers use; `nil` for the RFC 2069 form (the challenge offered none).
    var qop: QualityOfProtection?
    /// Whether the server said the previous nonce was stale (`stale=true`): the credentials were right,
    /// so the request can be answered again with this new nonce without asking the user.
    var isStale: Bool
    /// How many answers used this nonce.
    private(set) var nonceCount: UInt32 = 0

    /// Reads a Digest challenge, or returns `nil` when it is not one this client can answer.
    ///
    /// `nil` unless the scheme is `digest`, `realm` and `nonce` are present, the algorithm (MD5 when
    /// missing) is supported, and the `qop` list, when present, offers `auth` or `auth-int`.
    ///
    /// - Parameter challenge: A parsed `WWW-Authenticate` challenge.
    init?(challenge: AuthenticationChallenge) {
        guard challenge.scheme == "digest", let realm = challenge.parameters["realm"],
            let nonce = challenge.parameters["nonce"]
        else { return nil }
        let algorithmName = challenge.parameters["algorithm"]
        guard let algorithm = Algorithm(algorithmName ?? "MD5") else { return nil }
        if let qopList = challenge.parameters["qop"] {
            let offered = qopList.split(separator: ",").map {
                $0.trimmingCharacters(in: .whitespaces).lowercased()
            }.filter { !$0.isEmpty }
            if offered.contains(QualityOfProtection.auth.rawValue) {
                self.qop = .auth
            } else if offered.contains(QualityOfProtection.authInt.rawValue) {
                self.qop = .authInt
            } else if offered.isEmpty {
                self.qop = nil
            } else {
                return nil
            }
        } else {
            self.qop = nil
        }
        self.realm = realm
        self.nonce = nonce
        self.opaque = challenge.parameters["opaque"]
        self.algorithm = algorithm
        self.algorithmName = algorithmName
        self.isStale = challenge.parameters["stale"]?.lowercased() == "true"
    }

    /// Answers the challenge for one request, counting one more use of the nonce.
    ///
    /// With a `-sess` algorithm and no `qop`, `cnonce` is still sent, since the session key needs one.
    ///
    /// - Parameters:
    ///   - username: The user name; `"` and `\` are escaped.
    ///   - password: The password.
    ///   - method: The request method, for example `GET`.
    ///   - uri: The request target as sent on the request line, for example `/dir/index.html?x=1`.
    ///   - body: The request body; hashed only for `qop=auth-int`.
    ///   - cnonce: The client nonce; 16 random bytes in hex when `nil`.
    /// - Returns: The whole `Authorization` field value, starting with `Digest `.
    mutating func authorization(
        username: String,
        password: String,
        method: String,
        uri: String,
        body: [UInt8],
        cnonce: String? = nil
    ) -> String {
        self.nonceCount &+= 1
        let nc = Self.eightHexDigits(self.nonceCount)
        let cnonce = cnonce ?? Algorithm.hex((0..<16).map { _ in UInt8.random(in: 0...255) })
        let hash = self.algorithm
        var ha1 = hash("\(username):\(self.realm):\(password)")
        if hash.isSession {
            ha1 = hash("\(ha1):\(self.nonce):\(cnonce)")
        }
        let ha2: String
        if self.qop == .authInt {
            ha2 = hash("\(method):\(uri):\(hash(body))")
        } else {
            ha2 = hash("\(method):\(uri)")
        }
        let response: String
        if let qop = self.qop {
            response = hash("\(ha1):\(self.nonce):\(nc):\(cnonce):\(qop.rawValue):\(ha2)")
        } else {
            response = hash("\(ha1):\(self.nonce):\(ha2)")
        }

        var fields = [
            "username=\(Self.quoted(username))", "realm=\(Self.quoted(self.realm))",
            "nonce=\(Self.quoted(self.nonce))", "uri=\(Self.quoted(uri))",
        ]
        if let algorithmName = self.algorithmName {
            fields.append("algorithm=\(algorithmName)")
        }
        if let qop = self.qop {
            fields.append("qop=\(qop.rawValue)")
            fields.append("nc=\(nc)")
            fields.append("cnonce=\(Self.quoted(cnonce))")
        } else if hash.isSession {
            fields.append("cnonce=\(Self.quoted(cnonce))")
        }
        fields.append("response=\(Self.quoted(response))")
        if let opaque = self.opaque {
            fields.append("opaque=\(Self.quoted(opaque))")
        }
        return "Digest " + fields.joined(separator: ", ")
    }

    /// `value` as a quoted-string, with `"` and `\` escaped.
    static func quoted(_ value: String) -> String {
        var text = "\""
        for character in value {
            if character == "\"" || character == "\\" {
                text.append("\\")
            }
            text.append(character)
        }
        text.append("\"")
        return text
    }

    /// `value` as 8 lowercase hex digits, as `nc` is written.
    static func eightHexDigits(_ value: UInt32) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }
}
