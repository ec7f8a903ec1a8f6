import Foundation

// The tree an `Encodable` value is encoded into, and the `Encoder` that builds it. Containers write
// into shared `FormSlot` references, so nested containers and super encoders fill in their parent's
// tree as they go, the way `JSONEncoder` does.

/// A place in the tree that holds one value once something is encoded into it.
final class FormSlot {
    var node: FormNode?

    init(_ node: FormNode? = nil) {
        self.node = node
    }

    /// The keyed object here, replacing whatever else was here.
    func object() -> FormObject {
        if case .object(let object) = self.node {
            return object
        }
        let object = FormObject()
        self.node = .object(object)
        return object
    }

    /// The array here, replacing whatever else was here.
    func array() -> FormArray {
        if case .array(let array) = self.node {
            return array
        }
        let array = FormArray()
        self.node = .array(array)
        return array
    }
}

/// A value in the tree.
enum FormNode {
    case string(String)
    case array(FormArray)
    case object(FormObject)

    var kindDescription: String {
        switch self {
        case .string: "a single value"
        case .array: "an unkeyed list"
        case .object: "keyed data"
        }
    }
}

/// An ordered list of slots.
final class FormArray {
    private(set) var slots: [FormSlot] = []

    /// Whether the list came from a `Set`, whose order is its hash order; the serializer sorts it.
    var isUnordered = false

    /// A new slot at the end.
    func append(_ node: FormNode? = nil) -> FormSlot {
        let slot = FormSlot(node)
        self.slots.append(slot)
        return slot
    }
}

/// Keys and their slots, in the order the keys were first encoded.
final class FormObject {
    private(set) var entries: [(key: String, slot: FormSlot)] = []
    private var indices: [String: Int] = [:]

    /// The slot for `key`, created at the end if the key is new.
    func slot(forKey key: String) -> FormSlot {
        if let index = self.indices[key] {
            return self.entries[index].slot
        }
        let slot = FormSlot()
        self.indices[key] = self.entries.count
        self.entries.append((key, slot))
        return slot
    }
}

/// The strategies the containers need.
struct FormEncodingOptions {
    let boolEncoding: URLEncodedFormEncoder.BoolEncoding
    let dataEncoding: URLEncodedFormEncoder.DataEncoding
    let dateEncoding: URLEncodedFormEncoder.DateEncoding
    let nilEncoding: URLEncodedFormEncoder.NilEncoding
}

/// An encoding failure with the key path where it happened.
struct FormEncodingFailure: Error, CustomStringConvertible {
    let codingPath: [any CodingKey]
    let reason: String
    let underlyingError: (any Error)?

    var description: String {
        "could not encode the value \(EncodingSupport.location(FormValueEncoding.path(self.codingPath))): \(self.reason)"
    }
}

/// The coding key of an element of an unkeyed container.
struct FormIndexKey: CodingKey {
    let index: Int

    init(_ index: Int) {
        self.index = index
    }

    init?(stringValue: String) {
        guard let index = Int(stringValue) else { return nil }
        self.index = index
    }

    init?(intValue: Int) {
        self.index = intValue
    }

    var stringValue: String { String(self.index) }
    var intValue: Int? { self.index }
}

/// A coding key with any name, for `super`.
struct FormNamedKey: CodingKey {
    let stringValue: String

    init(_ stringValue: String) {
        self.stringValue = stringValue
    }

    init?(stringValue: String) {
        self.stringValue = stringValue
    }

    init?(intValue: Int) {
        self.stringValue = String(intValue)
    }

    var intValue: Int? { nil }
}

/// Encodes one value into a slot, handling the types with strategies.
enum FormValueEncoding {
    static func encode(
        _ value: some Encodable,
        into slot: FormSlot,
        codingPath: [any CodingKey],
        options: FormEncodingOptions
    ) throws {
        do {
            switch value {
            case let date as Date:
                if let text = try self.strategy(at: codingPath, { try options.dateEncoding.encode(date) }) {
                    slot.node = .string(text)
                    return
                }
            case let data as Data:
                if let text = try self.strategy(at: codingPath, { try options.dataEncoding.encode(data) }) {
                    slot.node = .string(text)
                    return
                }
            case let decimal as Decimal:
                slot.node = .string(decimal.description)
                return
            case let url as URL:
                slot.node = .string(url.absoluteString)
                return
            default:
                break
            }
            try value.encode(to: FormEncoderImplementation(slot: slot, codingPath: codingPath, options: options))
            if value is any UnorderedSetValue, case .array(let array) = slot.node {
                array.isUnordered = true
            }
        } catch let error as FormEncodingFailure {
            throw error
        } catch let error as EncodingError {
            throw self.failure(from: error, codingPath: codingPath)
        } catch {
            throw FormEncodingFailure(
                codingPath: codingPath,
                reason: "encode(to:) of \(EncodingSupport.typeName(of: value)) threw \(error)",
                underlyingError: error
            )
        }
    }

    private static func strategy(at codingPath: [any CodingKey], _ body: () throws -> String?) throws -> String? {
        do {
            return try body()
        } catch {
            throw FormEncodingFailure(
                codingPath: codingPath,
                reason: "the custom encoding closure threw \(error)",
                underlyingError: error
            )
        }
    }

    private static func failure(from error: EncodingError, codingPath: [any CodingKey]) -> FormEncodingFailure {
        switch error {
        case .invalidValue(let value, let context):
            FormEncodingFailure(
                codingPath: context.codingPath.isEmpty ? codingPath : context.codingPath,
                reason: "value of type \(EncodingSupport.typeName(of: value)) is invalid: \(context.debugDescription)",
                underlyingError: error
            )
        @unknown default:
            FormEncodingFailure(codingPath: codingPath, reason: "\(error)", underlyingError: error)
        }
    }

    /// A coding path as path components for messages.
    ///
    /// Array indices are recognised from this encoder's keys and from `JSONEncoder`'s (`Index 2`).
    static func path(_ codingPath: [any CodingKey]) -> [EncodingSupport.PathComponent] {
        codingPath.map { key in
            if let index = key as? FormIndexKey {
                return .index(index.index)
            }
            if let index = key.intValue, key.stringValue == "Index \(index)" {
                return .index(index)
            }
            return .key(key.stringValue)
        }
    }
}

/// The `Encoder` that `encode(to:)` sees.
struct FormEncoderImplementation: Encoder {
    let slot: FormSlot
    let codingPath: [any CodingKey]
    let options: FormEncodingOptions

    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(
            FormKeyedContainer<Key>(object: self.slot.object(), codingPath: self.codingPath, options: self.options)
        )
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        FormUnkeyedContainer(array: self.slot.array(), codingPath: self.codingPath, options: self.options)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        FormSingleValueContainer(slot: self.slot, codingPath: self.codingPath, options: self.options)
    }
}

struct FormKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let object: FormObject
    let codingPath: [any CodingKey]
    let options: FormEncodingOptions

    private func set(_ text: String, forKey key: Key) {
        self.object.slot(forKey: key.stringValue).node = .string(text)
    }

    mutating func encodeNil(forKey key: Key) throws {
        guard let text = self.options.nilEncoding.encodeNil() else { return }
        self.set(text, forKey: key)
    }

    mutating func encode(_ value: Bool, forKey key: Key) throws {
        self.set(self.options.boolEncoding.encode(value: value), forKey: key)
    }

    mutating func encode(_ value: String, forKey key: Key) throws { self.set(value, forKey: key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { self.set(String(value), forKey: key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { self.set(String(value), forKey: key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { self.set(String(value), forKey: key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { self.set(String(value), forKey: key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { self.set(String(value), forKey: key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { self.set(String(value), forKey: key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { self.set(String(value), forKey: key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { self.set(String(value), forKey: key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { self.set(String(value), forKey: key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { self.set(String(value), forKey: key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { self.set(String(value), forKey: key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { self.set(String(value), forKey: key) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try FormValueEncoding.encode(
            value,
            into: self.object.slot(forKey: key.stringValue),
            codingPath: self.codingPath + [key],
            options: self.options
        )
    }

    // Synthesized `encode(to:)` skips `nil` optionals with `encodeIfPresent`; routing them to
    // `encodeNil(forKey:)` lets `NilEncoding` decide, as Alamofire does.
    mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws { try self.encodeOrNil(value, key) }
    mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws { try self.encodeOrNil(value, key) }
    mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws { try self.encodeOrNil(value, key) }
    mutating func encodeIfPresent(_ value: Float?, forKey key: Key) throws { try self.encodeOrNil(value, key) }
    mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws { try self.encodeOrNil(value, key) }
    mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) throws { try self.encodeOrNil(value, key) }
    mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) throws { try self.encodeOrNil(value, key) }
    mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) throws { try self.encodeOrNil(value, key) }
    mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws { try self.encodeOrNil(value, key) }
    mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) throws { try self.encodeOrNil(value, key) }
    mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) throws { try self.encodeOrNil(value, key) }
    mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) throws { try self.encodeOrNil(value, key) }
    mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) throws { try self.encodeOrNil(value, key) }
    mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws { try self.encodeOrNil(value, key) }

    mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
        try self.encodeOrNil(value, key)
    }

    private mutating func encodeOrNil<T: Encodable>(_ value: T?, _ key: Key) throws {
        if let value {
            try self.encode(value, forKey: key)
        } else {
            try self.encodeNil(forKey: key)
        }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type,
        forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(
            FormKeyedContainer<NestedKey>(
                object: self.object.slot(forKey: key.stringValue).object(),
                codingPath: self.codingPath + [key],
                options: self.options
            )
        )
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        FormUnkeyedContainer(
            array: self.object.slot(forKey: key.stringValue).array(),
            codingPath: self.codingPath + [key],
            options: self.options
        )
    }

    mutating func superEncoder() -> any Encoder {
        let key = FormNamedKey("super")
        return FormEncoderImplementation(
            slot: self.object.slot(forKey: key.stringValue),
            codingPath: self.codingPath + [key],
            options: self.options
        )
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        FormEncoderImplementation(
            slot: self.object.slot(forKey: key.stringValue),
            codingPath: self.codingPath + [key],
            options: self.options
        )
    }
}

struct FormUnkeyedContainer: UnkeyedEncodingContainer {
    let array: FormArray
    let codingPath: [any CodingKey]
    let options: FormEncodingOptions

    var count: Int { self.array.slots.count }

    private var nextPath: [any CodingKey] { self.codingPath + [FormIndexKey(self.count)] }

    private func append(_ text: String) {
        _ = self.array.append(.string(text))
    }

    mutating func encodeNil() throws {
        guard let text = self.options.nilEncoding.encodeNil() else { return }
        self.append(text)
    }

    mutating func encode(_ value: Bool) throws { self.append(self.options.boolEncoding.encode(value: value)) }
    mutating func encode(_ value: String) throws { self.append(value) }
    mutating func encode(_ value: Double) throws { self.append(String(value)) }
    mutating func encode(_ value: Float) throws { self.append(String(value)) }
    mutating func encode(_ value: Int) throws { self.append(String(value)) }
    mutating func encode(_ value: Int8) throws { self.append(String(value)) }
    mutating func encode(_ value: Int16) throws { self.append(String(value)) }
    mutating func encode(_ value: Int32) throws { self.append(String(value)) }
    mutating func encode(_ value: Int64) throws { self.append(String(value)) }
    mutating func encode(_ value: UInt) throws { self.append(String(value)) }
    mutating func encode(_ value: UInt8) throws { self.append(String(value)) }
    mutating func encode(_ value: UInt16) throws { self.append(String(value)) }
    mutating func encode(_ value: UInt32) throws { self.append(String(value)) }
    mutating func encode(_ value: UInt64) throws { self.append(String(value)) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        let path = self.nextPath
        try FormValueEncoding.encode(value, into: self.array.append(), codingPath: path, options: self.options)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type
    ) -> KeyedEncodingContainer<NestedKey> {
        let path = self.nextPath
        return KeyedEncodingContainer(
            FormKeyedContainer<NestedKey>(object: self.array.append().object(), codingPath: path, options: self.options)
        )
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let path = self.nextPath
        return FormUnkeyedContainer(array: self.array.append().array(), codingPath: path, options: self.options)
    }

    mutating func superEncoder() -> any Encoder {
        let path = self.nextPath
        return FormEncoderImplementation(slot: self.array.append(), codingPath: path, options: self.options)
    }
}

struct FormSingleValueContainer: SingleValueEncodingContainer {
    let slot: FormSlot
    let codingPath: [any CodingKey]
    let options: FormEncodingOptions

    private func set(_ text: String) {
        self.slot.node = .string(text)
    }

    mutating func encodeNil() throws {
        guard let text = self.options.nilEncoding.encodeNil() else {
            self.slot.node = nil
            return
        }
        self.set(text)
    }

    mutating func encode(_ value: Bool) throws { self.set(self.options.boolEncoding.encode(value: value)) }
    mutating func encode(_ value: String) throws { self.set(value) }
    mutating func encode(_ value: Double) throws { self.set(String(value)) }
    mutating func encode(_ value: Float) throws { self.set(String(value)) }
    mutating func encode(_ value: Int) throws { self.set(String(value)) }
    mutating func encode(_ value: Int8) throws { self.set(String(value)) }
    mutating func encode(_ value: Int16) throws { self.set(String(value)) }
    mutating func encode(_ value: Int32) throws { self.set(String(value)) }
    mutating func encode(_ value: Int64) throws { self.set(String(value)) }
    mutating func encode(_ value: UInt) throws { self.set(String(value)) }
    mutating func encode(_ value: UInt8) throws { self.set(String(value)) }
    mutating func encode(_ value: UInt16) throws { self.set(String(value)) }
    mutating func encode(_ value: UInt32) throws { self.set(String(value)) }
    mutating func encode(_ value: UInt64) throws { self.set(String(value)) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try FormValueEncoding.encode(value, into: self.slot, codingPath: self.codingPath, options: self.options)
    }
}
