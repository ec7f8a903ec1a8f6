import Foundation

/// Parameters for ``ParameterEncoding``: a dictionary whose values are strings, numbers, booleans,
/// arrays, nested dictionaries, `Date`, `Data`, `NSNull` or any other `Sendable` value an encoding
/// understands.
public typealias Parameters = [String: any Sendable]

/// A way to put untyped ``Parameters`` into a request: in the URL query or in the body.
///
/// ```swift
/// let request = session.request(
///     "http://127.0.0.1:8080/post",
///     method: .post,
///     parameters: ["name": "kite"],
///     encoding: JSONEncoding.default
/// )
/// ```
///
/// Errors thrown by an encoding surface in the response as a ``KiteError`` with code
/// `parameterEncodingFailed`; they are never thrown from `Session.request`.
public protocol ParameterEncoding: Sendable {
    /// Returns the draft with the parameters encoded into it.
    ///
    /// - Parameters:
    ///   - draft: The request so far.
    ///   - parameters: The parameters; `nil` leaves the draft unchanged.
    /// - Returns: The changed draft.
    /// - Throws: ``KiteError`` with code `parameterEncodingFailed` naming the value that could not be encoded.
    func encode(_ draft: RequestDraft, with parameters: Parameters?) throws -> RequestDraft
}

/// A way to put an `Encodable` value into a request: in the URL query or in the body.
///
/// ```swift
/// struct Login: Encodable, Sendable { let email: String; let password: String }
/// let request = session.request(
///     "http://127.0.0.1:8080/post",
///     method: .post,
///     parameters: Login(email: "a@example.com", password: "secret"),
///     encoder: JSONParameterEncoder.default
/// )
/// ```
public protocol ParameterEncoder: Sendable {
    /// Returns the draft with the value encoded into it.
    ///
    /// - Parameters:
    ///   - parameters: The value; `nil` leaves the draft unchanged.
    ///   - draft: The request so far.
    /// - Returns: The changed draft.
    /// - Throws: ``KiteError`` with code `parameterEncodingFailed`.
    func encode<Value: Encodable & Sendable>(_ parameters: Value?, into draft: RequestDraft) throws -> RequestDraft
}
