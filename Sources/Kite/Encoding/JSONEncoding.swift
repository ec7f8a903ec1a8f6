import Foundation
import HTTPTypes

/// Encodes ``Parameters`` (or any JSON value) as a JSON body.
///
/// The body is written by `JSONSerialization` with `.sortedKeys` always added to the options, so the
/// same parameters always give the same bytes. `Content-Type` becomes `application/json` unless one
/// was already set. `nil` parameters leave the draft unchanged.
///
/// Values are checked before they are serialized: strings, Booleans, integers, finite floating-point
/// numbers, `Decimal`, `NSNumber`, arrays, `[String: …]` dictionaries, `NSNull` and `Optional.none`
/// (written as `null`) are JSON; anything else, such as a `Date`, `Data`, a custom struct, `Double.nan`
/// or infinity, is an error that names the value's type and key path.
///
/// ```swift
/// let draft = RequestDraft(method: .post, url: URL(string: "https://example.com/users")!)
/// let encoded = try JSONEncoding.default.encode(draft, with: ["name": "kite", "tags": ["a", "b"]])
/// // body {"name":"kite","tags":["a","b"]}, Content-Type application/json
/// ```
public struct JSONEncoding: ParameterEncoding {
    /// Compact JSON with sorted keys.
    ///
    /// ```swift
    /// let encoding: any ParameterEncoding = JSONEncoding.default  // {"a":1,"b":[true]}
    /// ```
    public static let `default` = JSONEncoding()

    /// Indented JSON with sorted keys.
    ///
    /// ```swift
    /// let encoding: any ParameterEncoding = JSONEncoding.prettyPrinted
    /// ```
    public static let prettyPrinted = JSONEncoding(options: .prettyPrinted)

    /// The options passed to `JSONSerialization`; they always include `.sortedKeys`.
    public let options: JSONSerialization.WritingOptions

    /// Creates an encoding.
    ///
    /// `.sortedKeys` is always added, so output does not depend on dictionary order.
    ///
    /// ```swift
    /// let encoding = JSONEncoding(options: [.prettyPrinted, .withoutEscapingSlashes])
    /// ```
    ///
    /// - Parameter options: Options for `JSONSerialization`, such as `.prettyPrinted`.
    public init(options: JSONSerialization.WritingOptions = []) {
        self.options = options.union(.sortedKeys)
    }

    /// Returns the draft with `parameters` as its JSON body.
    ///
    /// ```swift
    /// let draft = RequestDraft(method: .post, url: URL(string: "https://example.com/users")!)
    /// let encoded = try JSONEncoding.default.encode(draft, with: ["name": "kite"])
    /// ```
    ///
    /// - Parameters:
    ///   - draft: The request so far.
    ///   - parameters: The parameters; `nil` leaves the draft unchanged.
    /// - Returns: The draft with the JSON body and, unless one was set, `Content-Type: application/json`.
    /// - Throws: ``KiteError`` with code `parameterEncodingFailed` naming the first value that is not JSON.
    public func encode(_ draft: RequestDraft, with parameters: Parameters?) throws -> RequestDraft {
        guard let parameters else { return draft }
        return try self.encode(draft, withJSONObject: parameters)
    }

    /// Returns the draft with any JSON value as its body: an array, a dictionary, a string, a number.
    ///
    /// Top-level values that are neither arrays nor dictionaries are written as JSON fragments.
    ///
    /// ```swift
    /// let draft = RequestDraft(method: .post, url: URL(string: "https://example.com/batch")!)
    /// let encoded = try JSONEncoding.default.encode(draft, withJSONObject: [["id": 1], ["id": 2]])
    /// // body [{"id":1},{"id":2}]
    /// ```
    ///
    /// - Parameters:
    ///   - draft: The request so far.
    ///   - jsonObject: The value; `nil` leaves the draft unchanged.
    /// - Returns: The draft with the JSON body and, unless one was set, `Content-Type: application/json`.
    /// - Throws: ``KiteError`` with code `parameterEncodingFailed` naming the first value that is not JSON.
    public func encode(_ draft: RequestDraft, withJSONObject jsonObject: Any?) throws -> RequestDraft {
        guard let jsonObject else { return draft }
        let object = try Self.jsonValue(jsonObject, at: [])
        var options = self.options
        if !(object is [Any] || object is [String: Any]) {
            options.insert(.fragmentsAllowed)
        }
        let data: Data
        do {
            data = try JSONSerialization.data(withJSONObject: object, options: options)
        } catch {
            throw EncodingSupport.failure(
                "JSONSerialization could not write the parameters: \(error)",
                underlyingError: error
            )
        }
        return EncodingSupport.settingBody(data, contentType: "application/json", on: draft)
    }

    /// `value` as an object `JSONSerialization` accepts, or an error naming what is not JSON.
    ///
    /// `JSONSerialization` can trap on Linux for some invalid inputs, so nothing reaches it unchecked.
    static func jsonValue(_ value: Any, at path: [EncodingSupport.PathComponent]) throws(KiteError) -> Any {
        guard let value = EncodingSupport.unwrapped(value), !(value is NSNull) else { return NSNull() }
        if let bool = EncodingSupport.boolValue(of: value) {
            return bool
        }
        if let number = EncodingSupport.number(value) {
            guard number.doubleValue.isFinite else { throw Self.notFinite(number, at: path) }
            return number
        }
        switch value {
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
            throw EncodingSupport.failure(
                "value \(integer) of type \(EncodingSupport.typeName(of: value)) \(EncodingSupport.location(path))"
                    + " is not valid JSON; it does not fit in 64 bits"
            )
        case let double as Double:
            guard double.isFinite else { throw Self.notFinite(double, at: path) }
            return double
        case let float as Float:
            guard float.isFinite else { throw Self.notFinite(float, at: path) }
            return float
        case let floatingPoint as any BinaryFloatingPoint:
            let double = Double(floatingPoint)
            guard double.isFinite else { throw Self.notFinite(floatingPoint, at: path) }
            return double
        case let decimal as Decimal:
            guard !decimal.isNaN else { throw Self.notFinite(decimal, at: path) }
            return decimal
        case let dictionary as [String: Any]:
            var object: [String: Any] = [:]
            for (key, element) in dictionary {
                object[key] = try Self.jsonValue(element, at: path + [.key(key)])
            }
            return object
        case let array as [Any]:
            var elements: [Any] = []
            elements.reserveCapacity(array.count)
            for (index, element) in array.enumerated() {
                elements.append(try Self.jsonValue(element, at: path + [.index(index)]))
            }
            return elements
        case is [AnyHashable: Any]:
            throw EncodingSupport.failure(
                "dictionary of type \(EncodingSupport.typeName(of: value)) \(EncodingSupport.location(path))"
                    + " is not valid JSON; JSON object keys must be strings"
            )
        default:
            throw EncodingSupport.failure(
                "value of type \(EncodingSupport.typeName(of: value)) \(EncodingSupport.location(path)) is not valid JSON;"
                    + " use strings, numbers, Booleans, arrays, [String: …] dictionaries or NSNull"
            )
        }
    }

    private static func notFinite(_ value: Any, at path: [EncodingSupport.PathComponent]) -> KiteError {
        EncodingSupport.failure(
            "value \(value) of type \(EncodingSupport.typeName(of: value)) \(EncodingSupport.location(path))"
                + " is not valid JSON; JSON has no NaN or infinity"
        )
    }
}
