import Foundation

/// Text helpers shared by the endpoints: strict UTF-8 decoding, percent-decoding, base64 and the
/// "JSON safe" rendering httpbin uses for bodies that are not text.
enum UTF8Text {
    /// Decodes `bytes` as UTF-8, returning `nil` if they are not valid UTF-8.
    static func decode(_ bytes: some Collection<UInt8>) -> String? {
        let string = String(decoding: bytes, as: UTF8.self)
        // Decoding replaces invalid sequences with U+FFFD, so a lossless round trip means valid input.
        guard string.utf8.elementsEqual(bytes) else { return nil }
        return string
    }

    /// Renders bytes as httpbin's `json_safe` does: the text itself when it is valid UTF-8, otherwise
    /// a `data:` URL with the base64-encoded bytes.
    static func jsonSafe(_ bytes: [UInt8], contentType: String = "application/octet-stream") -> String {
        if let text = Self.decode(bytes) {
            return text
        }
        return "data:\(contentType);base64,\(Data(bytes).base64EncodedString())"
    }

    /// Percent-decodes `text` as an `application/x-www-form-urlencoded` component.
    ///
    /// `+` becomes a space when `plusAsSpace` is set; malformed escapes are kept literally and bytes
    /// that are not UTF-8 are replaced, as Werkzeug does.
    static func percentDecode(_ text: Substring, plusAsSpace: Bool) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        let utf8 = Array(text.utf8)
        var index = 0
        while index < utf8.count {
            let byte = utf8[index]
            if byte == UInt8(ascii: "%"), index + 2 < utf8.count,
                let high = Self.hexValue(utf8[index + 1]), let low = Self.hexValue(utf8[index + 2])
            {
                bytes.append(high << 4 | low)
                index += 3
            } else if byte == UInt8(ascii: "+"), plusAsSpace {
                bytes.append(UInt8(ascii: " "))
                index += 1
            } else {
                bytes.append(byte)
                index += 1
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Decodes URL-safe (or standard) base64, tolerating missing padding; `nil` when invalid.
    static func decodeBase64URL(_ text: some StringProtocol) -> [UInt8]? {
        var normalized = String(text).replacingOccurrences(of: "-", with: "+")
            .replacingOccurrences(of: "_", with: "/")
        let remainder = normalized.utf8.count % 4
        if remainder == 1 {
            return nil
        }
        if remainder > 0 {
            normalized += String(repeating: "=", count: 4 - remainder)
        }
        return Data(base64Encoded: normalized).map { Array($0) }
    }

    /// Base64-encodes bytes with the standard alphabet and padding.
    static func base64(_ bytes: some Sequence<UInt8>) -> String {
        Data(bytes).base64EncodedString()
    }

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// Escapes text for inclusion in HTML, as Werkzeug's `escape` does.
    static func htmlEscape(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&#34;"
            case "'": result += "&#39;"
            default: result.append(character)
            }
        }
        return result
    }
}
