import Foundation
import HTTPTypes

/// Encodes ``Parameters`` as a property list body, XML or binary.
///
/// `Content-Type` becomes `application/x-plist` unless one was already set; `nil` parameters leave
/// the draft unchanged. Values are checked first: strings, Booleans, integers, floating-point
/// numbers, `NSNumber`, `Date`, `Data`, arrays and `[String: …]` dictionaries are property list
/// values; anything else, including `nil`, `NSNull` and `Decimal`, is an error that names the type
/// and key path.
///
/// ```swift
/// let draft = RequestDraft(method: .post, url: URL(string: "https://example.com/settings")!)
/// let encoded = try PropertyListEncoding.binary.encode(draft, with: ["volume": 11, "muted": false])
/// ```
public struct PropertyListEncoding: ParameterEncoding {
    /// An XML property list; the same as ``xml``.
    ///
    /// ```swift
    /// let encoding: any ParameterEncoding = PropertyListEncoding.default
    /// ```
    public static let `default` = PropertyListEncoding()

    /// An XML property list.
    ///
    /// ```swift
    /// let encoding: any ParameterEncoding = PropertyListEncoding.xml
    /// ```
    public static let xml = PropertyListEncoding(format: .xml)

    /// A binary property list (`bplist00`).
    ///
    /// ```swift
    /// let encoding: any ParameterEncoding = PropertyListEncoding.binary
    /// ```
    public static let binary = PropertyListEncoding(format: .binary)

    /// The format written.
    public let format: PropertyListSerialization.PropertyListFormat

    /// The options passed to `PropertyListSerialization` (currently unused by Foundation).
    public let options: PropertyListSerialization.WriteOptions

    /// Creates an encoding.
    ///
    /// ```swift
    /// let encoding = PropertyListEncoding(format: .binary)
    /// ```
    ///
    /// - Parameters:
    ///   - format: `.xml` (the default) or `.binary`. `.openStep` cannot be written: encoding with it throws.
    ///   - options: Options for `PropertyListSerialization`.
    public init(
        format: PropertyListSerialization.PropertyListFormat = .xml,
        options: PropertyListSerialization.WriteOptions = 0
    ) {
        self.format = format
        self.options = options
    }

    /// Returns the draft with `parameters` as its property list body.
    ///
    /// ```swift
    /// let draft = RequestDraft(method: .post, url: URL(string: "https://example.com/settings")!)
    /// let encoded = try PropertyListEncoding.xml.encode(draft, with: ["volume": 11])
    /// ```
    ///
    /// - Parameters:
    ///   - draft: The request so far.
    ///   - parameters: The parameters; `nil` leaves the draft unchanged.
    /// - Returns: The draft with the body and, unless one was set, `Content-Type: application/x-plist`.
    /// - Throws: ``KiteError`` with code `parameterEncodingFailed` naming the first value that is not a
    ///   property list value, or when `PropertyListSerialization` fails.
    public func encode(_ draft: RequestDraft, with parameters: Parameters?) throws -> RequestDraft {
        guard let parameters else { return draft }
        guard self.format != .openStep else {
            throw EncodingSupport.failure(
                "property lists cannot be written in the OpenStep format; use .xml or .binary"
            )
        }
        let object = try Self.propertyListValue(parameters, at: [])
        let data: Data
        do {
            data = try PropertyListSerialization.data(
                fromPropertyList: object,
                format: self.format,
                options: self.options
            )
        } catch {
            throw EncodingSupport.failure(
                "PropertyListSerialization could not write the parameters: \(error)",
                underlyingError: error
            )
        }
        return EncodingSupport.settingBody(data, contentType: "application/x-plist", on: draft)
    }

    /// `value` as an object `PropertyListSerialization` accepts, or an error naming what is not one.
    static func propertyListValue(_ value: Any, at path: [EncodingSupport.PathComponent]) throws(KiteError) -> Any {
        guard let value = EncodingSupport.unwrapped(value), !(value is NSNull) else {
            throw EncodingSupport.failure(
                "nil \(EncodingSupport.location(path)) is not a property list value; property lists have no null"
            )
        }
        if let bool = EncodingSupport.boolValue(of: value) {
            return bool
        }
        if let number = EncodingSupport.number(value), !(number is NSDecimalNumber) {
            return number
        }
        switch value {
        case is Decimal, is NSDecimalNumber:
            throw Self.invalid(value, at: path, reason: "convert it to a Double or a String")
        case let string as String:
            return string
        case let string as any StringProtocol:
            return String(string)
        case let integer as any BinaryInteger:
            if let int = Int64(exactly: integer) {
                return int
            }
            if let uint = UInt64(exactly: integer) {
                return uint
            }
            throw Self.invalid(value, at: path, reason: "it does not fit in 64 bits")
        case let double as Double:
            return double
        case let float as Float:
            return float
        case let floatingPoint as any BinaryFloatingPoint:
            return Double(floatingPoint)
        case let date as Date:
            return date
        case let data as Data:
            return data
        case let dictionary as [String: Any]:
            var object: [String: Any] = [:]
            for (key, element) in dictionary {
                object[key] = try Self.propertyListValue(element, at: path + [.key(key)])
            }
            return object
        case let array as [Any]:
            var elements: [Any] = []
            elements.reserveCapacity(array.count)
            for (index, element) in array.enumerated() {
                elements.append(try Self.propertyListValue(element, at: path + [.index(index)]))
            }
            return elements
        case is [AnyHashable: Any]:
            throw Self.invalid(value, at: path, reason: "property list dictionary keys must be strings")
        default:
            throw Self.invalid(
                value,
                at: path,
                reason: "use strings, numbers, Booleans, dates, data, arrays or [String: …] dictionaries"
            )
        }
    }

    private static func invalid(_ value: Any, at path: [EncodingSupport.PathComponent], reason: String) -> KiteError {
        EncodingSupport.failure(
            "value of type \(EncodingSupport.typeName(of: value)) \(EncodingSupport.location(path))"
                + " is not a property list value; \(reason)"
        )
    }
}
