import Foundation
import HTTPTypes

/// The checks behind every request kind's `validate` methods.
enum ResponseValidation {
    /// A validator for the pipeline from a check of the response: a ``KiteError`` it returns is kept,
    /// any other error becomes `responseValidationFailed` with it as the underlying error. The pipeline
    /// names the request in the error (`KiteError.naming`), so a validator carries no summary of its own.
    static func validator(
        _ check: @escaping @Sendable (RequestOutcome, HTTPResponse) -> Result<Void, any Error>
    ) -> BaseRequest.Validator {
        { outcome in
            guard let response = outcome.response else { return nil }
            switch check(outcome, response) {
            case .success:
                return nil
            case .failure(let error as KiteError):
                return error
            case .failure(let error):
                return KiteError(
                    code: .responseValidationFailed,
                    message: "custom validation failed: \(error)",
                    response: response,
                    underlyingError: error
                )
            }
        }
    }

    /// The validator of every request kind's `validate()`: the status in `200..<300`, then, when the
    /// request has an `Accept` header, `Content-Type` against it. One validator for both checks, so
    /// the common `validate()` costs one closure.
    static func standard(
        bodyIsEmpty: @escaping @Sendable (RequestOutcome, HTTPResponse) -> Bool
    ) -> BaseRequest.Validator {
        Self.validator { outcome, response in
            if case .failure(let error) = Self.status(response, in: 200..<300) { return .failure(error) }
            guard let acceptable = Self.acceptedTypes(of: outcome.request) else { return .success(()) }
            return Self.contentType(
                response,
                bodyIsEmpty: bodyIsEmpty(outcome, response),
                acceptable: acceptable
            )
        }
    }

    static func status<Codes: Sequence>(_ response: HTTPResponse, in acceptable: Codes) -> Result<Void, any Error>
    where Codes.Element == Int {
        guard acceptable.contains(response.status.code) else {
            return .failure(
                KiteError(
                    code: .responseValidationFailed,
                    message: "response status \(response.status.code) is not in \(acceptable)",
                    response: response
                )
            )
        }
        return .success(())
    }

    /// Checks `Content-Type` against media types (wildcards allowed); an empty body always passes.
    static func contentType(
        _ response: HTTPResponse,
        bodyIsEmpty: Bool,
        acceptable: [String]
    ) -> Result<Void, any Error> {
        guard !bodyIsEmpty else { return .success(()) }
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

    /// The media types a request's `Accept` header lists, or `nil` without one.
    static func acceptedTypes(of request: HTTPRequest?) -> [String]? {
        request?.headerFields[.accept].map { accept in
            accept.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        }
    }
}
