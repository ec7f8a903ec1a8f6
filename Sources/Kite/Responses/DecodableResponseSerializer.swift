import Foundation
import HTTPTypes

/// A decoder of `Data` into `Decodable` values: `JSONDecoder`, `PropertyListDecoder` or your own.
///
/// ```swift
/// let value = try await session.request("http://127.0.0.1:8080/get")
///     .serializingDecodable(Echo.self, decoder: JSONDecoder())
///     .value
/// ```
public protocol DataDecoder: Sendable {
    /// Decodes a value.
    ///
    /// - Parameters:
    ///   - type: The type to decode.
    ///   - data: The bytes.
    /// - Returns: The value.
    /// - Throws: The decoder's error, usually a `DecodingError`.
    func decode<D: Decodable>(_ type: D.Type, from data: Data) throws -> D
}

extension JSONDecoder: DataDecoder {}
extension PropertyListDecoder: DataDecoder {}

/// A type with a value that stands for an empty body, so that a 204 can be decoded.
public protocol EmptyResponse {
    /// The value for an empty body.
    static func emptyValue() -> Self
}

/// The value of an empty body: decode it for requests whose response is 204, 205 or to `HEAD`.
///
/// ```swift
/// let empty = try await session.request("http://127.0.0.1:8080/status/204")
///     .serializingDecodable(Empty.self)
///     .value
/// ```
public struct Empty: Codable, Sendable, Hashable, EmptyResponse {
    /// The empty value.
    public static let value = Empty()

    /// Returns ``value``.
    ///
    /// - Returns: ``value``.
    public static func emptyValue() -> Empty { value }
}

/// Decodes the body into a `Decodable` value with a ``DataDecoder`` (`JSONDecoder` by default).
///
/// An empty body decodes only for 204, 205 and `HEAD`, and only into a type that is an
/// ``EmptyResponse`` (such as ``Empty``). Decoding errors name the coding path:
/// `the body could not be decoded as Echo: no value for key "url" at args`.
public struct DecodableResponseSerializer<T: Decodable & Sendable>: ResponseSerializer, ResponseAcceptingSerializer {
    /// The decoder.
    public let decoder: any DataDecoder
    public let emptyResponseCodes: Set<Int>
    public let emptyRequestMethods: Set<HTTPRequest.Method>
    /// Which responses are accepted; ``ResponseAcceptance/any`` by default.
    public var acceptance: ResponseAcceptance

    /// Creates the serializer.
    ///
    /// - Parameters:
    ///   - decoder: The decoder; a new `JSONDecoder` by default.
    ///   - emptyResponseCodes: Status codes whose empty body gives the empty value.
    ///   - emptyRequestMethods: Methods whose empty body gives the empty value.
    ///   - acceptance: Which responses are accepted; any by default.
    public init(
        decoder: any DataDecoder = JSONDecoder(),
        emptyResponseCodes: Set<Int> = Self.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPRequest.Method> = Self.defaultEmptyRequestMethods,
        acceptance: ResponseAcceptance = .any
    ) {
        self.decoder = decoder
        self.emptyResponseCodes = emptyResponseCodes
        self.emptyRequestMethods = emptyRequestMethods
        self.acceptance = acceptance
    }

    public func serialize(request: HTTPRequest?, response: HTTPResponse?, data: Data?, error: KiteError?) throws -> T {
        let typeName = String(describing: T.self)
        guard
            let data = try self.content(
                request: request,
                response: response,
                data: data,
                error: error,
                acceptance: self.acceptance,
                producing: typeName
            )
        else {
            if let emptyType = T.self as? any EmptyResponse.Type, let value = emptyType.emptyValue() as? T {
                return value
            }
            throw KiteError(
                code: .responseSerializationFailed,
                message: "the response body is empty and \(typeName) has no empty value (conform it to EmptyResponse)",
                response: response
            )
        }
        do {
            return try self.decoder.decode(T.self, from: data)
        } catch {
            throw KiteError(
                code: .responseSerializationFailed,
                message: "the body could not be decoded as \(typeName): \(DecodingFailure.describe(error))",
                response: response,
                underlyingError: error
            )
        }
    }
}

enum DecodingFailure {
    /// A decoding error as one clause with its coding path: `no value for key "url" at args`.
    static func describe(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "\(error)" }
        switch error {
        case .keyNotFound(let key, let context):
            return "no value for key \"\(key.stringValue)\"\(at(context.codingPath))"
        case .typeMismatch(let type, let context):
            return "expected \(type)\(at(context.codingPath)) (\(context.debugDescription))"
        case .valueNotFound(let type, let context):
            return "expected \(type) but found null\(at(context.codingPath))"
        case .dataCorrupted(let context):
            let detail = (context.underlyingError.map { "\($0)" }).map { "\(context.debugDescription) \($0)" }
            return "the data is corrupted\(at(context.codingPath)): \(detail ?? context.debugDescription)"
        @unknown default:
            return "\(error)"
        }
    }

    static func path(_ codingPath: [any CodingKey]) -> String {
        var text = ""
        for key in codingPath {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += text.isEmpty ? key.stringValue : ".\(key.stringValue)"
            }
        }
        return text
    }

    private static func at(_ codingPath: [any CodingKey]) -> String {
        codingPath.isEmpty ? " at the top level" : " at \(path(codingPath))"
    }
}
