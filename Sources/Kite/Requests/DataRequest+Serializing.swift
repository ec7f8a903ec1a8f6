import Foundation
import HTTPTypes

extension DataRequest {
    /// Serializes the response with `serializer` for `async` callers.
    ///
    /// Attaching starts the request (unless the session's `startRequestsImmediately` is off).
    ///
    /// ```swift
    /// let count = try await session.request("http://127.0.0.1:8080/bytes/8")
    ///     .serializingResponse(using: DataResponseSerializer())
    ///     .value.count
    /// ```
    ///
    /// - Parameters:
    ///   - serializer: Turns the response into a value.
    ///   - automaticallyCancelling: Whether cancelling the awaiting task cancels the request.
    /// - Returns: The task to await.
    public func serializingResponse<Serializer: DataResponseSerializerProtocol>(
        using serializer: Serializer,
        automaticallyCancelling: Bool = true
    ) -> DataTask<Serializer.SerializedObject> {
        let promise = Promise<DataResponse<Serializer.SerializedObject, KiteError>>()
        self.appendHandler { [self] outcome in
            promise.fulfill(self.makeResponse(outcome, using: serializer))
        }
        return DataTask(request: self, promise: promise, automaticallyCancelling: automaticallyCancelling)
    }

    /// The body as `Data`.
    ///
    /// ```swift
    /// let bytes = try await session.request("http://127.0.0.1:8080/bytes/16").serializingData().value
    /// ```
    ///
    /// - Parameters:
    ///   - automaticallyCancelling: Whether cancelling the awaiting task cancels the request.
    ///   - emptyResponseCodes: Status codes whose empty body is allowed.
    ///   - emptyRequestMethods: Methods whose empty body is allowed.
    /// - Returns: The task to await.
    public func serializingData(
        automaticallyCancelling: Bool = true,
        emptyResponseCodes: Set<Int> = DataResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPRequest.Method> = DataResponseSerializer.defaultEmptyRequestMethods
    ) -> DataTask<Data> {
        self.serializingResponse(
            using: DataResponseSerializer(
                emptyResponseCodes: emptyResponseCodes,
                emptyRequestMethods: emptyRequestMethods
            ),
            automaticallyCancelling: automaticallyCancelling
        )
    }

    /// The body as a `String`.
    ///
    /// ```swift
    /// let text = try await session.request("http://127.0.0.1:8080/encoding/utf8").serializingString().value
    /// ```
    ///
    /// - Parameters:
    ///   - automaticallyCancelling: Whether cancelling the awaiting task cancels the request.
    ///   - encoding: The encoding; `nil` uses the `Content-Type` charset, else UTF-8 for JSON, else ISO-8859-1.
    ///   - emptyResponseCodes: Status codes whose empty body gives `""`.
    ///   - emptyRequestMethods: Methods whose empty body gives `""`.
    /// - Returns: The task to await.
    public func serializingString(
        automaticallyCancelling: Bool = true,
        encoding: String.Encoding? = nil,
        emptyResponseCodes: Set<Int> = StringResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPRequest.Method> = StringResponseSerializer.defaultEmptyRequestMethods
    ) -> DataTask<String> {
        self.serializingResponse(
            using: StringResponseSerializer(
                encoding: encoding,
                emptyResponseCodes: emptyResponseCodes,
                emptyRequestMethods: emptyRequestMethods
            ),
            automaticallyCancelling: automaticallyCancelling
        )
    }

    /// The body as untyped JSON.
    ///
    /// ```swift
    /// let json = try await session.request("http://127.0.0.1:8080/json").serializingJSON().value
    /// print(json["slideshow"]?["title"]?.stringValue ?? "")
    /// ```
    ///
    /// - Parameters:
    ///   - automaticallyCancelling: Whether cancelling the awaiting task cancels the request.
    ///   - emptyResponseCodes: Status codes whose empty body gives `.null`.
    ///   - emptyRequestMethods: Methods whose empty body gives `.null`.
    ///   - readingOptions: How the JSON is read; without `.fragmentsAllowed` only an object or array is accepted.
    ///   - removesKeysWithNullValues: Whether `null` members and array elements are removed, at every depth.
    /// - Returns: The task to await.
    public func serializingJSON(
        automaticallyCancelling: Bool = true,
        emptyResponseCodes: Set<Int> = JSONResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPRequest.Method> = JSONResponseSerializer.defaultEmptyRequestMethods,
        readingOptions: JSONSerialization.ReadingOptions = .fragmentsAllowed,
        removesKeysWithNullValues: Bool = false
    ) -> DataTask<JSONValue> {
        self.serializingResponse(
            using: JSONResponseSerializer(
                emptyResponseCodes: emptyResponseCodes,
                emptyRequestMethods: emptyRequestMethods,
                readingOptions: readingOptions,
                removesKeysWithNullValues: removesKeysWithNullValues
            ),
            automaticallyCancelling: automaticallyCancelling
        )
    }

    /// The body decoded as `type`, with `JSONDecoder` unless another decoder is given.
    ///
    /// ```swift
    /// let echo = try await session.request("http://127.0.0.1:8080/get").serializingDecodable(Echo.self).value
    /// ```
    ///
    /// - Parameters:
    ///   - type: The type to decode.
    ///   - automaticallyCancelling: Whether cancelling the awaiting task cancels the request.
    ///   - decoder: The decoder.
    ///   - emptyResponseCodes: Status codes whose empty body gives the type's empty value.
    ///   - emptyRequestMethods: Methods whose empty body gives the type's empty value.
    /// - Returns: The task to await.
    public func serializingDecodable<Value: Decodable & Sendable>(
        _ type: Value.Type = Value.self,
        automaticallyCancelling: Bool = true,
        decoder: any DataDecoder = JSONDecoder(),
        emptyResponseCodes: Set<Int> = DecodableResponseSerializer<Value>.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPRequest.Method> = DecodableResponseSerializer<Value>.defaultEmptyRequestMethods
    ) -> DataTask<Value> {
        self.serializingResponse(
            using: DecodableResponseSerializer<Value>(
                decoder: decoder,
                emptyResponseCodes: emptyResponseCodes,
                emptyRequestMethods: emptyRequestMethods
            ),
            automaticallyCancelling: automaticallyCancelling
        )
    }

    /// The body decoded from a property list (XML or binary) as `type`.
    ///
    /// ```swift
    /// struct Settings: Decodable, Sendable { let name: String }
    /// let settings = try await session.request("https://example.com/settings.plist")
    ///     .serializingPropertyList(Settings.self)
    ///     .value
    /// ```
    ///
    /// - Parameters:
    ///   - type: The type to decode.
    ///   - automaticallyCancelling: Whether cancelling the awaiting task cancels the request.
    /// - Returns: The task to await.
    public func serializingPropertyList<Value: Decodable & Sendable>(
        _ type: Value.Type = Value.self,
        automaticallyCancelling: Bool = true
    ) -> DataTask<Value> {
        self.serializingDecodable(
            type,
            automaticallyCancelling: automaticallyCancelling,
            decoder: PropertyListDecoder()
        )
    }
}

/// The unserialized body: `Data?` as received, or the request's error.
struct PassthroughSerializer: DataResponseSerializerProtocol {
    func serialize(request: HTTPRequest?, response: HTTPResponse?, data: Data?, error: KiteError?) throws -> Data? {
        if let error { throw error }
        return data
    }
}
