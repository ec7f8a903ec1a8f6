import Foundation
import Kite

/// Turns responses into terminal text: status line, header fields, body (JSON pretty-printed).
enum ResponsePrinter {
    static func statusLine(_ response: HTTPResponse) -> String {
        let reason = response.status.reasonPhrase
        return reason.isEmpty ? "HTTP \(response.status.code)" : "HTTP \(response.status.code) \(reason)"
    }

    static func headers(_ fields: HTTPFields) -> String {
        fields.map { "\($0.name.rawName): \($0.value)" }.joined(separator: "\n")
    }

    /// The body as text: pretty JSON, text, or a note about binary data.
    static func body(_ data: Data, contentType: String?, limit: Int? = nil) -> String {
        if data.isEmpty { return "" }
        if let json = try? JSONDecoder().decode(JSONValue.self, from: data),
            contentType?.lowercased().contains("json") == true || data.first == UInt8(ascii: "{")
                || data.first == UInt8(ascii: "[")
        {
            return Self.truncated(Self.prettyJSON(json), limit: limit)
        }
        if let text = String(data: data, encoding: .utf8),
            !text.unicodeScalars.contains(where: { $0.value < 0x20 && $0 != "\n" && $0 != "\r" && $0 != "\t" })
        {
            return Self.truncated(text, limit: limit)
        }
        return "[binary data: \(data.count) bytes]"
    }

    /// Two-space indented JSON with sorted keys; empty containers stay on one line.
    static func prettyJSON(_ json: JSONValue, indent: String = "") -> String {
        let inner = indent + "  "
        switch json {
        case .array(let elements):
            if elements.isEmpty { return "[]" }
            let lines = elements.map { inner + Self.prettyJSON($0, indent: inner) }
            return "[\n" + lines.joined(separator: ",\n") + "\n" + indent + "]"
        case .object(let members):
            if members.isEmpty { return "{}" }
            let lines = members.sorted { $0.key < $1.key }.map { key, value in
                inner + JSONValue.string(key).description + ": " + Self.prettyJSON(value, indent: inner)
            }
            return "{\n" + lines.joined(separator: ",\n") + "\n" + indent + "}"
        default:
            return json.description
        }
    }

    private static func truncated(_ text: String, limit: Int?) -> String {
        guard let limit, text.count > limit else { return text }
        return String(text.prefix(limit)) + "… (\(text.count - limit) more characters)"
    }
}
