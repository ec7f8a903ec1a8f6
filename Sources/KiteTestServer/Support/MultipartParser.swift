/// Parses `multipart/form-data` bodies into form fields and files, as httpbin reports them.
struct MultipartParser {
    /// One part of a multipart body.
    struct Part {
        var name: String
        var filename: String?
        var contentType: String?
        var body: ArraySlice<UInt8>
    }

    enum ParseError: Error {
        case missingBoundary
        case malformed
    }

    private static let crlf: [UInt8] = [0x0D, 0x0A]

    /// Splits `body` into its parts using `boundary` (from the Content-Type's `boundary` parameter).
    static func parse(_ body: [UInt8], boundary: String) throws(ParseError) -> [Part] {
        guard !boundary.isEmpty else { throw .missingBoundary }
        let delimiter = Array("--\(boundary)".utf8)
        let partSeparator = Self.crlf + delimiter
        guard var position = Self.find(delimiter, in: body, from: 0) else { throw .malformed }
        position += delimiter.count
        var parts: [Part] = []
        while true {
            // "--" after a delimiter closes the body.
            if body[position...].starts(with: [UInt8(ascii: "-"), UInt8(ascii: "-")]) {
                return parts
            }
            // Skip transport padding and the line break after the delimiter.
            while position < body.count, body[position] == UInt8(ascii: " ") || body[position] == 0x09 {
                position += 1
            }
            guard body[position...].starts(with: Self.crlf) else { throw .malformed }
            position += 2
            // A part with no headers has its blank line right after the delimiter line.
            let headers: ArraySlice<UInt8>
            let bodyStart: Int
            if body[position...].starts(with: Self.crlf) {
                headers = []
                bodyStart = position + 2
            } else {
                guard let headerEnd = Self.find(Self.crlf + Self.crlf, in: body, from: position) else {
                    throw .malformed
                }
                headers = body[position..<headerEnd]
                bodyStart = headerEnd + 4
            }
            guard let bodyEnd = Self.find(partSeparator, in: body, from: bodyStart) else { throw .malformed }
            if let part = try Self.makePart(headers: headers, body: body[bodyStart..<bodyEnd]) {
                parts.append(part)
            }
            position = bodyEnd + partSeparator.count
        }
    }

    private static func makePart(headers: ArraySlice<UInt8>, body: ArraySlice<UInt8>) throws(ParseError) -> Part? {
        guard let headerText = UTF8Text.decode(headers) else { throw .malformed }
        var disposition: HeaderParameters?
        var contentType: String?
        for line in headerText.split(separator: "\r\n") {
            guard let colon = line.firstIndex(of: ":") else { throw .malformed }
            let name = line[..<colon].trimmingSpaces().lowercased()
            let value = line[line.index(after: colon)...].trimmingSpaces()
            switch name {
            case "content-disposition":
                disposition = HeaderParameters(value)
            case "content-type":
                contentType = String(value)
            default:
                break
            }
        }
        // Parts without a name cannot be reported; Werkzeug skips them too.
        guard let disposition, let name = disposition.parameters["name"] else { return nil }
        return Part(name: name, filename: disposition.parameters["filename"], contentType: contentType, body: body)
    }

    /// Finds the first occurrence of `needle` in `haystack` at or after `start`.
    static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard let first = needle.first, needle.count <= haystack.count else { return nil }
        var index = start
        let last = haystack.count - needle.count
        while index <= last {
            guard let candidate = haystack[index...last].firstIndex(of: first) else { return nil }
            if haystack[candidate..<candidate + needle.count].elementsEqual(needle) {
                return candidate
            }
            index = candidate + 1
        }
        return nil
    }
}

/// A header value with `; key=value` parameters, such as Content-Type or Content-Disposition.
struct HeaderParameters {
    /// The part before the first `;`, lowercased (for example `multipart/form-data`).
    var value: String
    /// Parameters by lowercased name, with quotes and backslash escapes removed.
    var parameters: [String: String] = [:]

    init(_ text: some StringProtocol) {
        var scalars = Substring(text).unicodeScalars[...]
        self.value = String(Self.readUntilSemicolon(&scalars)).trimmingSpaces().lowercased()
        while !scalars.isEmpty {
            scalars.removeFirst()  // the ";"
            let name = Self.read(&scalars) { $0 == "=" || $0 == ";" }
            let key = String(name).trimmingSpaces().lowercased()
            guard scalars.first == "=" else {
                continue
            }
            scalars.removeFirst()
            while scalars.first == " " {
                scalars.removeFirst()
            }
            let parameterValue: String
            if scalars.first == "\"" {
                scalars.removeFirst()
                var unquoted = String.UnicodeScalarView()
                while let scalar = scalars.popFirst(), scalar != "\"" {
                    if scalar == "\\", let escaped = scalars.popFirst() {
                        unquoted.append(escaped)
                    } else {
                        unquoted.append(scalar)
                    }
                }
                parameterValue = String(unquoted)
                _ = Self.readUntilSemicolon(&scalars)
            } else {
                parameterValue = String(Self.readUntilSemicolon(&scalars)).trimmingSpaces()
            }
            if !key.isEmpty {
                self.parameters[key] = parameterValue
            }
        }
    }

    private static func readUntilSemicolon(_ scalars: inout Substring.UnicodeScalarView) -> Substring {
        Self.read(&scalars) { $0 == ";" }
    }

    private static func read(
        _ scalars: inout Substring.UnicodeScalarView,
        until isTerminator: (Unicode.Scalar) -> Bool
    ) -> Substring {
        let end = scalars.firstIndex(where: isTerminator) ?? scalars.endIndex
        let result = Substring(scalars[..<end])
        scalars = scalars[end...]
        return result
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces and tabs.
    func trimmingSpaces() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let start = self.firstIndex(where: { !isSpace($0) }),
            let end = self.lastIndex(where: { !isSpace($0) })
        else { return "" }
        return String(self[start...end])
    }
}
