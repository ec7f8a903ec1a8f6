import Foundation
import HTTPTypes

/// Any property list as a `Sendable` value: what untyped property list serialization produces.
///
/// ```swift
/// let plist = try await session.request("https://example.com/settings.plist")
///     .serializingPropertyList(options: [])
///     .value
/// print(plist["name"]?.stringValue ?? "")
/// ```
public enum PropertyListValue: Sendable, Hashable {
    case string(String)
    /// An `<integer>` that fits `Int`.
    case int(Int)
    /// A `<real>`, or an `<integer>` too large for `Int`.
    case double(Double)
    case bool(Bool)
    case date(Date)
    case data(Data)
    case array([PropertyListValue])
    case dictionary([String: PropertyListValue])

    /// The value for `key` of a dictionary.
    public subscript(key: String) -> PropertyListValue? {
        guard case .dictionary(let dictionary) = self else { return nil }
        return dictionary[key]
    }

    /// The element at `index` of an array.
    public subscript(index: Int) -> PropertyListValue? {
        guard case .array(let array) = self, array.indices.contains(index) else { return nil }
        return array[index]
    }

    /// The string, if this is one.
    public var stringValue: String? {
        guard case .string(let value) = self else { return nil }
        return value
    }

    /// The integer, if this is one.
    public var intValue: Int? {
        guard case .int(let value) = self else { return nil }
        return value
    }

    /// The Boolean, if this is one.
    public var boolValue: Bool? {
        guard case .bool(let value) = self else { return nil }
        return value
    }

    /// Converts what `PropertyListSerialization` returns; `nil` for anything that is not a property list type.
    init?(foundationObject object: Any) {
        switch object {
        case let value as String: self = .string(value)
        case let value as Bool where Self.isBoolean(object): self = .bool(value)
        case let number as NSNumber: self = Self.number(number)
        case let value as Date: self = .date(value)
        case let value as Data: self = .data(value)
        case let array as [Any]:
            var elements: [PropertyListValue] = []
            elements.reserveCapacity(array.count)
            for element in array {
                guard let value = PropertyListValue(foundationObject: element) else { return nil }
                elements.append(value)
            }
            self = .array(elements)
        case let dictionary as [String: Any]:
            var members: [String: PropertyListValue] = [:]
            for (key, element) in dictionary {
                guard let value = PropertyListValue(foundationObject: element) else { return nil }
                members[key] = value
            }
            self = .dictionary(members)
        default:
            return nil
        }
    }

    /// Whether `object` is a Boolean (`<true/>` arrives as `Bool`, numbers as `NSNumber`).
    private static func isBoolean(_ object: Any) -> Bool {
        type(of: object) == Bool.self
    }

    private static func number(_ number: NSNumber) -> PropertyListValue {
        let type = String(cString: number.objCType)
        if type == "d" || type == "f" { return .double(number.doubleValue) }
        if type == "Q", number.uint64Value > UInt64(Int.max) { return .double(number.doubleValue) }
        return .int(number.intValue)
    }

    /// The value as `PropertyListSerialization` gives it.
    var foundationObject: Any {
        switch self {
        case .string(let value): value
        case .int(let value): value
        case .double(let value): value
        case .bool(let value): value
        case .date(let value): value
        case .data(let value): value
        case .array(let elements): elements.map(\.foundationObject)
        case .dictionary(let members): members.mapValues(\.foundationObject)
        }
    }
}

extension PropertyListValue: ResponseObjectConvertible {
    /// The value as `PropertyListSerialization` gives it: `[String: Any]`, `[Any]`, `String`, `Int`, `Double`,
    /// `Bool`, `Date` and `Data`.
    ///
    /// - Returns: The Foundation object.
    public func responseObject() -> Any? { self.foundationObject }
}

/// Parses the body as a property list (XML, binary or OpenStep) into a ``PropertyListValue``: AFNetworking's
/// `AFPropertyListResponseSerializer`, whose acceptance it keeps by default (`application/x-plist`, `200..<300`).
///
/// ```swift
/// let plist = try await session.request("https://example.com/settings.plist")
///     .serializingResponse(using: PropertyListResponseSerializer())
///     .value
/// ```
public struct PropertyListResponseSerializer: ResponseSerializer, ResponseAcceptingSerializer {
    public let emptyResponseCodes: Set<Int>
    public let emptyRequestMethods: Set<HTTPRequest.Method>
    /// Which responses are accepted; ``ResponseAcceptance/propertyList`` by default.
    public var acceptance: ResponseAcceptance
    /// The read options. Mutability options do not apply to ``PropertyListValue``.
    public var readOptions: PropertyListSerialization.ReadOptions

    /// Creates the serializer.
    ///
    /// - Parameters:
    ///   - readOptions: The read options.
    ///   - acceptance: Which responses are accepted; AFNetworking's by default.
    ///   - emptyResponseCodes: Status codes whose empty body gives an empty dictionary.
    ///   - emptyRequestMethods: Methods whose empty body gives an empty dictionary.
    public init(
        readOptions: PropertyListSerialization.ReadOptions = [],
        acceptance: ResponseAcceptance = .propertyList,
        emptyResponseCodes: Set<Int> = Self.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPRequest.Method> = Self.defaultEmptyRequestMethods
    ) {
        self.readOptions = readOptions
        self.acceptance = acceptance
        self.emptyResponseCodes = emptyResponseCodes
        self.emptyRequestMethods = emptyRequestMethods
    }

    public func serialize(
        request: HTTPRequest?,
        response: HTTPResponse?,
        data: Data?,
        error: KiteError?
    ) throws -> PropertyListValue {
        guard
            let data = try self.content(
                request: request,
                response: response,
                data: data,
                error: error,
                acceptance: self.acceptance,
                producing: "a property list"
            )
        else { return .dictionary([:]) }
        if BinaryPropertyList.holdsSet(data) {
            throw KiteError(
                code: .responseSerializationFailed,
                message: "the binary property list holds a set, which PropertyListValue has no case for",
                response: response
            )
        }
        let object: Any
        do {
            object = try PropertyListSerialization.propertyList(from: data, options: self.readOptions, format: nil)
        } catch {
            throw KiteError(
                code: .responseSerializationFailed,
                message: "the body is not a property list: \(error.localizedDescription)",
                response: response,
                underlyingError: error
            )
        }
        guard let value = PropertyListValue(foundationObject: object) else {
            throw KiteError(
                code: .responseSerializationFailed,
                message: "the property list holds a value of type \(type(of: object)) that is not a property list type",
                response: response
            )
        }
        return value
    }
}

/// Reads just enough of a binary property list (`bplist00`) to find its sets. Foundation on Linux crashes the
/// process bridging some sets (a `SEGV` in the runtime's cast to `AnyHashable`, found by Kite's `propertyList`
/// fuzz target), and ``PropertyListValue`` has no case for a set, so a body holding one is refused before
/// Foundation reads it.
enum BinaryPropertyList {
    /// Whether `data` is a binary property list whose offset table names an object that is a set.
    static func holdsSet(_ data: Data) -> Bool {
        // Only a binary list is read; any other body is not copied.
        guard data.count >= 40, data.starts(with: "bplist0".utf8) else { return false }
        let bytes = [UInt8](data)
        let trailer = bytes[(bytes.count - 32)...]
        let offsetSize = Int(trailer[trailer.startIndex + 6])
        func integer(_ start: Int, _ count: Int) -> Int? {
            guard count > 0, count <= 8, start >= 0, start + count <= bytes.count else { return nil }
            var value: UInt64 = 0
            for byte in bytes[start..<(start + count)] { value = value << 8 | UInt64(byte) }
            return value <= UInt64(Int.max) ? Int(value) : nil
        }
        guard let objectCount = integer(trailer.startIndex + 8, 8),
            let tableStart = integer(trailer.startIndex + 24, 8)
        else { return false }
        // Foundation rejects a table that does not fit; so does this reading.
        guard (1...8).contains(offsetSize), objectCount <= bytes.count,
            tableStart <= bytes.count - objectCount * offsetSize
        else { return false }
        for index in 0..<objectCount {
            if let offset = integer(tableStart + index * offsetSize, offsetSize), offset < bytes.count,
                bytes[offset] & 0xF0 == 0xC0
            {
                return true
            }
        }
        return false
    }
}
