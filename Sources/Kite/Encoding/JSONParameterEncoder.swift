import Foundation
import HTTPTypes

/// Encodes an `Encodable` value as a JSON body with a `JSONEncoder`.
///
/// `Content-Type` becomes `application/json` unless one was already set; `nil` leaves the draft
/// unchanged. Errors from `JSONEncoder` (such as a `Double.nan` with the default strategy) become
/// ``KiteError``s that name the key path.
///
/// `JSONEncoder` keeps object keys in a hash table, so without `.sortedKeys` their order changes from
/// one process to the next. Unlike Alamofire, every encoder Kite makes (``default``,
/// ``prettyPrinted``, ``sortedKeys`` and `init()`) therefore sorts keys; only a `JSONEncoder` you pass
/// to ``init(encoder:)`` is used exactly as configured.
///
/// ```swift
/// struct Login: Encodable, Sendable {
///     let email: String
///     let password: String
/// }
/// let draft = RequestDraft(method: .post, url: URL(string: "https://example.com/login")!)
/// let encoded = try JSONParameterEncoder.default.encode(Login(email: "a@example.com", password: "pw"), into: draft)
/// // body {"email":"a@example.com","password":"pw"}
/// ```
public struct JSONParameterEncoder: ParameterEncoder {
    /// Compact JSON with sorted keys.
    ///
    /// ```swift
    /// let encoder: any ParameterEncoder = JSONParameterEncoder.default
    /// ```
    public static let `default` = JSONParameterEncoder()

    /// Indented JSON with sorted keys.
    ///
    /// ```swift
    /// let encoder: any ParameterEncoder = JSONParameterEncoder.prettyPrinted
    /// ```
    public static let prettyPrinted = JSONParameterEncoder(encoder: Self.makeEncoder([.prettyPrinted, .sortedKeys]))

    /// Compact JSON with sorted keys; the same output as ``default``, named as in Alamofire.
    ///
    /// ```swift
    /// let encoder: any ParameterEncoder = JSONParameterEncoder.sortedKeys
    /// ```
    public static let sortedKeys = JSONParameterEncoder(encoder: Self.makeEncoder(.sortedKeys))

    /// The encoder that writes the body.
    ///
    /// `JSONEncoder` is `Sendable` in this Foundation (it guards its settings with a lock), so it is
    /// stored as is; configure it before handing it over.
    public let encoder: JSONEncoder

    /// Creates a parameter encoder.
    ///
    /// ```swift
    /// let jsonEncoder = JSONEncoder()
    /// jsonEncoder.keyEncodingStrategy = .convertToSnakeCase
    /// jsonEncoder.outputFormatting = .sortedKeys
    /// let encoder = JSONParameterEncoder(encoder: jsonEncoder)
    /// ```
    ///
    /// - Parameter encoder: The `JSONEncoder`, used as configured; unless given, a new one whose
    ///   `outputFormatting` is `.sortedKeys`.
    public init(encoder: JSONEncoder = JSONParameterEncoder.makeEncoder(.sortedKeys)) {
        self.encoder = encoder
    }

    /// A new `JSONEncoder` with the given output formatting.
    ///
    /// ```swift
    /// let encoder = JSONParameterEncoder(encoder: JSONParameterEncoder.makeEncoder([.sortedKeys, .withoutEscapingSlashes]))
    /// ```
    ///
    /// - Parameter outputFormatting: The formatting, such as `[.prettyPrinted, .sortedKeys]`.
    /// - Returns: The encoder; its other settings are `JSONEncoder`'s defaults.
    public static func makeEncoder(_ outputFormatting: JSONEncoder.OutputFormatting) -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = outputFormatting
        return encoder
    }

    /// Returns the draft with `parameters` as its JSON body.
    ///
    /// ```swift
    /// let draft = RequestDraft(method: .post, url: URL(string: "https://example.com/items")!)
    /// let encoded = try JSONParameterEncoder.default.encode(["name": "kite"], into: draft)
    /// ```
    ///
    /// - Parameters:
    ///   - parameters: The value; `nil` leaves the draft unchanged.
    ///   - draft: The request so far.
    /// - Returns: The draft with the JSON body and, unless one was set, `Content-Type: application/json`.
    /// - Throws: ``KiteError`` with code `parameterEncodingFailed` naming the key path and type that
    ///   `JSONEncoder` rejected.
    public func encode<Value: Encodable & Sendable>(
        _ parameters: Value?,
        into draft: RequestDraft
    ) throws
        -> RequestDraft
    {
        guard let parameters else { return draft }
        let data: Data
        do {
            data = try self.encoder.encode(parameters)
        } catch let error as EncodingError {
            throw Self.failure(from: error, encoding: parameters)
        } catch {
            throw EncodingSupport.failure(
                "JSONEncoder could not encode a value of type \(EncodingSupport.typeName(of: parameters)): \(error)",
                underlyingError: error
            )
        }
        return EncodingSupport.settingBody(data, contentType: "application/json", on: draft)
    }

    private static func failure(from error: EncodingError, encoding parameters: Any) -> KiteError {
        switch error {
        case .invalidValue(let value, let context):
            let path = FormValueEncoding.path(context.codingPath)
            return EncodingSupport.failure(
                "value of type \(EncodingSupport.typeName(of: value)) \(EncodingSupport.location(path))"
                    + " could not be encoded as JSON: \(context.debugDescription)",
                underlyingError: error
            )
        @unknown default:
            return EncodingSupport.failure(
                "JSONEncoder could not encode a value of type \(EncodingSupport.typeName(of: parameters)): \(error)",
                underlyingError: error
            )
        }
    }
}
