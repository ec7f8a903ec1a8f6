import Foundation

/// A parsed `Content-Disposition` header (RFC 6266): whether to show the body inline or save it, and as what name.
///
/// Parsing follows RFC 6266 with `filename*` values in the RFC 8187 (formerly RFC 5987) form
/// `charset'language'percent-encoded`, for the charsets UTF-8 and ISO-8859-1; the language is ignored. It is
/// tolerant of what servers really send:
///
/// - the disposition type and parameter names are case-insensitive;
/// - quoted strings are unescaped (`\"` → `"`, `\\` → `\`), and an unterminated one runs to the end;
/// - an unquoted value runs to the next `;` with the whitespace around it trimmed, so `filename=my report.pdf`
///   works;
/// - empty parameters (`;;`, a trailing `;`) and parameters without `=` are skipped;
/// - text after a closing quote, up to the next `;`, is ignored;
/// - when a parameter appears twice, the first one counts (for `filename*`, the first one that decodes);
/// - a header without a valid disposition type but with parameters, such as `filename=a.txt`, is parsed as
///   ``DispositionType-swift.enum/inline``, as browsers do.
///
/// Percent signs in plain `filename` values are kept as they are; only `filename*` is percent-decoded. RFC 2231
/// continuations (`filename*0=`) are not supported and are kept as ordinary parameters.
///
/// ```swift
/// let header = "attachment; filename=\"EUR rates.txt\"; filename*=UTF-8''%E2%82%AC%20rates.txt"
/// let disposition = ContentDisposition(header)
/// print(disposition?.type == .attachment)  // true
/// print(disposition?.filename ?? "")  // € rates.txt
/// ```
public struct ContentDisposition: Sendable, Hashable {
    /// What the recipient should do with the body.
    public enum DispositionType: Sendable, Hashable {
        /// Show it as part of a page (`inline`).
        case inline
        /// Save it as a file, usually after asking (`attachment`).
        case attachment
        /// Another type, such as `form-data`, in lowercase.
        case other(String)
    }

    /// The disposition type.
    public var type: DispositionType

    /// The parameters by lowercase name, with quoted strings unescaped.
    ///
    /// Extended parameters (names ending in `*`, such as `filename*`) hold the decoded text, and are present only
    /// when their value decoded; an invalid one is left out.
    public var parameters: [String: String]

    /// Creates a disposition from its parts.
    ///
    /// ```swift
    /// let disposition = ContentDisposition(type: .attachment, parameters: ["filename": "report.pdf"])
    /// ```
    ///
    /// - Parameters:
    ///   - type: The disposition type.
    ///   - parameters: The parameters by lowercase name.
    public init(type: DispositionType, parameters: [String: String] = [:]) {
        self.type = type
        self.parameters = parameters
    }

    /// Parses a `Content-Disposition` header value.
    ///
    /// ```swift
    /// let disposition = ContentDisposition("Attachment; filename=report.pdf")
    /// print(disposition?.filename ?? "")  // report.pdf
    /// print(ContentDisposition("\"quoted\"") == nil)  // true
    /// ```
    ///
    /// - Parameter headerValue: The field value, without the `Content-Disposition:` name.
    /// - Returns: The disposition, or `nil` when the value has neither a disposition type nor any parameter.
    public init?(_ headerValue: String) {
        var scanner = DispositionScanner(headerValue)
        let type = scanner.scanDispositionType()
        var parameters: [String: String] = [:]
        while let (name, value) = scanner.scanParameter() {
            guard parameters[name] == nil else { continue }
            if name.hasSuffix("*") {
                if let decoded = Self.decodeExtendedValue(value) {
                    parameters[name] = decoded
                }
            } else {
                parameters[name] = value
            }
        }
        guard type != nil || !parameters.isEmpty else { return nil }
        self.init(type: type ?? .inline, parameters: parameters)
    }

    /// The file name to save the body as: the `filename*` parameter if it is present and valid, otherwise
    /// `filename`.
    ///
    /// This is the server's suggestion, not yet safe to use as a path: pass it through
    /// ``DownloadFilename/sanitized(_:)`` first.
    ///
    /// ```swift
    /// let name = ContentDisposition("attachment; filename=\"../x\"")?.filename  // "../x"
    /// print(DownloadFilename.sanitized(name ?? ""))  // _x
    /// ```
    public var filename: String? {
        self.parameters["filename*"] ?? self.parameters["filename"]
    }

    /// Decodes an RFC 8187 `ext-value` (`charset'language'value-chars`); `nil` for an unknown charset, a malformed
    /// percent-escape or bytes that are not valid in the charset.
    ///
    /// Tolerated: a quoted value, and characters that RFC 8187 requires to be percent-encoded, taken as their UTF-8
    /// (or, for ISO-8859-1, Latin-1) bytes.
    static func decodeExtendedValue(_ value: String) -> String? {
        let parts = value.split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        let charset = parts[0].lowercased()
        var bytes: [UInt8] = []
        var scalars = parts[2].unicodeScalars.makeIterator()
        while let scalar = scalars.next() {
            if scalar == "%" {
                guard let high = scalars.next().flatMap(Self.hexValue), let low = scalars.next().flatMap(Self.hexValue)
                else { return nil }
                bytes.append(high << 4 | low)
            } else if charset == "iso-8859-1" {
                guard scalar.value <= 0xFF else { return nil }
                bytes.append(UInt8(scalar.value))
            } else {
                bytes.append(contentsOf: String(scalar).utf8)
            }
        }
        switch charset {
        case "utf-8":
            return Self.decodeUTF8(bytes)
        case "iso-8859-1":
            var text = ""
            text.unicodeScalars.append(contentsOf: bytes.map { Unicode.Scalar($0) })
            return text
        default:
            return nil
        }
    }

    /// The text of `bytes` if they are valid UTF-8.
    private static func decodeUTF8(_ bytes: [UInt8]) -> String? {
        var text = String.UnicodeScalarView()
        var decoder = UTF8()
        var iterator = bytes.makeIterator()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): text.append(scalar)
            case .emptyInput: return String(text)
            case .error: return nil
            }
        }
    }

    private static func hexValue(_ scalar: Unicode.Scalar) -> UInt8? {
        switch scalar {
        case "0"..."9": UInt8(scalar.value - 0x30)
        case "a"..."f": UInt8(scalar.value - 0x61 + 10)
        case "A"..."F": UInt8(scalar.value - 0x41 + 10)
        default: nil
        }
    }
}

/// Reads a `Content-Disposition` value scalar by scalar, never failing: what does not parse is skipped.
private struct DispositionScanner {
    private let scalars: [Unicode.Scalar]
    private var index = 0

    init(_ text: String) {
        self.scalars = Array(text.unicodeScalars)
    }

    /// Reads the disposition type, or leaves the position at the start and returns `nil` when the text before the
    /// first `;` is not a token.
    mutating func scanDispositionType() -> ContentDisposition.DispositionType? {
        let end = self.scalars.firstIndex(of: ";") ?? self.scalars.endIndex
        let candidate = Self.trimmedString(self.scalars[..<end])
        guard !candidate.isEmpty, candidate.unicodeScalars.allSatisfy(Self.isTokenCharacter) else { return nil }
        self.index = end
        switch candidate.lowercased() {
        case "inline": return .inline
        case "attachment": return .attachment
        case let other: return .other(other)
        }
    }

    /// Reads the next parameter with a valid name and an `=`; `nil` at the end.
    mutating func scanParameter() -> (name: String, value: String)? {
        while self.index < self.scalars.endIndex {
            self.skip { $0 == ";" || Self.isWhitespace($0) }
            let nameStart = self.index
            self.skip { $0 != "=" && $0 != ";" }
            let name = Self.trimmedString(self.scalars[nameStart..<self.index]).lowercased()
            guard self.index < self.scalars.endIndex, self.scalars[self.index] == "=" else { continue }
            self.index += 1
            let value = self.scanValue()
            if Self.isParameterName(name) {
                return (name, value)
            }
        }
        return nil
    }

    /// Reads a quoted string (and ignores what follows it up to `;`) or an unquoted value up to `;`.
    private mutating func scanValue() -> String {
        self.skip(while: Self.isWhitespace)
        guard self.index < self.scalars.endIndex, self.scalars[self.index] == "\"" else {
            let start = self.index
            self.skip { $0 != ";" }
            return Self.trimmedString(self.scalars[start..<self.index])
        }
        var value = String.UnicodeScalarView()
        self.index += 1
        while self.index < self.scalars.endIndex {
            let scalar = self.scalars[self.index]
            self.index += 1
            if scalar == "\"" {
                break
            } else if scalar == "\\" {
                if self.index < self.scalars.endIndex {
                    value.append(self.scalars[self.index])
                    self.index += 1
                }
            } else {
                value.append(scalar)
            }
        }
        self.skip { $0 != ";" }
        return String(value)
    }

    private mutating func skip(while predicate: (Unicode.Scalar) -> Bool) {
        while self.index < self.scalars.endIndex, predicate(self.scalars[self.index]) {
            self.index += 1
        }
    }

    /// The scalars as a string without the spaces and tabs around them.
    private static func trimmedString(_ scalars: ArraySlice<Unicode.Scalar>) -> String {
        var trimmed = scalars
        while let first = trimmed.first, Self.isWhitespace(first) {
            trimmed.removeFirst()
        }
        while let last = trimmed.last, Self.isWhitespace(last) {
            trimmed.removeLast()
        }
        return String(String.UnicodeScalarView(trimmed))
    }

    private static func isWhitespace(_ scalar: Unicode.Scalar) -> Bool {
        scalar == " " || scalar == "\t"
    }

    /// RFC 9110 `tchar`.
    private static func isTokenCharacter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "A"..."Z", "0"..."9": true
        case "!", "#", "$", "%", "&", "'", "*", "+", "-", ".", "^", "_", "`", "|", "~": true
        default: false
        }
    }

    /// A token, which may end in `*` for an extended parameter.
    private static func isParameterName(_ name: String) -> Bool {
        !name.isEmpty && name.unicodeScalars.allSatisfy(Self.isTokenCharacter)
    }
}
