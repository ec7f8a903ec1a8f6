import Dispatch
import Foundation
import HTTPTypes

extension DataRequest {
    /// Calls `completionHandler` once with the unserialized response, on `queue`.
    ///
    /// ```swift
    /// session.request("http://127.0.0.1:8080/get").response { response in
    ///     print(response.response?.status.code as Any, response.data?.count ?? 0)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - queue: Where the handler runs; the session's ``Session/callbackQueue`` by default.
    ///   - completionHandler: The handler.
    /// - Returns: The request.
    @discardableResult
    public func response(
        queue: DispatchQueue? = nil,
        completionHandler: @escaping @Sendable (DataResponse<Data?, KiteError>) -> Void
    ) -> Self {
        self.response(queue: queue, responseSerializer: PassthroughSerializer(), completionHandler: completionHandler)
    }

    /// Calls `completionHandler` once with the response serialized by `responseSerializer`, on `queue`.
    ///
    /// ```swift
    /// session.request("http://127.0.0.1:8080/get")
    ///     .response(responseSerializer: StringResponseSerializer()) { response in print(response.result) }
    /// ```
    ///
    /// - Parameters:
    ///   - queue: Where the handler runs; the session's ``Session/callbackQueue`` by default.
    ///   - responseSerializer: Turns the response into a value.
    ///   - completionHandler: The handler.
    /// - Returns: The request.
    @discardableResult
    public func response<Serializer: DataResponseSerializerProtocol>(
        queue: DispatchQueue? = nil,
        responseSerializer: Serializer,
        completionHandler: @escaping @Sendable (DataResponse<Serializer.SerializedObject, KiteError>) -> Void
    ) -> Self {
        let queue = queue ?? self.context.callbackQueue
        self.appendHandler { [self] outcome in
            let response = self.makeResponse(outcome, using: responseSerializer)
            queue.async { completionHandler(response) }
        }
        return self
    }

    /// Calls `completionHandler` once with the body as `Data`, on `queue`.
    ///
    /// ```swift
    /// session.request("http://127.0.0.1:8080/bytes/4").responseData { response in print(response.value as Any) }
    /// ```
    ///
    /// - Parameters:
    ///   - queue: Where the handler runs; the session's ``Session/callbackQueue`` by default.
    ///   - emptyResponseCodes: Status codes whose empty body is allowed.
    ///   - emptyRequestMethods: Methods whose empty body is allowed.
    ///   - completionHandler: The handler.
    /// - Returns: The request.
    @discardableResult
    public func responseData(
        queue: DispatchQueue? = nil,
        emptyResponseCodes: Set<Int> = DataResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPRequest.Method> = DataResponseSerializer.defaultEmptyRequestMethods,
        completionHandler: @escaping @Sendable (DataResponse<Data, KiteError>) -> Void
    ) -> Self {
        self.response(
            queue: queue,
            responseSerializer: DataResponseSerializer(
                emptyResponseCodes: emptyResponseCodes,
                emptyRequestMethods: emptyRequestMethods
            ),
            completionHandler: completionHandler
        )
    }

    /// Calls `completionHandler` once with the body as a `String`, on `queue`.
    ///
    /// ```swift
    /// session.request("http://127.0.0.1:8080/status/418")
    ///     .validate(statusCode: 200..<300)
    ///     .responseString(queue: .global()) { response in print(response.result) }
    /// ```
    ///
    /// - Parameters:
    ///   - queue: Where the handler runs; the session's ``Session/callbackQueue`` by default.
    ///   - encoding: The encoding; `nil` uses the `Content-Type` charset, else UTF-8 for JSON, else ISO-8859-1.
    ///   - emptyResponseCodes: Status codes whose empty body gives `""`.
    ///   - emptyRequestMethods: Methods whose empty body gives `""`.
    ///   - completionHandler: The handler.
    /// - Returns: The request.
    @discardableResult
    public func responseString(
        queue: DispatchQueue? = nil,
        encoding: String.Encoding? = nil,
        emptyResponseCodes: Set<Int> = StringResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPRequest.Method> = StringResponseSerializer.defaultEmptyRequestMethods,
        completionHandler: @escaping @Sendable (DataResponse<String, KiteError>) -> Void
    ) -> Self {
        self.response(
            queue: queue,
            responseSerializer: StringResponseSerializer(
                encoding: encoding,
                emptyResponseCodes: emptyResponseCodes,
                emptyRequestMethods: emptyRequestMethods
            ),
            completionHandler: completionHandler
        )
    }

    /// Calls `completionHandler` once with the body as untyped JSON, on `queue`.
    ///
    /// ```swift
    /// session.request("http://127.0.0.1:8080/json").responseJSON { response in print(response.value as Any) }
    /// ```
    ///
    /// - Parameters:
    ///   - queue: Where the handler runs; the session's ``Session/callbackQueue`` by default.
    ///   - emptyResponseCodes: Status codes whose empty body gives `.null`.
    ///   - emptyRequestMethods: Methods whose empty body gives `.null`.
    ///   - readingOptions: How the JSON is read; without `.fragmentsAllowed` only an object or array is accepted.
    ///   - removesKeysWithNullValues: Whether `null` members and array elements are removed, at every depth.
    ///   - completionHandler: The handler.
    /// - Returns: The request.
    @discardableResult
    public func responseJSON(
        queue: DispatchQueue? = nil,
        emptyResponseCodes: Set<Int> = JSONResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPRequest.Method> = JSONResponseSerializer.defaultEmptyRequestMethods,
        readingOptions: JSONSerialization.ReadingOptions = .fragmentsAllowed,
        removesKeysWithNullValues: Bool = false,
        completionHandler: @escaping @Sendable (DataResponse<JSONValue, KiteError>) -> Void
    ) -> Self {
        self.response(
            queue: queue,
            responseSerializer: JSONResponseSerializer(
                emptyResponseCodes: emptyResponseCodes,
                emptyRequestMethods: emptyRequestMethods,
                readingOptions: readingOptions,
                removesKeysWithNullValues: removesKeysWithNullValues
            ),
            completionHandler: completionHandler
        )
    }

    /// Calls `completionHandler` once with the body decoded as `type`, on `queue`.
    ///
    /// ```swift
    /// session.request("http://127.0.0.1:8080/get").responseDecodable(of: Echo.self) { response in
    ///     print(response.value?.url ?? "")
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - type: The type to decode.
    ///   - queue: Where the handler runs; the session's ``Session/callbackQueue`` by default.
    ///   - decoder: The decoder; `JSONDecoder` by default.
    ///   - emptyResponseCodes: Status codes whose empty body gives the type's empty value.
    ///   - emptyRequestMethods: Methods whose empty body gives the type's empty value.
    ///   - completionHandler: The handler.
    /// - Returns: The request.
    @discardableResult
    public func responseDecodable<Value: Decodable & Sendable>(
        of type: Value.Type = Value.self,
        queue: DispatchQueue? = nil,
        decoder: any DataDecoder = JSONDecoder(),
        emptyResponseCodes: Set<Int> = DecodableResponseSerializer<Value>.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPRequest.Method> = DecodableResponseSerializer<Value>.defaultEmptyRequestMethods,
        completionHandler: @escaping @Sendable (DataResponse<Value, KiteError>) -> Void
    ) -> Self {
        self.response(
            queue: queue,
            responseSerializer: DecodableResponseSerializer<Value>(
                decoder: decoder,
                emptyResponseCodes: emptyResponseCodes,
                emptyRequestMethods: emptyRequestMethods
            ),
            completionHandler: completionHandler
        )
    }

    /// Calls `completionHandler` once with the body decoded from a property list, on `queue`.
    ///
    /// ```swift
    /// struct Settings: Decodable, Sendable { let name: String }
    /// session.request("https://example.com/settings.plist").responsePropertyList(of: Settings.self) { response in
    ///     print(response.value?.name ?? "")
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - type: The type to decode.
    ///   - queue: Where the handler runs; the session's ``Session/callbackQueue`` by default.
    ///   - completionHandler: The handler.
    /// - Returns: The request.
    @discardableResult
    public func responsePropertyList<Value: Decodable & Sendable>(
        of type: Value.Type = Value.self,
        queue: DispatchQueue? = nil,
        completionHandler: @escaping @Sendable (DataResponse<Value, KiteError>) -> Void
    ) -> Self {
        self.responseDecodable(
            of: type,
            queue: queue,
            decoder: PropertyListDecoder(),
            completionHandler: completionHandler
        )
    }
}
