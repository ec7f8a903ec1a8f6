import Foundation
import HTTPTypes

extension DownloadRequest {
    /// A check of a download: `.success(())` to accept it, `.failure(error)` to fail it. The file is
    /// still at its temporary location; a failed download is never moved to its destination.
    public typealias Validation =
        @Sendable (_ request: HTTPRequest?, _ response: HTTPResponse, _ temporaryURL: URL?) -> Result<Void, any Error>

    /// Adds a custom check, run in order with the others before the file is moved into place.
    ///
    /// ```swift
    /// session.download(url).validate { _, response, _ in
    ///     response.headerFields[.eTag] != nil ? .success(()) : .failure(KiteError(code: .responseValidationFailed, message: "no ETag"))
    /// }
    /// ```
    ///
    /// - Parameter validation: The check.
    /// - Returns: The request.
    @discardableResult
    public func validate(_ validation: @escaping Validation) -> Self {
        self.appendValidator(
            ResponseValidation.validator { outcome, response in
                validation(outcome.request, response, outcome.fileURL)
            }
        )
        return self
    }

    /// Fails the download unless its status code is in `acceptableStatusCodes`.
    ///
    /// ```swift
    /// session.download("http://127.0.0.1:8080/status/404").validate(statusCode: 200..<300)
    /// ```
    ///
    /// - Parameter acceptableStatusCodes: The accepted codes.
    /// - Returns: The request.
    @discardableResult
    public func validate<Codes: Sequence & Sendable>(statusCode acceptableStatusCodes: Codes) -> Self
    where Codes.Element == Int {
        self.validate { _, response, _ in ResponseValidation.status(response, in: acceptableStatusCodes) }
    }

    /// Fails the download unless its `Content-Type` matches one of `acceptableContentTypes`; an empty
    /// file always passes.
    ///
    /// ```swift
    /// session.download("http://127.0.0.1:8080/image/png").validate(contentType: ["image/*"])
    /// ```
    ///
    /// - Parameter acceptableContentTypes: The accepted media types.
    /// - Returns: The request.
    @discardableResult
    public func validate(contentType acceptableContentTypes: [String]) -> Self {
        self.validate { _, response, fileURL in
            ResponseValidation.contentType(
                response,
                bodyIsEmpty: Self.isEmpty(fileURL),
                acceptable: acceptableContentTypes
            )
        }
    }

    /// Fails the download unless its status is in `200..<300` and, when the request has an `Accept`
    /// header, its `Content-Type` matches it.
    ///
    /// ```swift
    /// let fileURL = try await session.download(url).validate().serializingDownloadedFileURL().value
    /// ```
    ///
    /// - Returns: The request.
    @discardableResult
    public func validate() -> Self {
        self.appendValidator(
            ResponseValidation.standard { outcome, _ in Self.isEmpty(outcome.fileURL) }
        )
        return self
    }

    private static func isEmpty(_ fileURL: URL?) -> Bool {
        (fileURL.flatMap(DownloadFiles.size(of:)) ?? 0) == 0
    }
}
