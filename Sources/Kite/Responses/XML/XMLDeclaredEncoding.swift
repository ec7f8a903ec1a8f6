import Foundation

/// Keeps libxml2's iconv conversions away from `XMLParser`: libxml2 2.9.14's push parser, which
/// swift-corelibs-foundation's `XMLParser` drives, dereferences a null pointer when bytes do not convert from an
/// encoding it reads through iconv (`Shift_JIS`, `EUC-JP`, `UTF-32`, `UTF-7`, EBCDIC…) and crashes the process
/// (found by Kite's `xmlDocument` fuzz target; its own UTF-8, UTF-16, ISO-8859-1 and ASCII readers do not).
///
/// So a body in one of those is given to the parser as is; a body declaring another encoding that Foundation reads
/// (``Charset``) is converted to UTF-8 first, with its declaration saying so; any other is refused.
enum XMLDeclaredEncoding {
    /// Encodings libxml2 reads without iconv.
    private static let builtIn: Set<String> = [
        "utf-8", "utf8", "utf-16", "utf-16le", "utf-16be", "iso-8859-1", "iso_8859-1", "latin1", "us-ascii", "ascii",
    ]

    /// `data` as libxml2 can read it safely.
    ///
    /// - Throws: ``KiteError`` with code `responseSerializationFailed` when the body is UCS-4 or EBCDIC, declares
    ///   an encoding Kite does not read, or is not valid in the encoding it declares.
    static func readable(_ data: Data) throws(KiteError) -> Data {
        let bytes = [UInt8](data.prefix(256))
        // The first bytes by which libxml2 detects UCS-4 and EBCDIC (XML 1.0 appendix F), read through iconv.
        let signatures: [[UInt8]] = [
            [0, 0, 0, 0x3C], [0x3C, 0, 0, 0], [0, 0, 0x3C, 0], [0, 0x3C, 0, 0], [0, 0, 0xFE, 0xFF], [0xFF, 0xFE, 0, 0],
            [0x4C, 0x6F, 0xA7, 0x94],
        ]
        if signatures.contains(where: { bytes.starts(with: $0) }) {
            throw Self.failure("the body is XML in UCS-4 or EBCDIC, which Kite does not read; send UTF-8 or UTF-16")
        }
        guard let (name, range) = Self.declaredEncoding(in: bytes), !Self.builtIn.contains(name.lowercased()) else {
            return data
        }
        guard let encoding = Charset.encoding(named: name), encoding != .utf32, encoding != .utf32BigEndian,
            encoding != .utf32LittleEndian
        else {
            throw Self.failure(
                "the XML declares the encoding \"\(name)\", which Kite does not read (it reads UTF-8, UTF-16, "
                    + "ISO-8859-1 and the single- and multi-byte encodings Foundation names)"
            )
        }
        guard let text = String(data: data, encoding: encoding) else {
            throw Self.failure("the body is not valid \(name), the encoding its XML declaration names")
        }
        var converted = Data(bytes[..<range.lowerBound])
        converted.append(contentsOf: "UTF-8".utf8)
        let head = String(decoding: bytes[..<range.upperBound], as: UTF8.self)
        converted.append(contentsOf: text.dropFirst(head.count).utf8)
        return converted
    }

    /// The encoding an ASCII XML declaration at the start of `bytes` (after a UTF-8 byte order mark) names, and
    /// where its name lies. An unclosed declaration counts: libxml2 switches encoding as it reads the name.
    private static func declaredEncoding(in bytes: [UInt8]) -> (String, Range<Int>)? {
        let start = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        guard bytes[start...].starts(with: Array("<?xml".utf8)) else { return nil }
        let end = bytes[start...].firstIndex(of: UInt8(ascii: ">")) ?? bytes.endIndex
        let declaration = bytes[start..<end]
        let key = Array("encoding".utf8)
        guard let keyStart = declaration.indices.first(where: { declaration[$0...].starts(with: key) }) else {
            return nil
        }
        var index = keyStart + key.count
        func skipSpaces() {
            while index < end, [0x20, 0x09, 0x0D, 0x0A].contains(bytes[index]) { index += 1 }
        }
        skipSpaces()
        guard index < end, bytes[index] == UInt8(ascii: "=") else { return nil }
        index += 1
        skipSpaces()
        guard index < end, bytes[index] == UInt8(ascii: "\"") || bytes[index] == UInt8(ascii: "'") else { return nil }
        let quote = bytes[index]
        let nameStart = index + 1
        guard let nameEnd = bytes[nameStart..<end].firstIndex(of: quote), nameEnd > nameStart,
            bytes[nameStart..<nameEnd].allSatisfy({ $0 < 0x80 })
        else { return nil }
        return (String(decoding: bytes[nameStart..<nameEnd], as: UTF8.self), nameStart..<nameEnd)
    }

    private static func failure(_ message: String) -> KiteError {
        KiteError(code: .responseSerializationFailed, message: message)
    }
}
