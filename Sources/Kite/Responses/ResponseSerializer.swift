import Foundation
import HTTPTypes

/// Turns a response into a value.
///
/// Kite calls ``serialize(request:response:data:error:)`` once per handler, after validation. When
/// `error` is not `nil` (the request or a validator failed) a serializer should rethrow it.
///
/// ```swift
/// struct LineCountSerializer: DataResponseSerializerProtocol {
///     func serialize(request: HTTPRequest?, response: HTTPResponse?, data: Data?, error: KiteError?) throws -> Int {
///         if let error { throw error }
///         return (data ?? Data()).split(separator: UInt8(ascii: "\n")).count
///     }
/// }
/// let lines = try await session.request("http://127.0.0.1:8080/stream/3")
///     .serializingResponse(using: LineCountSerializer())
///     .value
/// ```
public protocol DataResponseSerializerProtocol<SerializedObject>: Sendable {
    /// The value produced.
    associatedtype SerializedObject: Sendable

    /// Produces the value, or throws why it cannot.
    ///
    /// - Parameters:
    ///   - request: The request head as sent.
    ///   - response: The response head.
    ///   - data: The body.
    ///   - error: The request's or a validator's error, if any.
    /// - Returns: The value.
    /// - Throws: The incoming error, or why the body cannot become the value. A ``KiteError`` is kept;
    ///   other errors are reported as `responseSerializationFailed`.
    func serialize(
        request: HTTPRequest?,
        response: HTTPResponse?,
        data: Data?,
        error: KiteError?
    ) throws
        -> SerializedObject
}

/// A serializer that knows which responses may have an empty body: by default status 204 and 205
/// and `HEAD` requests. Any other empty body is an error for serializers that need content.
public protocol ResponseSerializer: DataResponseSerializerProtocol {
    /// Status codes whose empty body is expected.
    var emptyResponseCodes: Set<Int> { get }
    /// Request methods whose empty body is expected.
    var emptyRequestMethods: Set<HTTPRequest.Method> { get }
}

// Built once: every `serializing…()` call evaluates the defaults.
private let defaultEmptyResponseCodeSet: Set<Int> = [204, 205]
private let defaultEmptyRequestMethodSet: Set<HTTPRequest.Method> = [.head]

extension ResponseSerializer {
    /// `[204, 205]`.
    public static var defaultEmptyResponseCodes: Set<Int> { defaultEmptyResponseCodeSet }

    /// `[.head]`.
    public static var defaultEmptyRequestMethods: Set<HTTPRequest.Method> { defaultEmptyRequestMethodSet }

    /// Whether the request or response say an empty body is expected.
    ///
    /// - Parameters:
    ///   - request: The request head.
    ///   - response: The response head.
    /// - Returns: `true` for a configured method or status code.
    public func emptyResponseAllowed(request: HTTPRequest?, response: HTTPResponse?) -> Bool {
        if let method = request?.method, self.emptyRequestMethods.contains(method) { return true }
        if let code = response?.status.code, self.emptyResponseCodes.contains(code) { return true }
        return false
    }

    /// The body, or `nil` when it is empty and allowed to be; throws the incoming error, why the response is not
    /// accepted, or why an empty body is not acceptable.
    func content(
        request: HTTPRequest?,
        response: HTTPResponse?,
        data: Data?,
        error: KiteError?,
        acceptance: ResponseAcceptance,
        producing typeName: String
    ) throws(KiteError) -> Data? {
        if let error { throw error }
        if let refusal = acceptance.check(response: response, data: data) { throw refusal }
        guard let data, !data.isEmpty else {
            if self.emptyResponseAllowed(request: request, response: response) { return nil }
            let status = response.map { " (status \($0.status.code))" } ?? ""
            throw KiteError(
                code: .responseSerializationFailed,
                message: "the response body is empty\(status), so it cannot be serialized as \(typeName)",
                response: response
            )
        }
        return data
    }
}

/// Delivers the body as `Data`.
///
/// ```swift
/// let bytes = try await session.request("http://127.0.0.1:8080/bytes/16").serializingData().value
/// ```
public struct DataResponseSerializer: ResponseSerializer, ResponseAcceptingSerializer {
    public let emptyResponseCodes: Set<Int>
    public let emptyRequestMethods: Set<HTTPRequest.Method>
    /// Which responses are accepted; ``ResponseAcceptance/any`` by default.
    public var acceptance: ResponseAcceptance

    /// Creates the serializer.
    ///
    /// - Parameters:
    ///   - emptyResponseCodes: Status codes whose empty body gives empty `Data`.
    ///   - emptyRequestMethods: Methods whose empty body gives empty `Data`.
    ///   - acceptance: Which responses are accepted; any by default.
    public init(
        emptyResponseCodes: Set<Int> = Self.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPRequest.Method> = Self.defaultEmptyRequestMethods,
        acceptance: ResponseAcceptance = .any
    ) {
        self.emptyResponseCodes = emptyResponseCodes
        self.emptyRequestMethods = emptyRequestMethods
        self.acceptance = acceptance
    }

    public func serialize(
        request: HTTPRequest?,
        response: HTTPResponse?,
        data: Data?,
        error: KiteError?
    ) throws
        -> Data
    {
        try self.content(
            request: request,
            response: response,
            data: data,
            error: error,
            acceptance: self.acceptance,
            producing: "Data"
        ) ?? Data()
    }
}

/// Delivers the body as a `String`: in the encoding given, else the `Content-Type` charset, else
/// UTF-8 for JSON media types (RFC 8259), else ISO-8859-1.
///
/// ```swift
/// let html = try await session.request("http://127.0.0.1:8080/html").serializingString().value
/// ```
public struct StringResponseSerializer: ResponseSerializer, ResponseAcceptingSerializer {
    /// The encoding to use regardless of the response; `nil` follows the response.
    public let encoding: String.Encoding?
    public let emptyResponseCodes: Set<Int>
    public let emptyRequestMethods: Set<HTTPRequest.Method>
    /// Which responses are accepted; ``ResponseAcceptance/any`` by default.
    public var acceptance: ResponseAcceptance

    /// Creates the serializer.
    ///
    /// - Parameters:
    ///   - encoding: The encoding, or `nil` to follow the response.
    ///   - emptyResponseCodes: Status codes whose empty body gives `""`.
    ///   - emptyRequestMethods: Methods whose empty body gives `""`.
    ///   - acceptance: Which responses are accepted; any by default.
    public init(
        encoding: String.Encoding? = nil,
        emptyResponseCodes: Set<Int> = Self.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPRequest.Method> = Self.defaultEmptyRequestMethods,
        acceptance: ResponseAcceptance = .any
    ) {
        self.encoding = encoding
        self.emptyResponseCodes = emptyResponseCodes
        self.emptyRequestMethods = emptyRequestMethods
        self.acceptance = acceptance
    }

    public func serialize(
        request: HTTPRequest?,
        response: HTTPResponse?,
        data: Data?,
        error: KiteError?
    ) throws
        -> String
    {
        guard
            let data = try self.content(
                request: request,
                response: response,
                data: data,
                error: error,
                acceptance: self.acceptance,
                producing: "String"
            )
        else { return "" }
        let encoding = self.encoding ?? Charset.encoding(forContentType: response?.headerFields[.contentType])
        guard let string = String(data: data, encoding: encoding) else {
            throw KiteError(
                code: .responseSerializationFailed,
                message: "the \(data.count) body bytes are not valid \(Charset.name(of: encoding))",
                response: response
            )
        }
        return string
    }
}
