/// One challenge of a `WWW-Authenticate` (or `Proxy-Authenticate`) field: a scheme and its parameters.
///
/// A server can offer several challenges, in one field value or in several. RFC 9110 §11.6.1 and §11.2
/// define the syntax; ``parse(_:)`` reads it and skips what it cannot read, so a malformed header yields
/// fewer challenges rather than an error.
///
/// ```swift
/// let challenges = AuthenticationChallenge.parse([#"Basic realm="a", Digest realm="b", nonce="n""#])
/// // [basic {realm: a}, digest {realm: b, nonce: n}]
/// ```
struct AuthenticationChallenge: Equatable, Sendable {
    /// The authentication scheme, lowercased: `basic`, `digest`, `bearer`, …
    var scheme: String
    /// The auth-params, with names lowercased and quoted values unquoted and unescaped.
    var parameters: [String: String]
    /// The token68 form (for example `Bearer abc==` or `Negotiate …`), used instead of parameters.
    var token68: String?

    init(scheme: String, parameters: [String: String] = [:], token68: String? = nil) {
        self.scheme = scheme
        self.parameters = parameters
        self.token68 = token68
    }

    /// Reads every challenge of the values of one or more `WWW-Authenticate` fields.
    ///
    /// Each field value is a comma-separated list of challenges, each `scheme [token68 | auth-param
    /// *("," auth-param)]`; empty list elements and optional whitespace are allowed. A parameter that
    /// appears twice in one challenge keeps its first value. An element that cannot be read is skipped up
    /// to the next comma outside a quoted string; nothing here traps or loops on any input.
    ///
    /// - Parameter fieldValues: The field values, in the order they were received.
    /// - Returns: The challenges that could be read, in order.
    static func parse(_ fieldValues: [String]) -> [AuthenticationChallenge] {
        var challenges: [AuthenticationChallenge] = []
        for value in fieldValues {
            var parser = ChallengeParser(Array(value.utf8))
            parser.parse(into: &challenges)
        }
        return challenges
    }
}

/// A one-pass reader of one field value. Every step consumes at least one byte or stops, so it always ends.
private struct ChallengeParser {
    private let bytes: [UInt8]
    private var index = 0

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    private var current: UInt8? { self.index < self.bytes.count ? self.bytes[self.index] : nil }

    /// Whether the next byte ends a list element (a comma or the end of the value).
    private var atElementEnd: Bool { self.current == nil || self.current == UInt8(ascii: ",") }

    mutating func parse(into challenges: inout [AuthenticationChallenge]) {
        var challenge: AuthenticationChallenge?
        while true {
            self.skip { $0 == UInt8(ascii: ",") || Self.isWhitespace($0) }
            guard self.current != nil else { break }
            let start = self.index
            guard let name = self.token() else {
                self.skipElement()
                continue
            }
            let nameEnd = self.index
            self.skipWhitespace()
            if self.current == UInt8(ascii: "=") {
                // `name = value`: a parameter of the challenge in progress, unless it took the token68 form.
                if challenge != nil, challenge?.token68 == nil, let value = self.parameterValue() {
                    let key = name.lowercased()
                    if challenge?.parameters[key] == nil {
                        challenge?.parameters[key] = value
                    }
                } else {
                    self.index = start
                    self.skipElement()
                }
                continue
            }
            if let challenge {
                challenges.append(challenge)
            }
            challenge = AuthenticationChallenge(scheme: name.lowercased())
            if self.atElementEnd {
                continue
            }
            guard self.index > nameEnd else {
                // No space after the scheme (`Basic"x"`): keep the scheme, drop the rest of the element.
                self.skipElement()
                continue
            }
            if let token68 = self.token68() {
                challenge?.token68 = token68
                continue
            }
            // The first parameter shares the element with the scheme; the loop reads it as any other.
            let parameterStart = self.index
            if self.token() != nil {
                self.skipWhitespace()
                if self.current == UInt8(ascii: "=") {
                    self.index = parameterStart
                    continue
                }
            }
            self.index = parameterStart
            self.skipElement()
        }
        if let challenge {
            challenges.append(challenge)
        }
    }

    /// Reads `= BWS (token / quoted-string) OWS` up to the end of the element, from the `=`; `nil` (having
    /// consumed some bytes) when the value is missing or followed by something other than a comma.
    private mutating func parameterValue() -> String? {
        self.index += 1
        self.skipWhitespace()
        let value: String?
        if self.current == UInt8(ascii: "\"") {
            value = self.quotedString()
        } else {
            value = self.token()
        }
        self.skipWhitespace()
        guard let value, self.atElementEnd else {
            return nil
        }
        return value
    }

    /// Reads `1*tchar`, or returns `nil` without consuming anything.
    private mutating func token() -> String? {
        let start = self.index
        self.skip(while: Self.isTokenCharacter)
        guard self.index > start else { return nil }
        return String(decoding: self.bytes[start..<self.index], as: UTF8.self)
    }

    /// Reads `token68 OWS` when it makes up the rest of the element, or returns `nil` without consuming.
    private mutating func token68() -> String? {
        let start = self.index
        self.skip(while: Self.isToken68Character)
        guard self.index > start else { return nil }
        self.skip { $0 == UInt8(ascii: "=") }
        let end = self.index
        self.skipWhitespace()
        guard self.atElementEnd else {
            self.index = start
            return nil
        }
        return String(decoding: self.bytes[start..<end], as: UTF8.self)
    }

    /// Reads a quoted-string from its opening quote, undoing `\` escapes; `nil` when it is unterminated
    /// or holds a control character.
    private mutating func quotedString() -> String? {
        self.index += 1
        var value: [UInt8] = []
        while let byte = self.current {
            self.index += 1
            switch byte {
            case UInt8(ascii: "\""):
                return String(decoding: value, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard let escaped = self.current, Self.isQuotedPairCharacter(escaped) else { return nil }
                value.append(escaped)
                self.index += 1
            case _ where Self.isQuotedTextCharacter(byte):
                value.append(byte)
            default:
                return nil
            }
        }
        return nil
    }

    /// Skips to the next comma that is not inside a quoted string, or to the end.
    private mutating func skipElement() {
        var quoted = false
        while let byte = self.current {
            if quoted {
                if byte == UInt8(ascii: "\\") {
                    self.index += 1
                } else if byte == UInt8(ascii: "\"") {
                    quoted = false
                }
            } else if byte == UInt8(ascii: "\"") {
                quoted = true
            } else if byte == UInt8(ascii: ",") {
                return
            }
            self.index += 1
        }
        self.index = self.bytes.count
    }

    private mutating func skipWhitespace() {
        self.skip(while: Self.isWhitespace)
    }

    private mutating func skip(while predicate: (UInt8) -> Bool) {
        while let byte = self.current, predicate(byte) {
            self.index += 1
        }
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")
    }

    /// `tchar` of RFC 9110 §5.6.2.
    private static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    /// The characters of `token68` before its trailing `=` (RFC 9110 §11.2).
    private static func isToken68Character(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "-._~+/".utf8.contains(byte)
        }
    }

    /// The characters a quoted-pair can escape (RFC 9110 §5.6.4): HTAB, SP, VCHAR and obs-text.
    private static func isQuotedPairCharacter(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "\t") || (byte >= 0x20 && byte != 0x7F)
    }

    /// `qdtext` of RFC 9110 §5.6.4: a quoted-pair character other than `"` and `\`.
    private static func isQuotedTextCharacter(_ byte: UInt8) -> Bool {
        Self.isQuotedPairCharacter(byte) && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\")
    }
}
