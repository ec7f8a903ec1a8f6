import HTTPTypes

/// The directives of all `Cache-Control` field lines of a request or a response (RFC 9111 §5.2).
///
/// Every line is parsed as an RFC 9110 §5.6.1 list of `token [ "=" ( token / quoted-string ) ]`: names are
/// compared case-insensitively, arguments may be tokens or quoted strings (RFC 9111 §5.2: "recipients ought to
/// accept both forms"), empty list elements and whitespace are skipped, and a comma inside a quoted string does
/// not end an element. Unknown directives are ignored (§5.2.3).
///
/// Values that are missing, malformed or contradictory are read in the most restrictive way, directive by
/// directive, so that a hostile or broken field can only make the cache do less:
/// - `max-age`, `s-maxage`: an invalid value, or two different values, give `0`, a response that is stale at
///   once (§4.2.1: "consider responses that have invalid freshness information to be stale"; "either the first
///   occurrence should be used or the response should be considered stale"). The same reading serves a
///   request's `max-age`, which then asks for validation.
/// - `min-fresh`: invalid values are ignored; of several valid values the largest is kept.
/// - `max-stale`: without a value it accepts any staleness (`Int.max`, §5.2.1.2); an invalid value cancels the
///   directive (`nil`: no staleness accepted); of several values the smallest is kept.
/// - `stale-while-revalidate`, `stale-if-error` (RFC 5861): an invalid or missing value cancels the directive
///   (`nil`); of several values the smallest is kept.
/// - `no-cache`, `private`: an argument that names no field, or cannot be read, is the unqualified form (which
///   applies to the whole response).
/// - Directives that restrict (`no-store`, `no-transform`, `only-if-cached`, `must-revalidate`,
///   `proxy-revalidate`) count even with an argument they do not define; directives that permit (`public`,
///   `must-understand`, `immutable`) count only without one.
///
/// A delta-seconds value above 2147483648 is read as 2147483648 (RFC 9111 §1.2.2).
struct CacheControl: Sendable, Equatable {
    /// `max-age` (§5.2.1.1, §5.2.2.1), in seconds.
    var maxAge: Int?
    /// `s-maxage` (§5.2.2.10), in seconds.
    var sharedMaxAge: Int?
    /// `min-fresh` (§5.2.1.3), in seconds.
    var minFresh: Int?
    /// `max-stale` (§5.2.1.2), in seconds; `Int.max` when it was given without a value.
    var maxStale: Int?
    /// `stale-while-revalidate` (RFC 5861 §3), in seconds.
    var staleWhileRevalidate: Int?
    /// `stale-if-error` (RFC 5861 §4), in seconds.
    var staleIfError: Int?
    /// `no-cache` without field names (§5.2.1.4, §5.2.2.4).
    var noCache = false
    /// The lowercased field names of `no-cache="…"` (§5.2.2.4).
    var noCacheFields: [String] = []
    /// `private` without field names (§5.2.2.7).
    var isPrivate = false
    /// The lowercased field names of `private="…"` (§5.2.2.7).
    var privateFields: [String] = []
    /// `no-store` (§5.2.1.5, §5.2.2.5).
    var noStore = false
    /// `no-transform` (§5.2.1.6, §5.2.2.6).
    var noTransform = false
    /// `only-if-cached` (§5.2.1.7).
    var onlyIfCached = false
    /// `must-revalidate` (§5.2.2.2).
    var mustRevalidate = false
    /// `proxy-revalidate` (§5.2.2.8).
    var proxyRevalidate = false
    /// `public` (§5.2.2.9).
    var isPublic = false
    /// `must-understand` (§5.2.2.3).
    var mustUnderstand = false
    /// `immutable` (RFC 8246).
    var immutable = false

    /// The largest delta-seconds value a cache needs to keep: 2147483648 (RFC 9111 §1.2.2).
    ///
    /// Where `Int` has 32 bits (watchOS on arm64_32) it is one less, `Int.max`, the nearest a value can come.
    static let deltaSecondsLimit = Int(clamping: Int64(2_147_483_648))

    /// Reads the directives of every `Cache-Control` line of `fields`.
    ///
    /// - Parameter fields: A request's or a response's header fields.
    init(_ fields: HTTPFields) {
        var arguments: [String: [Argument]] = [:]
        for line in fields[values: .cacheControl] {
            for directive in Self.directives(in: line) {
                arguments[directive.name, default: []].append(directive.argument)
            }
        }
        self.maxAge = arguments["max-age"].map(Self.freshness)
        self.sharedMaxAge = arguments["s-maxage"].map(Self.freshness)
        self.minFresh = arguments["min-fresh"].flatMap(Self.largestValid)
        self.maxStale = arguments["max-stale"].flatMap { Self.smallest($0, valueless: Int.max) }
        self.staleWhileRevalidate = arguments["stale-while-revalidate"].flatMap { Self.smallest($0, valueless: nil) }
        self.staleIfError = arguments["stale-if-error"].flatMap { Self.smallest($0, valueless: nil) }
        if let noCache = arguments["no-cache"] {
            (self.noCache, self.noCacheFields) = Self.fieldNames(noCache)
        }
        if let isPrivate = arguments["private"] {
            (self.isPrivate, self.privateFields) = Self.fieldNames(isPrivate)
        }
        self.noStore = arguments["no-store"] != nil
        self.noTransform = arguments["no-transform"] != nil
        self.onlyIfCached = arguments["only-if-cached"] != nil
        self.mustRevalidate = arguments["must-revalidate"] != nil
        self.proxyRevalidate = arguments["proxy-revalidate"] != nil
        self.isPublic = arguments["public"]?.contains(.absent) ?? false
        self.mustUnderstand = arguments["must-understand"]?.contains(.absent) ?? false
        self.immutable = arguments["immutable"]?.contains(.absent) ?? false
    }

    /// Whether no directive this type knows was found.
    var isEmpty: Bool {
        self == CacheControl(HTTPFields())
    }

    /// Whether a request's `Pragma: no-cache` asks for validation (RFC 9111 §5.4).
    ///
    /// `Pragma` counts only when the request has no `Cache-Control` field: "When the Cache-Control header field
    /// is also present and understood in a request, Pragma is ignored." `no-cache` must be a whole list member,
    /// compared case-insensitively.
    ///
    /// - Parameter fields: A request's header fields.
    /// - Returns: `true` when `Pragma` asks for `no-cache` and `Cache-Control` is absent.
    static func pragmaNoCache(_ fields: HTTPFields) -> Bool {
        guard !fields.contains(.cacheControl) else { return false }
        return fields.contains { field in
            field.name.canonicalName == "pragma"
                && field.value.split(separator: ",").contains { Self.trimmed($0).lowercased() == "no-cache" }
        }
    }

    /// The argument of one directive as it was written.
    enum Argument: Sendable, Equatable {
        /// No `=`.
        case absent
        /// A token or the content of a quoted string, unescaped.
        case value(String)
        /// Something after the name that is neither: an unterminated quoted string, or text after the argument.
        case malformed
    }

    /// The directives of one `Cache-Control` field line, names lowercased, in order (RFC 9110 §5.6.1).
    ///
    /// - Parameter line: One field line's value.
    /// - Returns: Each directive's name and argument; elements without a token name are left out.
    static func directives(in line: String) -> [(name: String, argument: Argument)] {
        var scanner = FieldScanner(Array(line.utf8))
        var result: [(name: String, argument: Argument)] = []
        while !scanner.isAtEnd {
            scanner.skip { $0 == UInt8(ascii: ",") || Self.isWhitespace($0) }
            guard !scanner.isAtEnd else { break }
            let name = scanner.take(while: Self.isTokenCharacter)
            guard !name.isEmpty else {
                scanner.skipElement()
                continue
            }
            scanner.skip(while: Self.isWhitespace)
            var argument = Argument.absent
            if scanner.peek == UInt8(ascii: "=") {
                scanner.advance()
                scanner.skip(while: Self.isWhitespace)
                if scanner.peek == UInt8(ascii: "\"") {
                    argument = scanner.quotedString().map { .value(Self.string($0)) } ?? .malformed
                } else {
                    argument = .value(Self.string(scanner.take(while: Self.isTokenCharacter)))
                }
                scanner.skip(while: Self.isWhitespace)
            }
            if !scanner.isAtEnd && scanner.peek != UInt8(ascii: ",") {
                argument = .malformed
                scanner.skipElement()
            }
            result.append((Self.string(name).lowercased(), argument))
        }
        return result
    }

    /// Reads delta-seconds (RFC 9111 §1.2.2): one or more digits, capped at 2147483648.
    ///
    /// - Parameter text: The text to read; surrounding whitespace is not allowed.
    /// - Returns: The number of seconds, or `nil` when `text` is not delta-seconds.
    static func deltaSeconds(_ text: some StringProtocol) -> Int? {
        var value = 0
        for byte in text.utf8 {
            guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else { return nil }
            let digit = Int(byte - UInt8(ascii: "0"))
            // Checked before multiplying, so that no length of digits can overflow.
            value = value > (Self.deltaSecondsLimit - digit) / 10 ? Self.deltaSecondsLimit : value * 10 + digit
        }
        return text.utf8.isEmpty ? nil : value
    }

    /// `text` without the whitespace (SP, HTAB) RFC 9110 §5.6.3 allows around values.
    static func trimmed(_ text: Substring) -> Substring {
        let bytes = text.utf8
        guard let first = bytes.firstIndex(where: { !Self.isWhitespace($0) }),
            let last = bytes.lastIndex(where: { !Self.isWhitespace($0) })
        else { return text[text.endIndex...] }
        // Whitespace is ASCII, so both ends fall on scalar boundaries.
        return text[first..<bytes.index(after: last)]
    }

    /// `max-age`/`s-maxage`: one valid value, or all equal, is that value; anything else is 0 (stale).
    private static func freshness(_ arguments: [Argument]) -> Int {
        let values = arguments.map(Self.seconds)
        guard let first = values.first, let seconds = first, values.allSatisfy({ $0 == seconds }) else { return 0 }
        return seconds
    }

    /// `min-fresh`: the largest valid value, invalid ones ignored.
    private static func largestValid(_ arguments: [Argument]) -> Int? {
        arguments.compactMap(Self.seconds).max()
    }

    /// `max-stale`, `stale-while-revalidate`, `stale-if-error`: the smallest value; any invalid one cancels.
    private static func smallest(_ arguments: [Argument], valueless: Int?) -> Int? {
        var smallest: Int?
        for argument in arguments {
            let seconds = argument == .absent ? valueless : Self.seconds(argument)
            guard let seconds else { return nil }
            smallest = min(smallest ?? seconds, seconds)
        }
        return smallest
    }

    private static func seconds(_ argument: Argument) -> Int? {
        guard case .value(let text) = argument else { return nil }
        return Self.deltaSeconds(text)
    }

    /// `no-cache`/`private`: whether the unqualified form is present, and the names of the qualified forms.
    private static func fieldNames(_ arguments: [Argument]) -> (unqualified: Bool, names: [String]) {
        var unqualified = false
        var names: [String] = []
        for argument in arguments {
            guard case .value(let list) = argument else {
                unqualified = true
                continue
            }
            let listed = list.split(separator: ",").map { Self.trimmed($0).lowercased() }.filter { !$0.isEmpty }
            if listed.isEmpty { unqualified = true }
            for name in listed where !names.contains(name) { names.append(name) }
        }
        return (unqualified, names)
    }

    private static func string(_ bytes: ArraySlice<UInt8>) -> String {
        String(decoding: bytes, as: UTF8.self)
    }

    private static func string(_ bytes: [UInt8]) -> String {
        String(decoding: bytes, as: UTF8.self)
    }

    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")
    }

    /// `tchar` (RFC 9110 §5.6.2).
    static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }
}

extension CacheControl {
    /// A cursor over a field line's bytes.
    private struct FieldScanner {
        private let bytes: [UInt8]
        private var index = 0

        init(_ bytes: [UInt8]) {
            self.bytes = bytes
        }

        var isAtEnd: Bool { self.index >= self.bytes.count }

        var peek: UInt8? { self.isAtEnd ? nil : self.bytes[self.index] }

        mutating func advance() {
            if !self.isAtEnd { self.index += 1 }
        }

        mutating func skip(while predicate: (UInt8) -> Bool) {
            while let byte = self.peek, predicate(byte) { self.index += 1 }
        }

        mutating func take(while predicate: (UInt8) -> Bool) -> ArraySlice<UInt8> {
            let start = self.index
            self.skip(while: predicate)
            return self.bytes[start..<self.index]
        }

        /// A quoted string's content with its escapes undone (RFC 9110 §5.6.4); `nil` when it is unterminated.
        mutating func quotedString() -> [UInt8]? {
            self.advance()
            var content: [UInt8] = []
            while let byte = self.peek {
                self.index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    return content
                case UInt8(ascii: "\\"):
                    guard let escaped = self.peek else { return nil }
                    content.append(escaped)
                    self.index += 1
                default:
                    content.append(byte)
                }
            }
            return nil
        }

        /// Moves past the rest of a list element: up to the next comma that is not inside a quoted string.
        mutating func skipElement() {
            while let byte = self.peek, byte != UInt8(ascii: ",") {
                if byte == UInt8(ascii: "\"") {
                    _ = self.quotedString()
                } else {
                    self.index += 1
                }
            }
        }
    }
}
