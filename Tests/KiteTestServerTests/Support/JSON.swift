import Foundation

/// A JSON document decoded independently of the server's own JSON code, for exact comparisons.
enum JSON: Decodable, Equatable, Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSON])
    case object([String: JSON])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSON].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSON].self))
        }
    }

    /// Decodes `bytes` as a JSON document.
    init(bytes: some Collection<UInt8>) throws {
        self = try JSONDecoder().decode(JSON.self, from: Data(bytes))
    }

    /// The member `key` of an object, or `nil`.
    subscript(key: String) -> JSON? {
        guard case .object(let members) = self else { return nil }
        return members[key]
    }

    /// The element at `index` of an array, or `nil`.
    subscript(index: Int) -> JSON? {
        guard case .array(let elements) = self, elements.indices.contains(index) else { return nil }
        return elements[index]
    }

    /// The text of a string value, or `nil`.
    var string: String? {
        guard case .string(let value) = self else { return nil }
        return value
    }

    /// The members of an object, or `nil`.
    var object: [String: JSON]? {
        guard case .object(let members) = self else { return nil }
        return members
    }
}

extension JSON: ExpressibleByStringLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral
{
    init(stringLiteral value: String) { self = .string(value) }
    init(booleanLiteral value: Bool) { self = .bool(value) }
    init(integerLiteral value: Int) { self = .number(Double(value)) }
    init(floatLiteral value: Double) { self = .number(value) }
    init(arrayLiteral elements: JSON...) { self = .array(elements) }
    init(dictionaryLiteral elements: (String, JSON)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
    init(nilLiteral: ()) { self = .null }
}
