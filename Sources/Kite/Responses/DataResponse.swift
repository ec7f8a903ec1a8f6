import Foundation
import HTTPTypes

/// Everything a data request produced: the request as sent, the response head, the body, the
/// timeline and the serialized result.
///
/// The body is kept even when validation or serialization failed, so error bodies can be read:
///
/// ```swift
/// let response = await session.request("http://127.0.0.1:8080/status/404")
///     .validate()
///     .serializingDecodable(Echo.self)
///     .response
/// if case .failure(let error) = response.result {
///     print(error, response.data?.count ?? 0)
/// }
/// ```
public struct DataResponse<Success: Sendable, Failure: Error>: Sendable {
    /// The request head as sent, with default headers; `nil` when it could not be built.
    public let request: HTTPRequest?
    /// The response head; `nil` when no response arrived.
    public let response: HTTPResponse?
    /// The URL that answered, after redirects.
    public let url: URL?
    /// The response body, kept even when the result is a failure.
    public let data: Data?
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
    ///   - data: The body.
    ///   - metrics: The timeline.
    ///   - result: The result.
    public init(
        request: HTTPRequest?,
        response: HTTPResponse?,
        url: URL? = nil,
        data: Data?,
        metrics: ResponseMetrics?,
        result: Result<Success, Failure>
    ) {
        self.request = request
        self.response = response
        self.url = url
        self.data = data
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
    ) -> DataResponse<NewSuccess, Failure> {
        self.replacingResult(self.result.map(transform))
    }

    /// The response with its value transformed by a function that can fail.
    ///
    /// - Parameter transform: Turns the value into another, or throws.
    /// - Returns: The response with the new value, or with the thrown error.
    public func tryMap<NewSuccess: Sendable>(
        _ transform: (Success) throws -> NewSuccess
    ) -> DataResponse<NewSuccess, any Error> {
        self.replacingResult(self.result.tryMapping(transform))
    }

    /// The response with its value turned into another result.
    ///
    /// - Parameter transform: Turns the value into a new result.
    /// - Returns: The response with that result.
    public func flatMap<NewSuccess: Sendable>(
        _ transform: (Success) -> Result<NewSuccess, Failure>
    ) -> DataResponse<NewSuccess, Failure> {
        self.replacingResult(self.result.flatMap(transform))
    }

    /// The response with its error transformed.
    ///
    /// - Parameter transform: Turns the error into another.
    /// - Returns: The response with the new error; values are kept.
    public func mapError<NewFailure: Error>(
        _ transform: (Failure) -> NewFailure
    ) -> DataResponse<Success, NewFailure> {
        self.replacingResult(self.result.mapError(transform))
    }

    /// The response with its error transformed by a function that can fail.
    ///
    /// - Parameter transform: Turns the error into another, or throws.
    /// - Returns: The response with the new error, or with the thrown one.
    public func tryMapError<NewFailure: Error>(
        _ transform: (Failure) throws -> NewFailure
    ) -> DataResponse<Success, any Error> {
        self.replacingResult(self.result.tryMappingError(transform))
    }

    private func replacingResult<S: Sendable, F: Error>(_ result: Result<S, F>) -> DataResponse<S, F> {
        DataResponse<S, F>(
            request: self.request,
            response: self.response,
            url: self.url,
            data: self.data,
            metrics: self.metrics,
            result: result
        )
    }
}

extension DataResponse: CustomStringConvertible, CustomDebugStringConvertible {
    /// `SUCCESS` or `FAILURE: <error>`.
    public var description: String {
        switch self.result {
        case .success: "SUCCESS"
        case .failure(let error): "FAILURE: \(error)"
        }
    }

    /// The request, status, body size, metrics and result, on several lines.
    public var debugDescription: String {
        let request = self.request.map { "\(RequestSummary($0))" } ?? "none"
        let status = self.response.map { "\($0.status.code)" } ?? "none"
        let size = self.data.map { "\($0.count) bytes" } ?? "none"
        let metrics = self.metrics.map(\.description) ?? "none"
        return """
            [Request]: \(request)
            [Response]: \(status)
            [Data]: \(size)
            [Metrics]: \(metrics)
            [Result]: \(self.description)
            """
    }
}

extension Result {
    /// The value transformed by a function that can fail; the thrown error becomes the failure
    /// (``DataResponse/tryMap(_:)``, ``DownloadResponse/tryMap(_:)``).
    func tryMapping<NewSuccess>(_ transform: (Success) throws -> NewSuccess) -> Result<NewSuccess, any Error> {
        switch self {
        case .success(let value): Result<NewSuccess, any Error> { try transform(value) }
        case .failure(let error): .failure(error)
        }
    }

    /// The error transformed by a function that can fail; a thrown error replaces it
    /// (``DataResponse/tryMapError(_:)``, ``DownloadResponse/tryMapError(_:)``).
    func tryMappingError<NewFailure: Error>(_ transform: (Failure) throws -> NewFailure) -> Result<Success, any Error> {
        switch self {
        case .success(let value):
            return .success(value)
        case .failure(let error):
            do {
                return .failure(try transform(error))
            } catch {
                return .failure(error)
            }
        }
    }
}
