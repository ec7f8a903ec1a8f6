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
        let summary = self.summary
        self.appendValidator { outcome in
            guard let response = outcome.response else { return nil }
            switch validation(outcome.request, response, outcome.data) {
            case .success:
                return nil
            case .failure(let error as KiteError):
                return error
            case .failure(let error):
                return KiteError(
                    code: .responseValidationFailed,
                    message: "custom validation failed: \(error)",
                    request: summary,
                    response: response,
                    underlyingError: error
                )
            }
        }
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
        self.validate { _, response, _ in
            guard acceptableStatusCodes.contains(response.status.code) else {
                return .failure(
                    KiteError(
                        code: .responseValidationFailed,
                        message: "response status \(response.status.code) is not in \(acceptableStatusCodes)",
                        response: response
                    )
                )
            }
            return .success(())
        }
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
            Self.validateContentType(response: response, data: data, acceptable: acceptableContentTypes)
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
        self.validate(statusCode: 200..<300)
            .validate { request, response, data in
                guard let accept = request?.headerFields[.accept] else { return .success(()) }
                let acceptable = accept.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                return Self.validateContentType(response: response, data: data, acceptable: acceptable)
            }
    }

    private static func validateContentType(
        response: HTTPResponse,
        data: Data?,
        acceptable: [String]
    ) -> Result<Void, any Error> {
        guard let data, !data.isEmpty else { return .success(()) }
        let acceptableTypes = acceptable.compactMap(MediaType.init)
        if acceptableTypes.isEmpty || acceptableTypes.contains(where: { $0.type == "*" && $0.subtype == "*" }) {
            return .success(())
        }
        let list = acceptableTypes.map(\.description).joined(separator: ", ")
        guard let contentType = response.headerFields[.contentType] else {
            return .failure(
                KiteError(
                    code: .responseValidationFailed,
                    message: "the response has no Content-Type, but one of \(list) was expected",
                    response: response
                )
            )
        }
        guard let mediaType = MediaType(contentType), acceptableTypes.contains(where: { $0.matches(mediaType) }) else {
            return .failure(
                KiteError(
                    code: .responseValidationFailed,
                    message: "response Content-Type \"\(contentType)\" is not one of \(list)",
                    response: response
                )
            )
        }
        return .success(())
    }
}
