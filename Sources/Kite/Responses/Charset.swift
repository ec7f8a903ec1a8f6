import Foundation

/// IANA charset names and media types, for choosing how to read text bodies.
enum Charset {
    /// The encoding a `Content-Type` value names, with the fallbacks of ``StringResponseSerializer``.
    static func encoding(forContentType contentType: String?) -> String.Encoding {
        guard let contentType else { return .isoLatin1 }
        let mediaType = MediaType(contentType)
        if let charset = mediaType?.parameters["charset"], let encoding = Self.encoding(named: charset) {
            return encoding
        }
        if let mediaType, mediaType.isJSON {
            return .utf8
        }
        return .isoLatin1
    }

    /// The encoding for an IANA charset name, or `nil` when Foundation has none.
    static func encoding(named name: String) -> String.Encoding? {
        let key = name.trimmingCharacters(in: CharacterSet(charactersIn: "\"' ")).lowercased()
        switch key {
        case "utf-8", "utf8": return .utf8
        case "us-ascii", "ascii", "ansi_x3.4-1968": return .ascii
        case "iso-8859-1", "iso8859-1", "latin1", "l1", "iso_8859-1": return .isoLatin1
        case "iso-8859-2", "latin2", "iso_8859-2": return .isoLatin2
        case "utf-16": return .utf16
        case "utf-16be": return .utf16BigEndian
        case "utf-16le": return .utf16LittleEndian
        case "utf-32": return .utf32
        case "utf-32be": return .utf32BigEndian
        case "utf-32le": return .utf32LittleEndian
        case "windows-1250", "cp1250": return .windowsCP1250
        case "windows-1251", "cp1251": return .windowsCP1251
        case "windows-1252", "cp1252": return .windowsCP1252
        case "windows-1253", "cp1253": return .windowsCP1253
        case "windows-1254", "cp1254": return .windowsCP1254
        case "shift_jis", "shift-jis", "sjis": return .shiftJIS
        case "euc-jp": return .japaneseEUC
        case "iso-2022-jp": return .iso2022JP
        case "macintosh", "mac", "x-mac-roman": return .macOSRoman
        default: return nil
        }
    }

    /// A readable name for an encoding, for messages.
    static func name(of encoding: String.Encoding) -> String {
        switch encoding {
        case .utf8: "UTF-8"
        case .ascii: "US-ASCII"
        case .isoLatin1: "ISO-8859-1"
        case .isoLatin2: "ISO-8859-2"
        case .utf16: "UTF-16"
        case .utf16BigEndian: "UTF-16BE"
        case .utf16LittleEndian: "UTF-16LE"
        case .utf32: "UTF-32"
        case .utf32BigEndian: "UTF-32BE"
        case .utf32LittleEndian: "UTF-32LE"
        case .windowsCP1250: "windows-1250"
        case .windowsCP1251: "windows-1251"
        case .windowsCP1252: "windows-1252"
        case .windowsCP1253: "windows-1253"
        case .windowsCP1254: "windows-1254"
        case .shiftJIS: "Shift_JIS"
        case .japaneseEUC: "EUC-JP"
        case .iso2022JP: "ISO-2022-JP"
        case .macOSRoman: "macintosh"
        default: "\(encoding)"
        }
    }
}

/// A parsed media type such as `text/html; charset=utf-8` (RFC 9110 §8.3.1): lowercased type and
/// subtype, parameters with lowercased names and unquoted values.
struct MediaType: Hashable, Sendable, CustomStringConvertible {
    let type: String
    let subtype: String
    let parameters: [String: String]

    init?(_ text: String) {
        let parts = text.split(separator: ";", omittingEmptySubsequences: false)
        guard let essence = parts.first else { return nil }
        let pieces = essence.split(separator: "/", omittingEmptySubsequences: false)
        guard pieces.count == 2 else { return nil }
        let type = pieces[0].trimmingCharacters(in: .whitespaces).lowercased()
        let subtype = pieces[1].trimmingCharacters(in: .whitespaces).lowercased()
        guard !type.isEmpty, !subtype.isEmpty else { return nil }
        self.type = type
        self.subtype = subtype
        var parameters: [String: String] = [:]
        for parameter in parts.dropFirst() {
            guard let equals = parameter.firstIndex(of: "=") else { continue }
            let name = parameter[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            var value = parameter[parameter.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
                value = String(value.dropFirst().dropLast())
            }
            if !name.isEmpty, parameters[name] == nil {
                parameters[name] = value
            }
        }
        self.parameters = parameters
    }

    var description: String { "\(self.type)/\(self.subtype)" }

    var isJSON: Bool {
        (self.type == "application" && self.subtype == "json") || self.subtype.hasSuffix("+json")
    }

    /// Whether this (as an acceptable type, possibly with wildcards) matches `other`.
    func matches(_ other: MediaType) -> Bool {
        if self.type == "*" && self.subtype == "*" { return true }
        if self.type == other.type && (self.subtype == "*" || self.subtype == other.subtype) { return true }
        return false
    }
}
