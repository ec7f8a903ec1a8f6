import Foundation
import HTTPTypes
import HTTPTypesFoundation

/// Reads an image's format and pixel size into an ``ImageInfo``: AFNetworking's `AFImageResponseSerializer`,
/// whose acceptance it keeps by default (`image/*` types it names, `200..<300`).
///
/// Linux has no `UIImage`, so the value is the header's facts and the bytes; on Apple platforms
/// ``ImageInfo`` also makes the `UIImage` or `NSImage`. The scale comes from an `@2x` or `@3x` suffix of the
/// request's URL unless ``imageScale`` is set.
///
/// ```swift
/// let info = try await session.request("http://127.0.0.1:8080/image/png")
///     .serializingResponse(using: ImageResponseSerializer())
///     .value
/// print(info.format, info.pixelWidth, info.pixelHeight)
/// ```
public struct ImageResponseSerializer: ResponseAcceptingSerializer {
    /// Which responses are accepted; ``ResponseAcceptance/image`` by default.
    public var acceptance: ResponseAcceptance
    /// The scale of every image; `nil` takes it from the URL (`@2x`, `@3x`), else 1.
    public var imageScale: Double?

    /// Creates the serializer.
    ///
    /// - Parameters:
    ///   - acceptance: Which responses are accepted; AFNetworking's image types by default.
    ///   - imageScale: The scale of every image; `nil` takes it from the URL.
    public init(acceptance: ResponseAcceptance = .image, imageScale: Double? = nil) {
        self.acceptance = acceptance
        self.imageScale = imageScale
    }

    public func serialize(
        request: HTTPRequest?,
        response: HTTPResponse?,
        data: Data?,
        error: KiteError?
    ) throws -> ImageInfo {
        try self.checkAcceptance(response: response, data: data, error: error)
        guard let data, !data.isEmpty else {
            throw KiteError(
                code: .responseSerializationFailed,
                message: "the response body is empty, so it is not an image",
                response: response
            )
        }
        do {
            return try ImageInfo(data: data, scale: self.imageScale ?? ImageInfo.scale(for: request?.url))
        } catch {
            throw error.carrying(response)
        }
    }
}

extension ImageInfo: ResponseObjectConvertible {
    /// On Apple platforms the `UIImage` or `NSImage`; on Linux this ``ImageInfo``.
    ///
    /// - Returns: The image object.
    public func responseObject() -> Any? {
        #if canImport(UIKit) || canImport(AppKit)
        self.image
        #else
        self
        #endif
    }
}
