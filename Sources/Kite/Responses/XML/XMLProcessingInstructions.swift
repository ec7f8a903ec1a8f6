import Foundation

/// Gives every processing instruction without data (`<?target?>`) an empty one (`<?target ?>`), which means the
/// same: swift-corelibs-foundation's `XMLParser` reads the data libxml2 reports for it, a null pointer there, as
/// a C string and crashes the process (seen with Swift 6.3.1; found by Kite's `xmlParser` fuzz target). Comments
/// and CDATA sections are left as they are; an entity value that makes such an instruction through character
/// references (`&#60;?p?>`) is rewritten to the same replacement text with the space.
enum XMLProcessingInstructions {
    /// `data` with every such instruction given empty data, or `data` itself when it has none.
    static func withEmptyData(_ data: Data) -> Data {
        let bytes = [UInt8](data)
        guard let rewritten = self.rewrite(bytes[...]) else { return data }
        return Data(rewritten)
    }

    /// The bytes rewritten, or `nil` when nothing changed.
    static func rewrite(_ bytes: ArraySlice<UInt8>) -> [UInt8]? {
        var output: [UInt8] = []
        var changed = false
        var copied = bytes.startIndex
        var index = bytes.startIndex
        var inDeclaration = false
        while index < bytes.endIndex {
            let byte = bytes[index]
            if inDeclaration, byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                let end = bytes[(index + 1)...].firstIndex(of: byte) ?? bytes.endIndex
                if let literal = Self.rewriteLiteral(bytes[(index + 1)..<end], quote: byte) {
                    output += bytes[copied...index]
                    output += literal
                    copied = end
                    changed = true
                }
                index = min(end + 1, bytes.endIndex)
            } else if inDeclaration, byte == UInt8(ascii: ">") || byte == UInt8(ascii: "[") {
                inDeclaration = false
                index += 1
            } else if byte != UInt8(ascii: "<") {
                index += 1
            } else if Self.has("<!--", at: index, in: bytes) {
                index = Self.end(of: "-->", from: index + 4, in: bytes)
            } else if Self.has("<![CDATA[", at: index, in: bytes) {
                index = Self.end(of: "]]>", from: index + 9, in: bytes)
            } else if Self.has("<?", at: index, in: bytes) {
                var target = index + 2
                while target < bytes.endIndex, ![0x20, 0x09, 0x0D, 0x0A, UInt8(ascii: "?")].contains(bytes[target]) {
                    target += 1
                }
                if target > index + 2, Self.has("?>", at: target, in: bytes) {
                    output += bytes[copied..<target]
                    output.append(0x20)
                    copied = target
                    changed = true
                    index = target + 2
                } else {
                    index = Self.end(of: "?>", from: target, in: bytes)
                }
            } else {
                inDeclaration = Self.has("<!", at: index, in: bytes)
                index += 1
            }
        }
        guard changed else { return nil }
        output += bytes[copied...]
        return output
    }

    /// A declaration's quoted literal rewritten, or `nil` when it needs no change. An entity value's character
    /// references are expanded when it is declared, so the literal is read as that expansion: when it makes an
    /// instruction without data, the expansion rewritten is written back with `&`, `%` and the quote as
    /// references, which gives the same replacement text.
    private static func rewriteLiteral(_ literal: ArraySlice<UInt8>, quote: UInt8) -> [UInt8]? {
        guard Self.contains("&#", in: literal), let expanded = Self.expandingCharacterReferences(literal),
            let rewritten = Self.rewrite(expanded[...])
        else { return Self.rewrite(literal) }
        var output: [UInt8] = []
        for byte in rewritten {
            if byte == UInt8(ascii: "&") || byte == UInt8(ascii: "%") || byte == quote {
                output += Array("&#\(byte);".utf8)
            } else {
                output.append(byte)
            }
        }
        return output
    }

    /// `literal` with its character references (`&#60;`, `&#x3C;`) replaced by the characters' UTF-8, or `nil`
    /// when one is not a valid reference (the parser reports that itself).
    private static func expandingCharacterReferences(_ literal: ArraySlice<UInt8>) -> [UInt8]? {
        var output: [UInt8] = []
        var index = literal.startIndex
        while index < literal.endIndex {
            guard Self.has("&#", at: index, in: literal) else {
                output.append(literal[index])
                index += 1
                continue
            }
            guard let semicolon = literal[index...].firstIndex(of: UInt8(ascii: ";")) else { return nil }
            var digits = String(decoding: literal[(index + 2)..<semicolon], as: UTF8.self)
            var radix = 10
            if digits.hasPrefix("x") {
                digits.removeFirst()
                radix = 16
            }
            guard digits.count <= 8, let value = UInt32(digits, radix: radix), let scalar = Unicode.Scalar(value)
            else { return nil }
            output += Array(String(Character(scalar)).utf8)
            index = semicolon + 1
        }
        return output
    }

    private static func has(_ text: StaticString, at index: Int, in bytes: ArraySlice<UInt8>) -> Bool {
        let count = text.utf8CodeUnitCount
        guard bytes.endIndex - index >= count else { return false }
        for offset in 0..<count where bytes[index + offset] != text.utf8Start[offset] {
            return false
        }
        return true
    }

    private static func contains(_ text: StaticString, in bytes: ArraySlice<UInt8>) -> Bool {
        bytes.indices.contains { Self.has(text, at: $0, in: bytes) }
    }

    /// The index after the first `text` from `start`, or the end.
    private static func end(of text: StaticString, from start: Int, in bytes: ArraySlice<UInt8>) -> Int {
        var index = start
        while index < bytes.endIndex {
            if Self.has(text, at: index, in: bytes) { return index + text.utf8CodeUnitCount }
            index += 1
        }
        return bytes.endIndex
    }
}
