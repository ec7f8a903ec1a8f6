import Foundation
import HTTPTypes

/// Parses the body as JSON into a ``JSONValue``. An empty body allowed by status or method gives ``JSONValue/null``;
/// a body of only whitespace counts as empty (AFNetworking's rule for the single space Rails sends with
/// `head :ok`).
///
/// ```swift
/// let json = try await session.request("http://127.0.0.1:8080/json").serializingJSON().value
/// ```
///
/// AFNetworking's `AFJSONResponseSerializer` settings are here too: ``acceptance`` (with
/// ``ResponseAcceptingSerializer/acceptableContentTypes``), ``readingOptions`` and ``removesKeysWithNullValues``.
/// ``serializer()`` makes one configured as AFNetworking's defaults.
///
/// ```swift
/// var serializer = JSONResponseSerializer.serializer()
/// serializer.removesKeysWithNullValues = true
/// let user = try await session.request("http://127.0.0.1:8080/json").serializingResponse(using: serializer).value
/// ```
public struct JSONResponseSerializer: ResponseSerializer, ResponseAcceptingSerializer {
    public let emptyResponseCodes: Set<Int>
    public let emptyRequestMethods: Set<HTTPRequest.Method>
    /// Which responses are accepted; ``ResponseAcceptance/any`` by default, ``ResponseAcceptance/json`` in
    /// ``serializer()``.
    public var acceptance: ResponseAcceptance
    /// How the JSON is read. `.fragmentsAllowed` (the default here; AFNetworking's default is `[]`) accepts a
    /// string, number, Boolean or `null` at the top level; without it only an object or array is accepted.
    /// The mutability options do not apply to ``JSONValue`` and are ignored.
    public var readingOptions: JSONSerialization.ReadingOptions
    /// Whether object members whose value is `null` are removed, recursively, and `null` elements of arrays
    /// too (AFNetworking 4's `removesKeysWithNullValues`). `false` by default.
    public var removesKeysWithNullValues: Bool

    /// Creates the serializer.
    ///
    /// - Parameters:
    ///   - emptyResponseCodes: Status codes whose empty body gives `.null`.
    ///   - emptyRequestMethods: Methods whose empty body gives `.null`.
    ///   - acceptance: Which responses are accepted; any by default.
    ///   - readingOptions: How the JSON is read; fragments are allowed by default.
    ///   - removesKeysWithNullValues: Whether `null` members and elements are removed.
    public init(
        emptyResponseCodes: Set<Int> = Self.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPRequest.Method> = Self.defaultEmptyRequestMethods,
        acceptance: ResponseAcceptance = .any,
        readingOptions: JSONSerialization.ReadingOptions = .fragmentsAllowed,
        removesKeysWithNullValues: Bool = false
    ) {
        self.emptyResponseCodes = emptyResponseCodes
        self.emptyRequestMethods = emptyRequestMethods
        self.acceptance = acceptance
        self.readingOptions = readingOptions
        self.removesKeysWithNullValues = removesKeysWithNullValues
    }

    /// A serializer with `AFJSONResponseSerializer`'s defaults: statuses `200..<300`, content types
    /// `application/json`, `text/json` and `text/javascript`, no fragments, and an empty (or blank) body gives
    /// `.null` for every status, as AFNetworking gives `nil`.
    ///
    /// ```swift
    /// manager.responseSerializer = JSONResponseSerializer.serializer()
    /// ```
    ///
    /// - Returns: The serializer.
    public static func serializer() -> JSONResponseSerializer {
        JSONResponseSerializer(
            emptyResponseCodes: Set(100..<600),
            acceptance: .json,
            readingOptions: []
        )
    }

    public func serialize(
        request: HTTPRequest?,
        response: HTTPResponse?,
        data: Data?,
        error: KiteError?
    ) throws
        -> JSONValue
    {
        // Acceptance sees the body as sent (so a refusal carries it); emptiness then counts blank bodies.
        try self.checkAcceptance(response: response, data: data, error: error)
        guard
            let data = try self.content(
                request: request,
                response: response,
                data: data.flatMap { Self.isBlank($0) ? Data() : $0 },
                error: nil,
                acceptance: .any,
                producing: "JSON"
            )
        else { return .null }
        let value: JSONValue
        do {
            value = try JSONDecoder().decode(JSONValue.self, from: data)
        } catch {
            throw KiteError(
                code: .responseSerializationFailed,
                message: "the body is not valid JSON: \(DecodingFailure.describe(error))",
                response: response,
                underlyingError: error
            )
        }
        if !self.readingOptions.contains(.fragmentsAllowed) {
            switch value {
            case .object, .array: break
            default:
                throw KiteError(
                    code: .responseSerializationFailed,
                    message: "the body is a JSON fragment (\(value)), not an object or array, and readingOptions "
                        + "do not contain .fragmentsAllowed",
                    response: response
                )
            }
        }
        return self.removesKeysWithNullValues ? value.removingNullValues() : value
    }

    /// Whether `data` holds only JSON whitespace (space, tab, CR, LF).
    static func isBlank(_ data: Data) -> Bool {
        !data.isEmpty && data.allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
    }
}

extension JSONValue {
    /// This value without `null` object members or array elements, at every depth (AFNetworking 4's
    /// `AFJSONObjectByRemovingKeysWithNullValues`).
    ///
    /// ```swift
    /// let json: JSONValue = .object(["a": .null, "b": .array([.null, .int(1)])])
    /// print(json.removingNullValues())  // {"b":[1]}
    /// ```
    ///
    /// - Returns: The value without nulls; a top-level `null` stays `null`.
    public func removingNullValues() -> JSONValue {
        switch self {
        case .array(let elements):
            return .array(elements.compactMap { $0 == .null ? nil : $0.removingNullValues() })
        case .object(let members):
            var kept: [String: JSONValue] = [:]
            kept.reserveCapacity(members.count)
            for (key, member) in members where member != .null {
                kept[key] = member.removingNullValues()
            }
            return .object(kept)
        default:
            return self
        }
    }
}

extension JSONValue: ResponseObjectConvertible {
    /// The value as `JSONSerialization` gives it: `[String: Any]`, `[Any]`, `String`, `Int`, `Double`,
    /// `Bool` and `NSNull`; a top-level `null` (also an empty body) is `nil`, as AFNetworking's `responseObject`.
    ///
    /// - Returns: The Foundation object.
    public func responseObject() -> Any? {
        self == .null ? nil : self.foundationObject
    }

    /// The value as `JSONSerialization` gives it, `null` as `NSNull`.
    var foundationObject: Any {
        switch self {
        case .null: NSNull()
        case .bool(let value): value
        case .int(let value): value
        case .double(let value): value
        case .string(let value): value
        case .array(let elements): elements.map(\.foundationObject)
        case .object(let members): members.mapValues(\.foundationObject)
        }
    }
}
