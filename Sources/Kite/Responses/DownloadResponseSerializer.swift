import Foundation
import HTTPTypes

/// Turns a downloaded file into a value.
///
/// The built-in ``ResponseSerializer``s (data, string, JSON, Decodable) read the file and serialize
/// its bytes; ``URLResponseSerializer`` gives the file's URL without reading it.
///
/// ```swift
/// struct SizeSerializer: DownloadResponseSerializerProtocol {
///     func serializeDownload(request: HTTPRequest?, response: HTTPResponse?, fileURL: URL?, error: KiteError?) throws -> Int {
///         if let error { throw error }
///         return try FileManager.default.attributesOfItem(atPath: fileURL?.path ?? "")[.size] as? Int ?? 0
///     }
/// }
/// ```
public protocol DownloadResponseSerializerProtocol<SerializedObject>: Sendable {
    /// The value produced.
    associatedtype SerializedObject: Sendable

    /// Produces the value, or throws why it cannot.
    ///
    /// - Parameters:
    ///   - request: The request head as sent.
    ///   - response: The response head.
    ///   - fileURL: The downloaded file.
    ///   - error: The request's or a validator's error, if any.
    /// - Returns: The value.
    /// - Throws: The incoming error, or why the file cannot become the value.
    func serializeDownload(
        request: HTTPRequest?,
        response: HTTPResponse?,
        fileURL: URL?,
        error: KiteError?
    ) throws
        -> SerializedObject
}

extension ResponseSerializer {
    /// Reads the downloaded file and serializes its bytes like a data response.
    ///
    /// - Parameters:
    ///   - request: The request head as sent.
    ///   - response: The response head.
    ///   - fileURL: The downloaded file.
    ///   - error: The request's or a validator's error, if any.
    /// - Returns: The value.
    /// - Throws: The incoming error, `downloadFailed` when the file cannot be read, or the serializer's error.
    public func serializeDownload(
        request: HTTPRequest?,
        response: HTTPResponse?,
        fileURL: URL?,
        error: KiteError?
    )
        throws -> SerializedObject
    {
        if let error { throw error }
        guard let fileURL else {
            throw KiteError(code: .downloadFailed, message: "the download has no file to read", response: response)
        }
        let data: Data
        do {
            data = try DownloadFiles.contents(of: fileURL)
        } catch {
            throw KiteError(
                code: .downloadFailed,
                message: "the downloaded file \(fileURL.path) could not be read: \(error)",
                response: response,
                underlyingError: error
            )
        }
        return try self.serialize(request: request, response: response, data: data, error: nil)
    }
}

extension DataResponseSerializer: DownloadResponseSerializerProtocol {}
extension StringResponseSerializer: DownloadResponseSerializerProtocol {}
extension JSONResponseSerializer: DownloadResponseSerializerProtocol {}
extension DecodableResponseSerializer: DownloadResponseSerializerProtocol {}

/// Gives the downloaded file's URL.
///
/// ```swift
/// let fileURL = try await session.download("http://127.0.0.1:8080/bytes/16")
///     .serializingDownload(using: URLResponseSerializer())
///     .value
/// ```
public struct URLResponseSerializer: DownloadResponseSerializerProtocol {
    /// Creates the serializer.
    public init() {}

    public func serializeDownload(
        request: HTTPRequest?,
        response: HTTPResponse?,
        fileURL: URL?,
        error: KiteError?
    )
        throws -> URL
    {
        if let error { throw error }
        guard let fileURL else {
            throw KiteError(code: .downloadFailed, message: "the download has no file", response: response)
        }
        return fileURL
    }
}
