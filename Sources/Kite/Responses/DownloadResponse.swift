import Foundation
import HTTPTypes

/// Everything a download produced: the request as sent, the response head, the file, the resume
/// token of a cancelled or broken download, the timeline and the serialized result.
///
/// ```swift
/// let response = await session.download("http://127.0.0.1:8080/bytes/1024").serializingDownloadedFileURL().response
/// print(response.fileURL as Any, response.resumeData?.count ?? 0)
/// ```
public struct DownloadResponse<Success: Sendable, Failure: Error>: Sendable {
    /// The request head as sent, with default headers; `nil` when it could not be built.
    public let request: HTTPRequest?
    /// The response head; `nil` when no response arrived.
    public let response: HTTPResponse?
    /// The URL that answered, after redirects.
    public let url: URL?
    /// The downloaded file at its destination (or temporary location); `nil` when the download failed.
    public let fileURL: URL?
    /// The token for ``Session/download(resumingWith:interceptor:requestModifier:to:)`` when the download was cancelled with
    /// resume data or broke off after bytes arrived.
    public let resumeData: Data?
    /// The timeline and byte counts, including serialization.
    public let metrics: ResponseMetrics?
    /// The serialized value or the error.
    public let result: Result<Success, Failure>

    /// Creates a response.
    ///
    /// - Parameters:
    ///   - request: The request head as sent.
    ///   - response: The response head.
    ///   - url: The URL that answered.
    ///   - fileURL: The file.
    ///   - resumeData: The resume token.
    ///   - metrics: The timeline.
    ///   - result: The result.
    public init(
        request: HTTPRequest?,
        response: HTTPResponse?,
        url: URL? = nil,
        fileURL: URL?,
        resumeData: Data?,
        metrics: ResponseMetrics?,
        result: Result<Success, Failure>
    ) {
        self.request = request
        self.response = response
        self.url = url
        self.fileURL = fileURL
        self.resumeData = resumeData
        self.metrics = metrics
        self.result = result
    }

    /// The value, if the result is a success.
    public var value: Success? {
        guard case .success(let value) = self.result else { return nil }
        return value
    }

    /// The error, if the result is a failure.
    public var error: Failure? {
        guard case .failure(let error) = self.result else { return nil }
        return error
    }

    /// The response with its value transformed.
    ///
    /// - Parameter transform: Turns the value into another.
    /// - Returns: The response with the new value; failures are kept.
    public func map<NewSuccess: Sendable>(
        _ transform: (Success) -> NewSuccess
    ) -> DownloadResponse<NewSuccess, Failure> {
        self.replacingResult(self.result.map(transform))
    }

    /// The response with its value transformed by a function that can fail.
    ///
    /// ```swift
    /// let size = response.tryMap { url in try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int }
    /// ```
    ///
    /// - Parameter transform: Turns the value into another, or throws.
    /// - Returns: The response with the new value, or with the thrown error.
    public func tryMap<NewSuccess: Sendable>(
        _ transform: (Success) throws -> NewSuccess
    ) -> DownloadResponse<NewSuccess, any Error> {
        self.replacingResult(self.result.tryMapping(transform))
    }

    /// The response with its value turned into another result.
    ///
    /// - Parameter transform: Turns the value into a new result.
    /// - Returns: The response with that result.
    public func flatMap<NewSuccess: Sendable>(
        _ transform: (Success) -> Result<NewSuccess, Failure>
    ) -> DownloadResponse<NewSuccess, Failure> {
        self.replacingResult(self.result.flatMap(transform))
    }

    /// The response with its error transformed.
    ///
    /// - Parameter transform: Turns the error into another.
    /// - Returns: The response with the new error; values are kept.
    public func mapError<NewFailure: Error>(
        _ transform: (Failure) -> NewFailure
    ) -> DownloadResponse<Success, NewFailure> {
        self.replacingResult(self.result.mapError(transform))
    }

    /// The response with its error transformed by a function that can fail.
    ///
    /// - Parameter transform: Turns the error into another, or throws.
    /// - Returns: The response with the new error, or with the thrown one.
    public func tryMapError<NewFailure: Error>(
        _ transform: (Failure) throws -> NewFailure
    ) -> DownloadResponse<Success, any Error> {
        self.replacingResult(self.result.tryMappingError(transform))
    }

    private func replacingResult<S: Sendable, F: Error>(_ result: Result<S, F>) -> DownloadResponse<S, F> {
        DownloadResponse<S, F>(
            request: self.request,
            response: self.response,
            url: self.url,
            fileURL: self.fileURL,
            resumeData: self.resumeData,
            metrics: self.metrics,
            result: result
        )
    }
}

extension DownloadResponse: CustomStringConvertible {
    /// `SUCCESS` or `FAILURE: <error>`.
    public var description: String {
        switch self.result {
        case .success: "SUCCESS"
        case .failure(let error): "FAILURE: \(error)"
        }
    }
}
