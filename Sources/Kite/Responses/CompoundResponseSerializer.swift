import Foundation
import HTTPTypes

/// Tries serializers in order; the first that produces a value wins (AFNetworking's
/// `AFCompoundResponseSerializer`).
///
/// ```swift
/// let compound = CompoundResponseSerializer([
///     JSONResponseSerializer.serializer(),
///     PropertyListResponseSerializer(),
/// ])
/// let value = try await session.request("http://127.0.0.1:8080/json").serializingResponse(using: compound).value
/// if let json = value as? JSONValue { print(json) }
/// ```
///
/// When every serializer fails, the error keeps all their errors, in order, as a
/// ``CompoundSerializationFailure`` in ``KiteError/underlyingError``; its code is theirs when they agree, else
/// `responseSerializationFailed`. The request's own error (a connection failure, a failed `validate()`) is
/// passed on as it is, without trying the serializers.
///
/// AFNetworking falls back to the raw data when no serializer accepts a response with an acceptable status;
/// in Kite that is one more serializer at the end: `DataResponseSerializer(acceptance: .http)`.
public struct CompoundResponseSerializer: ResponseAcceptingSerializer {
    /// The serializers, tried in order.
    public var responseSerializers: [any DataResponseSerializerProtocol]
    /// Checked before any serializer is tried; ``ResponseAcceptance/any`` by default.
    public var acceptance: ResponseAcceptance

    /// Creates the serializer.
    ///
    /// - Parameters:
    ///   - responseSerializers: The serializers, tried in order.
    ///   - acceptance: Checked before any serializer is tried.
    public init(_ responseSerializers: [any DataResponseSerializerProtocol], acceptance: ResponseAcceptance = .any) {
        self.responseSerializers = responseSerializers
        self.acceptance = acceptance
    }

    public func serialize(
        request: HTTPRequest?,
        response: HTTPResponse?,
        data: Data?,
        error: KiteError?
    ) throws -> any Sendable {
        try self.checkAcceptance(response: response, data: data, error: error)
        var errors: [KiteError] = []
        for serializer in self.responseSerializers {
            switch Self.attempt(serializer, request: request, response: response, data: data) {
            case .success(let value): return value
            case .failure(let error): errors.append(error)
            }
        }
        let codes = Set(errors.map(\.code))
        let code = codes.count == 1 ? (codes.first ?? .responseSerializationFailed) : .responseSerializationFailed
        let reasons = errors.enumerated().map { "\($0.offset + 1)) \($0.element.message)" }
        throw KiteError(
            code: code,
            message: errors.isEmpty
                ? "the compound serializer has no serializers"
                : "no serializer accepted the response: \(reasons.joined(separator: "; "))",
            response: response,
            underlyingError: CompoundSerializationFailure(errors: errors)
        )
        .carryingBody(data)
    }

    private static func attempt<Serializer: DataResponseSerializerProtocol>(
        _ serializer: Serializer,
        request: HTTPRequest?,
        response: HTTPResponse?,
        data: Data?
    ) -> Result<any Sendable, KiteError> {
        do {
            return .success(try serializer.serialize(request: request, response: response, data: data, error: nil))
        } catch let error as KiteError {
            return .failure(error)
        } catch {
            return .failure(
                KiteError(
                    code: .responseSerializationFailed,
                    message: "\(type(of: serializer)) failed: \(error)",
                    response: response,
                    underlyingError: error
                )
            )
        }
    }
}

/// Every error of a ``CompoundResponseSerializer`` whose serializers all failed, in their order.
///
/// ```swift
/// if let failure = error.underlyingError as? CompoundSerializationFailure {
///     for error in failure.errors { print(error.code) }
/// }
/// ```
public struct CompoundSerializationFailure: Error, Sendable, CustomStringConvertible {
    /// The serializers' errors, in order.
    public let errors: [KiteError]

    public var description: String {
        self.errors.map(\.message).joined(separator: "; ")
    }
}
