/// A small, strict JSON parser used to fill the `json` field of echo responses.
///
/// It accepts any JSON text (including top-level scalars, as Python's `json.loads` does) and
/// returns `nil` for anything that is not valid JSON. Nesting is limited so that hostile input
/// cannot exhaust the stack.
struct JSONParser {
    static let maximumDepth = 512

    private let bytes: [UInt8]
    private var index = 0

    private init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Parses a complete JSON document, returning `nil` if the bytes are not valid JSON.
    static func parse(_ bytes: [UInt8]) -> JSONValue? {
        var parser = JSONParser(bytes: bytes)
        parser.skipWhitespace()
        guard let value = parser.parseValue(depth: 0) else { return nil }
        parser.skipWhitespace()
        guard parser.index == parser.bytes.count else { return nil }
        return value
    }

    private var current: UInt8? {
        self.index < self.bytes.count ? self.bytes[self.index] : nil
    }

    private mutating func skipWhitespace() {
        while let byte = self.current,
            byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r")
                || byte == UInt8(ascii: "\t")
        {
            self.index += 1
        }
    }

    private mutating func consume(_ literal: String) -> Bool {
        let literalBytes = Array(literal.utf8)
        guard self.index + literalBytes.count <= self.bytes.count,
            self.bytes[self.index..<self.index + literalBytes.count].elementsEqual(literalBytes)
        else { return false }
        self.index += literalBytes.count
        return true
    }

    private mutating func parseValue(depth: Int) -> JSONValue? {
        guard depth < Self.maximumDepth, let byte = self.current else { return nil }
        switch byte {
        case UInt8(ascii: "{"):
            return self.parseObject(depth: depth)
        case UInt8(ascii: "["):
            return self.parseArray(depth: depth)
        case UInt8(ascii: "\""):
            return self.parseString().map(JSONValue.string)
        case UInt8(ascii: "t"):
            return self.consume("true") ? .bool(true) : nil
        case UInt8(ascii: "f"):
            return self.consume("false") ? .bool(false) : nil
        case UInt8(ascii: "n"):
            return self.consume("null") ? .null : nil
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return self.parseNumber()
        default:
            return nil
        }
    }

    private mutating func parseObject(depth: Int) -> JSONValue? {
        self.index += 1
        var members: [String: JSONValue] = [:]
        self.skipWhitespace()
        if self.current == UInt8(ascii: "}") {
            self.index += 1
            return .object(members)
        }
        while true {
            self.skipWhitespace()
            guard self.current == UInt8(ascii: "\""), let key = self.parseString() else { return nil }
            self.skipWhitespace()
            guard self.current == UInt8(ascii: ":") else { return nil }
            self.index += 1
            self.skipWhitespace()
            guard let value = self.parseValue(depth: depth + 1) else { return nil }
            members[key] = value
            self.skipWhitespace()
            switch self.current {
            case UInt8(ascii: ","):
                self.index += 1
            case UInt8(ascii: "}"):
                self.index += 1
                return .object(members)
            default:
                return nil
            }
        }
    }

    private mutating func parseArray(depth: Int) -> JSONValue? {
        self.index += 1
        var elements: [JSONValue] = []
        self.skipWhitespace()
        if self.current == UInt8(ascii: "]") {
            self.index += 1
            return .array(elements)
        }
        while true {
            self.skipWhitespace()
            guard let value = self.parseValue(depth: depth + 1) else { return nil }
            elements.append(value)
            self.skipWhitespace()
            switch self.current {
            case UInt8(ascii: ","):
                self.index += 1
            case UInt8(ascii: "]"):
                self.index += 1
                return .array(elements)
            default:
                return nil
            }
        }
    }

    private mutating func parseNumber() -> JSONValue? {
        let start = self.index
        var isInteger = true
        if self.current == UInt8(ascii: "-") {
            self.index += 1
        }
        guard self.skipDigits(allowLeadingZero: false) else { return nil }
        if self.current == UInt8(ascii: ".") {
            isInteger = false
            self.index += 1
            guard self.skipDigits(allowLeadingZero: true) else { return nil }
        }
        if self.current == UInt8(ascii: "e") || self.current == UInt8(ascii: "E") {
            isInteger = false
            self.index += 1
            if self.current == UInt8(ascii: "+") || self.current == UInt8(ascii: "-") {
                self.index += 1
            }
            guard self.skipDigits(allowLeadingZero: true) else { return nil }
        }
        let text = String(decoding: self.bytes[start..<self.index], as: UTF8.self)
        if isInteger, let integer = Int64(text) {
            return .integer(integer)
        }
        return Double(text).map(JSONValue.double)
    }

    /// Skips a run of digits; returns `false` when there is none (or a forbidden leading zero).
    private mutating func skipDigits(allowLeadingZero: Bool) -> Bool {
        let start = self.index
        while let byte = self.current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
            self.index += 1
        }
        let count = self.index - start
        guard count > 0 else { return false }
        return allowLeadingZero || count == 1 || self.bytes[start] != UInt8(ascii: "0")
    }

    private mutating func parseString() -> String? {
        self.index += 1
        var scalars = String.UnicodeScalarView()
        var pendingBytes: [UInt8] = []
        func flushBytes() -> Bool {
            guard !pendingBytes.isEmpty else { return true }
            guard let decoded = UTF8Text.decode(pendingBytes) else { return false }
            scalars.append(contentsOf: decoded.unicodeScalars)
            pendingBytes.removeAll(keepingCapacity: true)
            return true
        }
        while let byte = self.current {
            self.index += 1
            switch byte {
            case UInt8(ascii: "\""):
                return flushBytes() ? String(scalars) : nil
            case UInt8(ascii: "\\"):
                guard flushBytes(), let scalar = self.parseEscape() else { return nil }
                scalars.append(scalar)
            case 0x00..<0x20:
                return nil
            default:
                pendingBytes.append(byte)
            }
        }
        return nil
    }

    private mutating func parseEscape() -> Unicode.Scalar? {
        guard let byte = self.current else { return nil }
        self.index += 1
        switch byte {
        case UInt8(ascii: "\""): return "\""
        case UInt8(ascii: "\\"): return "\\"
        case UInt8(ascii: "/"): return "/"
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"):
            guard let unit = self.parseHex4() else { return nil }
            if (0xD800..<0xDC00).contains(unit) {
                // A high surrogate: combine with a following low surrogate when there is one.
                let save = self.index
                if self.consume("\\u"), let low = self.parseHex4(), (0xDC00..<0xE000).contains(low) {
                    let value = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
                    return Unicode.Scalar(value)
                }
                self.index = save
                return "\u{FFFD}"
            }
            return Unicode.Scalar(UInt32(unit)) ?? "\u{FFFD}"
        default:
            return nil
        }
    }

    private mutating func parseHex4() -> UInt16? {
        guard self.index + 4 <= self.bytes.count else { return nil }
        var value: UInt16 = 0
        for _ in 0..<4 {
            guard let digit = self.current.flatMap(UTF8Text.hexValue) else { return nil }
            value = value << 4 | UInt16(digit)
            self.index += 1
        }
        return value
    }
}
