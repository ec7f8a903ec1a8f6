import NIOCore

/// A JSON document as the test server reads and writes it.
///
/// Objects are stored unordered and always serialized with their keys sorted, as Flask's
/// `jsonify` (and therefore httpbin) does. Integers and floating point numbers are kept apart so
/// that a parsed request body is echoed back with the same number spelling.
enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case integer(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral {
    init(stringLiteral value: String) {
        self = .string(value)
    }

    init(booleanLiteral value: Bool) {
        self = .bool(value)
    }

    init(integerLiteral value: Int64) {
        self = .integer(value)
    }
}

extension JSONValue: ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral {
    init(arrayLiteral elements: JSONValue...) {
        self = .array(elements)
    }

    init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

extension JSONValue {
    /// The whitespace style used when serializing.
    enum Style {
        /// Two-space indentation, one member per line, like httpbin's pretty responses.
        case pretty
        /// One line with `", "` and `": "` separators, like Python's `json.dumps` defaults.
        case singleLine
    }

    /// Serializes the value into UTF-8 bytes, sorting object keys.
    ///
    /// Non-ASCII characters are written as raw UTF-8; quotes, backslashes and control characters are
    /// escaped.
    func serialized(style: Style = .pretty) -> [UInt8] {
        var output: [UInt8] = []
        self.write(into: &output, style: style, depth: 0)
        return output
    }

    /// Serializes the value into a `ByteBuffer`, followed by a newline as Flask's `jsonify` writes it.
    func byteBuffer(style: Style = .pretty, trailingNewline: Bool = true) -> ByteBuffer {
        var bytes = self.serialized(style: style)
        if trailingNewline {
            bytes.append(UInt8(ascii: "\n"))
        }
        return ByteBuffer(bytes: bytes)
    }

    private func write(into output: inout [UInt8], style: Style, depth: Int) {
        switch self {
        case .null:
            output.append(contentsOf: "null".utf8)
        case .bool(let value):
            output.append(contentsOf: (value ? "true" : "false").utf8)
        case .integer(let value):
            output.append(contentsOf: String(value).utf8)
        case .double(let value):
            Self.writeDouble(value, into: &output)
        case .string(let value):
            Self.writeString(value, into: &output)
        case .array(let elements):
            guard !elements.isEmpty else {
                output.append(contentsOf: "[]".utf8)
                return
            }
            output.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 {
                    Self.writeSeparator(into: &output, style: style)
                }
                Self.writeNewline(into: &output, style: style, depth: depth + 1)
                element.write(into: &output, style: style, depth: depth + 1)
            }
            Self.writeNewline(into: &output, style: style, depth: depth)
            output.append(UInt8(ascii: "]"))
        case .object(let members):
            guard !members.isEmpty else {
                output.append(contentsOf: "{}".utf8)
                return
            }
            output.append(UInt8(ascii: "{"))
            let sortedKeys = members.keys.sorted { lhs, rhs in
                lhs.unicodeScalars.lexicographicallyPrecedes(rhs.unicodeScalars) { $0.value < $1.value }
            }
            for (index, key) in sortedKeys.enumerated() {
                if index > 0 {
                    Self.writeSeparator(into: &output, style: style)
                }
                Self.writeNewline(into: &output, style: style, depth: depth + 1)
                Self.writeString(key, into: &output)
                output.append(contentsOf: ": ".utf8)
                members[key, default: .null].write(into: &output, style: style, depth: depth + 1)
            }
            Self.writeNewline(into: &output, style: style, depth: depth)
            output.append(UInt8(ascii: "}"))
        }
    }

    private static func writeSeparator(into output: inout [UInt8], style: Style) {
        switch style {
        case .pretty:
            output.append(UInt8(ascii: ","))
        case .singleLine:
            output.append(contentsOf: ", ".utf8)
        }
    }

    private static func writeNewline(into output: inout [UInt8], style: Style, depth: Int) {
        guard case .pretty = style else { return }
        output.append(UInt8(ascii: "\n"))
        output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: depth * 2))
    }

    private static func writeDouble(_ value: Double, into output: inout [UInt8]) {
        if value.isNaN {
            output.append(contentsOf: "NaN".utf8)
        } else if value.isInfinite {
            output.append(contentsOf: (value < 0 ? "-Infinity" : "Infinity").utf8)
        } else {
            output.append(contentsOf: value.description.utf8)
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    private static func writeString(_ value: String, into output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""):
                output.append(contentsOf: "\\\"".utf8)
            case UInt8(ascii: "\\"):
                output.append(contentsOf: "\\\\".utf8)
            case UInt8(ascii: "\n"):
                output.append(contentsOf: "\\n".utf8)
            case UInt8(ascii: "\r"):
                output.append(contentsOf: "\\r".utf8)
            case UInt8(ascii: "\t"):
                output.append(contentsOf: "\\t".utf8)
            case 0x08:
                output.append(contentsOf: "\\b".utf8)
            case 0x0C:
                output.append(contentsOf: "\\f".utf8)
            case 0x00..<0x20:
                output.append(contentsOf: "\\u00".utf8)
                output.append(Self.hexDigits[Int(byte >> 4)])
                output.append(Self.hexDigits[Int(byte & 0x0F)])
            default:
                output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
    }
}
