import Foundation
import HTTPTypes

extension DataRequest {
    /// A check of a response: `.success(())` to accept it, `.failure(error)` to fail the request.
    public typealias Validation =
        @Sendable (_ request: HTTPRequest?, _ response: HTTPResponse, _ data: Data?) -> Result<Void, any Error>

    /// Adds a custom check. Validators run in the order added; the first failure wins, and
    /// validators only run when a response arrived without another error.
    ///
    /// ```swift
    /// session.request("http://127.0.0.1:8080/get")
    ///     .validate { _, response, _ in
    ///         response.headerFields[.contentType] != nil
    ///             ? .success(())
    ///             : .failure(KiteError(code: .responseValidationFailed, message: "no Content-Type"))
    ///     }
    /// ```
    ///
    /// - Parameter validation: The check. A ``KiteError`` it returns is kept; any other error is
    ///   reported as `responseValidationFailed` with it as the underlying error.
    /// - Returns: The request.
    @discardableResult
    public func validate(_ validation: @escaping Validation) -> Self {
        self.appendValidator(
            ResponseValidation.validator { outcome, response in
                validation(outcome.request, response, outcome.data)
            }
        )
        return self
    }

    /// Fails the request unless its status code is in `acceptableStatusCodes`.
    ///
    /// ```swift
    /// session.request("http://127.0.0.1:8080/status/418").validate(statusCode: 200..<300)
    /// ```
    ///
    /// - Parameter acceptableStatusCodes: The accepted codes, such as `200..<300` or `[200, 204]`.
    /// - Returns: The request.
    @discardableResult
    public func validate<Codes: Sequence & Sendable>(statusCode acceptableStatusCodes: Codes) -> Self
    where Codes.Element == Int {
        self.validate { _, response, _ in ResponseValidation.status(response, in: acceptableStatusCodes) }
    }

    /// Fails the request unless its `Content-Type` matches one of `acceptableContentTypes`
    /// (wildcards `*/*` and `text/*` allowed). An empty body always passes.
    ///
    /// ```swift
    /// session.request("http://127.0.0.1:8080/json").validate(contentType: ["application/json"])
    /// ```
    ///
    /// - Parameter acceptableContentTypes: The accepted media types.
    /// - Returns: The request.
    @discardableResult
    public func validate(contentType acceptableContentTypes: [String]) -> Self {
        self.validate { _, response, data in
            ResponseValidation.contentType(
                response,
                bodyIsEmpty: data?.isEmpty ?? true,
                acceptable: acceptableContentTypes
            )
        }
    }

    /// Fails the request unless its status is in `200..<300` and, when the request has an `Accept`
    /// header, its `Content-Type` matches it.
    ///
    /// ```swift
    /// let data = try await session.request("http://127.0.0.1:8080/get").validate().serializingData().value
    /// ```
    ///
    /// - Returns: The request.
    @discardableResult
    public func validate() -> Self {
        self.appendValidator(
            ResponseValidation.standard { outcome, _ in outcome.data?.isEmpty ?? true }
        )
        return self
    }
}
