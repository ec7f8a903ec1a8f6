import Dispatch
import Foundation

extension DataRequest {
    /// The body as an untyped property list (XML, binary or OpenStep).
    ///
    /// ```swift
    /// let plist = try await session.request("https://example.com/settings.plist")
    ///     .serializingPropertyList(options: [])
    ///     .value
    /// print(plist["name"]?.stringValue ?? "")
    /// ```
    ///
    /// - Parameters:
    ///   - options: The read options.
    ///   - acceptance: Which responses are accepted; any by default (``ResponseAcceptance/propertyList`` is
    ///     AFNetworking's).
    ///   - automaticallyCancelling: Whether cancelling the awaiting task cancels the request.
    /// - Returns: The task to await.
    public func serializingPropertyList(
        options: PropertyListSerialization.ReadOptions,
        acceptance: ResponseAcceptance = .any,
        automaticallyCancelling: Bool = true
    ) -> DataTask<PropertyListValue> {
        self.serializingResponse(
            using: PropertyListResponseSerializer(readOptions: options, acceptance: acceptance),
            automaticallyCancelling: automaticallyCancelling
        )
    }

    /// Calls `completionHandler` once with the body as an untyped property list, on `queue`.
    ///
    /// ```swift
    /// session.request("https://example.com/settings.plist").responsePropertyList(options: []) { response in
    ///     print(response.value?["name"]?.stringValue ?? "")
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - queue: Where the handler runs; the session's ``Session/callbackQueue`` by default.
    ///   - options: The read options.
    ///   - acceptance: Which responses are accepted; any by default.
    ///   - completionHandler: The handler.
    /// - Returns: The request.
    @discardableResult
    public func responsePropertyList(
        queue: DispatchQueue? = nil,
        options: PropertyListSerialization.ReadOptions,
        acceptance: ResponseAcceptance = .any,
        completionHandler: @escaping @Sendable (DataResponse<PropertyListValue, KiteError>) -> Void
    ) -> Self {
        self.response(
            queue: queue,
            responseSerializer: PropertyListResponseSerializer(readOptions: options, acceptance: acceptance),
            completionHandler: completionHandler
        )
    }

    /// The body's image format and pixel size, read from its header.
    ///
    /// ```swift
    /// let info = try await session.request("http://127.0.0.1:8080/image/png").serializingImage().value
    /// print(info.format, info.pixelWidth, info.pixelHeight)
    /// ```
    ///
    /// - Parameters:
    ///   - acceptance: Which responses are accepted; any by default (the format is read from the bytes, so an
    ///     image sent as `application/octet-stream` works); ``ResponseAcceptance/image`` is AFNetworking's.
    ///   - imageScale: The scale; `nil` takes it from the URL's `@2x` / `@3x` suffix.
    ///   - automaticallyCancelling: Whether cancelling the awaiting task cancels the request.
    /// - Returns: The task to await.
    public func serializingImage(
        acceptance: ResponseAcceptance = .any,
        imageScale: Double? = nil,
        automaticallyCancelling: Bool = true
    ) -> DataTask<ImageInfo> {
        self.serializingResponse(
            using: ImageResponseSerializer(acceptance: acceptance, imageScale: imageScale),
            automaticallyCancelling: automaticallyCancelling
        )
    }

    /// Calls `completionHandler` once with the body's image format and pixel size, on `queue`.
    ///
    /// ```swift
    /// session.request("http://127.0.0.1:8080/image/png").responseImage { response in
    ///     print(response.value?.pixelWidth ?? 0)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - queue: Where the handler runs; the session's ``Session/callbackQueue`` by default.
    ///   - acceptance: Which responses are accepted; any by default (the format is read from the bytes, so an
    ///     image sent as `application/octet-stream` works); ``ResponseAcceptance/image`` is AFNetworking's.
    ///   - imageScale: The scale; `nil` takes it from the URL's `@2x` / `@3x` suffix.
    ///   - completionHandler: The handler.
    /// - Returns: The request.
    @discardableResult
    public func responseImage(
        queue: DispatchQueue? = nil,
        acceptance: ResponseAcceptance = .any,
        imageScale: Double? = nil,
        completionHandler: @escaping @Sendable (DataResponse<ImageInfo, KiteError>) -> Void
    ) -> Self {
        self.response(
            queue: queue,
            responseSerializer: ImageResponseSerializer(acceptance: acceptance, imageScale: imageScale),
            completionHandler: completionHandler
        )
    }
}
