import Foundation
import Kite

/// httpie-style request items: `key=value` (JSON string field), `key:=json` (raw JSON field),
/// `key==value` (query parameter) and `Header:value` (header field).
///
/// The first separator in an item decides its kind; at the same position the longer separator
/// wins, so `a:=1` is JSON and `X-A:b=c` a header with value `b=c`. A backslash escapes a
/// separator character (`a\=b=c` is the field `a=b` with value `c`).
struct RequestItems: Equatable {
    var query: [(String, String)] = []
    var headers: [(String, String)] = []
    var fields: [(String, JSONValue)] = []

    static func == (lhs: RequestItems, rhs: RequestItems) -> Bool {
        lhs.query.elementsEqual(rhs.query, by: ==) && lhs.headers.elementsEqual(rhs.headers, by: ==)
            && lhs.fields.elementsEqual(rhs.fields, by: ==)
    }

    enum Separator: String, CaseIterable {
        case rawJSON = ":="
        case query = "=="
        case field = "="
        case header = ":"
    }

    struct ParseError: Error, CustomStringConvertible, Equatable {
        let description: String
    }

    /// Parses the items in order.
    ///
    /// - Throws: ``ParseError`` naming the item that has no separator, an empty key, or invalid JSON.
    init(parsing items: [String]) throws(ParseError) {
        for item in items {
            let (key, separator, value) = try Self.split(item)
            guard !key.isEmpty else {
                throw ParseError(description: "item \"\(item)\" has an empty name before \"\(separator.rawValue)\"")
            }
            switch separator {
            case .query:
                self.query.append((key, value))
            case .header:
                self.headers.append((key, value))
            case .field:
                self.fields.append((key, .string(value)))
            case .rawJSON:
                guard let json = try? JSONDecoder().decode(JSONValue.self, from: Data(value.utf8)) else {
                    throw ParseError(description: "item \"\(item)\": \(value) is not valid JSON")
                }
                self.fields.append((key, json))
            }
        }
    }

    /// The JSON object of the data fields, later fields replacing earlier ones with the same name.
    var jsonBody: [String: JSONValue]? {
        guard !self.fields.isEmpty else { return nil }
        return Dictionary(self.fields, uniquingKeysWith: { _, last in last })
    }

    private static func split(_ item: String) throws(ParseError) -> (String, Separator, String) {
        var key = ""
        var index = item.startIndex
        while index < item.endIndex {
            let character = item[index]
            if character == "\\", item.index(after: index) < item.endIndex {
                key.append(item[item.index(after: index)])
                index = item.index(index, offsetBy: 2)
                continue
            }
            let rest = item[index...]
            if let separator = Separator.allCases.first(where: { rest.hasPrefix($0.rawValue) }) {
                let value = String(item[item.index(index, offsetBy: separator.rawValue.count)...])
                return (key, separator, value)
            }
            key.append(character)
            index = item.index(after: index)
        }
        throw ParseError(
            description:
                "item \"\(item)\" has none of the separators = := == : (key=value, key:=json, key==query, Header:value)"
        )
    }
}
