import Dispatch
import Foundation
import HTTPTypes
import NIOCore

extension DownloadRequest {
    /// Serializes the downloaded file with `serializer` for `async` callers.
    ///
    /// ```swift
    /// let size = try await session.download("http://127.0.0.1:8080/bytes/8")
    ///     .serializingDownload(using: DataResponseSerializer())
    ///     .value.count
    /// ```
    ///
    /// - Parameters:
    ///   - serializer: Turns the file into a value.
    ///   - automaticallyCancelling: Whether cancelling the awaiting task cancels the download.
    /// - Returns: The task to await.
    public func serializingDownload<Serializer: DownloadResponseSerializerProtocol>(
        using serializer: Serializer,
        automaticallyCancelling: Bool = true
    ) -> DownloadTask<Serializer.SerializedObject> {
        let promise = Promise<DownloadResponse<Serializer.SerializedObject, KiteError>>()
        self.appendHandler { [self] outcome in
            promise.fulfill(self.makeResponse(outcome, using: serializer))
        }
        return DownloadTask(request: self, promise: promise, automaticallyCancelling: automaticallyCancelling)
    }

    /// The downloaded file's URL.
    ///
    /// ```swift
    /// let fileURL = try await session.download("http://127.0.0.1:8080/bytes/8").serializingDownloadedFileURL().value
    /// ```
    ///
    /// - Parameter automaticallyCancelling: Whether cancelling the awaiting task cancels the download.
    /// - Returns: The task to await.
    public func serializingDownloadedFileURL(automaticallyCancelling: Bool = true) -> DownloadTask<URL> {
        self.serializingDownload(using: URLResponseSerializer(), automaticallyCancelling: automaticallyCancelling)
    }

    /// The downloaded file's bytes.
    ///
    /// ```swift
    /// let bytes = try await session.download("http://127.0.0.1:8080/bytes/8").serializingData().value
    /// ```
    ///
    /// - Parameter automaticallyCancelling: Whether cancelling the awaiting task cancels the download.
    /// - Returns: The task to await.
    public func serializingData(automaticallyCancelling: Bool = true) -> DownloadTask<Data> {
        self.serializingDownload(using: DataResponseSerializer(), automaticallyCancelling: automaticallyCancelling)
    }

    /// The downloaded file as text.
    ///
    /// ```swift
    /// let html = try await session.download("http://127.0.0.1:8080/html").serializingString().value
    /// ```
    ///
    /// - Parameters:
    ///   - automaticallyCancelling: Whether cancelling the awaiting task cancels the download.
    ///   - encoding: The encoding; `nil` uses the `Content-Type` charset, else UTF-8 for JSON, else ISO-8859-1.
    /// - Returns: The task to await.
    public func serializingString(
        automaticallyCancelling: Bool = true,
        encoding: String.Encoding? = nil
    ) -> DownloadTask<String> {
        self.serializingDownload(
            using: StringResponseSerializer(encoding: encoding),
            automaticallyCancelling: automaticallyCancelling
        )
    }

    /// The downloaded file decoded as `type`.
    ///
    /// ```swift
    /// let json = try await session.download("http://127.0.0.1:8080/json").serializingDecodable(JSONValue.self).value
    /// ```
    ///
    /// - Parameters:
    ///   - type: The type to decode.
    ///   - automaticallyCancelling: Whether cancelling the awaiting task cancels the download.
    ///   - decoder: The decoder; `JSONDecoder` by default.
    /// - Returns: The task to await.
    public func serializingDecodable<Value: Decodable & Sendable>(
        _ type: Value.Type = Value.self,
        automaticallyCancelling: Bool = true,
        decoder: any DataDecoder = JSONDecoder()
    ) -> DownloadTask<Value> {
        self.serializingDownload(
            using: DecodableResponseSerializer<Value>(decoder: decoder),
            automaticallyCancelling: automaticallyCancelling
        )
    }

    /// Calls `completionHandler` once with the response serialized by `serializer`, on `queue`.
    ///
    /// ```swift
    /// session.download("http://127.0.0.1:8080/bytes/8")
    ///     .response(responseSerializer: URLResponseSerializer()) { response in print(response.value as Any) }
    /// ```
    ///
    /// - Parameters:
    ///   - queue: Where the handler runs; the session's ``Session/callbackQueue`` by default.
    ///   - responseSerializer: Turns the file into a value.
    ///   - completionHandler: The handler.
    /// - Returns: The request.
    @discardableResult
    public func response<Serializer: DownloadResponseSerializerProtocol>(
        queue: DispatchQueue? = nil,
        responseSerializer: Serializer,
        completionHandler: @escaping @Sendable (DownloadResponse<Serializer.SerializedObject, KiteError>) -> Void
    ) -> Self {
        let queue = queue ?? self.context.callbackQueue
        self.appendHandler { [self] outcome in
            let response = self.makeResponse(outcome, using: responseSerializer)
            queue.async { completionHandler(response) }
        }
        return self
    }

    /// Calls `completionHandler` once with the downloaded file's URL, on `queue`.
    ///
    /// ```swift
    /// session.download("http://127.0.0.1:8080/bytes/8").responseURL { response in print(response.fileURL as Any) }
    /// ```
    ///
    /// - Parameters:
    ///   - queue: Where the handler runs; the session's ``Session/callbackQueue`` by default.
    ///   - completionHandler: The handler.
    /// - Returns: The request.
    @discardableResult
    public func responseURL(
        queue: DispatchQueue? = nil,
        completionHandler: @escaping @Sendable (DownloadResponse<URL, KiteError>) -> Void
    ) -> Self {
        self.response(queue: queue, responseSerializer: URLResponseSerializer(), completionHandler: completionHandler)
    }

    /// Calls `completionHandler` once with the downloaded file's bytes, on `queue`.
    ///
    /// ```swift
    /// session.download("http://127.0.0.1:8080/bytes/8").responseData { response in print(response.value as Any) }
    /// ```
    ///
    /// - Parameters:
    ///   - queue: Where the handler runs; the session's ``Session/callbackQueue`` by default.
    ///   - completionHandler: The handler.
    /// - Returns: The request.
    @discardableResult
    public func responseData(
        queue: DispatchQueue? = nil,
        completionHandler: @escaping @Sendable (DownloadResponse<Data, KiteError>) -> Void
    ) -> Self {
        self.response(queue: queue, responseSerializer: DataResponseSerializer(), completionHandler: completionHandler)
    }

    /// Calls `completionHandler` once with the downloaded file as text, on `queue`.
    ///
    /// ```swift
    /// session.download("http://127.0.0.1:8080/html").responseString { response in print(response.value ?? "") }
    /// ```
    ///
    /// - Parameters:
    ///   - queue: Where the handler runs; the session's ``Session/callbackQueue`` by default.
    ///   - encoding: The encoding; `nil` uses the `Content-Type` charset, else UTF-8 for JSON, else ISO-8859-1.
    ///   - completionHandler: The handler.
    /// - Returns: The request.
    @discardableResult
    public func responseString(
        queue: DispatchQueue? = nil,
        encoding: String.Encoding? = nil,
        completionHandler: @escaping @Sendable (DownloadResponse<String, KiteError>) -> Void
    ) -> Self {
        self.response(
            queue: queue,
            responseSerializer: StringResponseSerializer(encoding: encoding),
            completionHandler: completionHandler
        )
    }

    /// Calls `completionHandler` once with the downloaded file decoded as `type`, on `queue`.
    ///
    /// ```swift
    /// session.download("http://127.0.0.1:8080/json").responseDecodable(of: JSONValue.self) { print($0.value as Any) }
    /// ```
    ///
    /// - Parameters:
    ///   - type: The type to decode.
    ///   - queue: Where the handler runs; the session's ``Session/callbackQueue`` by default.
    ///   - decoder: The decoder.
    ///   - completionHandler: The handler.
    /// - Returns: The request.
    @discardableResult
    public func responseDecodable<Value: Decodable & Sendable>(
        of type: Value.Type = Value.self,
        queue: DispatchQueue? = nil,
        decoder: any DataDecoder = JSONDecoder(),
        completionHandler: @escaping @Sendable (DownloadResponse<Value, KiteError>) -> Void
    ) -> Self {
        self.response(
            queue: queue,
            responseSerializer: DecodableResponseSerializer<Value>(decoder: decoder),
            completionHandler: completionHandler
        )
    }

    func makeResponse<Serializer: DownloadResponseSerializerProtocol>(
        _ outcome: RequestOutcome,
        using serializer: Serializer
    ) -> DownloadResponse<Serializer.SerializedObject, KiteError> {
        let start = NIODeadline.now()
        let result = self.serialize(outcome) {
            try serializer.serializeDownload(
                request: outcome.request,
                response: outcome.response,
                fileURL: outcome.fileURL,
                error: outcome.error
            )
        }
        let response = DownloadResponse(
            request: outcome.request,
            response: outcome.response,
            url: outcome.url,
            fileURL: outcome.fileURL,
            resumeData: outcome.resumeData,
            metrics: outcome.metrics?.withSerializationDuration(start.duration(to: .now())),
            result: result
        )
        self.context.eventMonitor?.request(self, didParseResponse: response)
        return response
    }
}
