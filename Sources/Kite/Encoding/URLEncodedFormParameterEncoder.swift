import Foundation
import HTTPTypes

/// Encodes an `Encodable` value with a ``URLEncodedFormEncoder``, into the URL's query or the body.
///
/// When the text goes in the URL, it is appended to any query already there with `&`, and the
/// fragment is kept; empty text adds nothing. When it goes in the body, the body is the text as
/// UTF-8 and `Content-Type` becomes `application/x-www-form-urlencoded; charset=utf-8` unless one
/// was already set.
///
/// ```swift
/// struct Search: Encodable, Sendable {
///     let query: String
///     let page: Int
/// }
/// let draft = RequestDraft(url: URL(string: "https://example.com/search")!)
/// let encoded = try URLEncodedFormParameterEncoder.default.encode(Search(query: "kite", page: 2), into: draft)
/// // https://example.com/search?page=2&query=kite
/// ```
public struct URLEncodedFormParameterEncoder: ParameterEncoder {
    /// Where the encoded text goes: the same choice as ``URLEncoding/Destination``.
    ///
    /// ```swift
    /// let encoder = URLEncodedFormParameterEncoder(destination: .httpBody)
    /// ```
    public typealias Destination = URLEncoding.Destination

    /// A default ``URLEncodedFormEncoder`` with a method-dependent destination.
    ///
    /// ```swift
    /// let encoder: any ParameterEncoder = URLEncodedFormParameterEncoder.default
    /// ```
    public static let `default` = URLEncodedFormParameterEncoder()

    /// The encoder that writes the text.
    public let encoder: URLEncodedFormEncoder

    /// Where the text goes.
    public let destination: Destination

    /// Creates a parameter encoder.
    ///
    /// ```swift
    /// let encoder = URLEncodedFormParameterEncoder(
    ///     encoder: URLEncodedFormEncoder(keyEncoding: .convertToSnakeCase),
    ///     destination: .queryString
    /// )
    /// ```
    ///
    /// - Parameters:
    ///   - encoder: The form encoder; a default one unless given.
    ///   - destination: Where the text goes; method-dependent by default.
    public init(encoder: URLEncodedFormEncoder = URLEncodedFormEncoder(), destination: Destination = .methodDependent) {
        self.encoder = encoder
        self.destination = destination
    }

    /// Returns the draft with `parameters` encoded into its URL's query or its body.
    ///
    /// ```swift
    /// let draft = RequestDraft(method: .post, url: URL(string: "https://example.com/login")!)
    /// let encoded = try URLEncodedFormParameterEncoder.default.encode(["user": "kite"], into: draft)
    /// // body "user=kite"
    /// ```
    ///
    /// - Parameters:
    ///   - parameters: The value; `nil` leaves the draft unchanged.
    ///   - draft: The request so far.
    /// - Returns: The changed draft.
    /// - Throws: ``KiteError`` with code `parameterEncodingFailed` when the value cannot be form-encoded
    ///   or the URL cannot take the query.
    public func encode<Value: Encodable & Sendable>(
        _ parameters: Value?,
        into draft: RequestDraft
    ) throws
        -> RequestDraft
    {
        guard let parameters else { return draft }
        if self.destination.encodesInQuery(for: draft.method) {
            let query: String = try self.encoder.encode(parameters)
            return try EncodingSupport.appendingQuery(query, to: draft)
        }
        let body: Data = try self.encoder.encode(parameters)
        return EncodingSupport.settingBody(
            body,
            contentType: "application/x-www-form-urlencoded; charset=utf-8",
            on: draft
        )
    }
}
