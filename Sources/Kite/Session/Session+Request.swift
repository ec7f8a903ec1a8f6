import Foundation
import HTTPTypes

extension Session {
    /// Creates a request whose untyped parameters are put in the query or body by `encoding`.
    ///
    /// Nothing is sent until a response handler or `serializing…` call is attached (or ``BaseRequest/resume()``
    /// is called when ``Configuration/startRequestsImmediately`` is off). A URL, parameter or header
    /// that is not valid never throws here: it becomes a ``KiteError`` in the response.
    ///
    /// ```swift
    /// let echo = try await session.request("http://127.0.0.1:8080/get", parameters: ["q": "swift nio", "page": 2])
    ///     .validate()
    ///     .serializingDecodable(Echo.self)
    ///     .value
    /// ```
    ///
    /// - Parameters:
    ///   - convertible: The URL.
    ///   - method: The method; `GET` by default.
    ///   - parameters: Parameters to encode, or `nil`.
    ///   - encoding: How to encode them; ``URLEncoding/default`` puts them in the query for
    ///     `GET`, `HEAD` and `DELETE` and in a form body otherwise.
    ///   - headers: Header fields; the session's defaults are added for fields not set here.
    ///   - interceptor: Adapts and retries this request, after the session's interceptor.
    ///   - requestModifier: A closure that can change the draft last, for example its timeout.
    /// - Returns: The request.
    public func request(
        _ convertible: any URLConvertible,
        method: HTTPRequest.Method = .get,
        parameters: Parameters? = nil,
        encoding: any ParameterEncoding = URLEncoding.defaultAsParameterEncoding,
        headers: HTTPFields? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        requestModifier: RequestModifier? = nil
    ) -> DataRequest {
        let draft = Self.makeDraft(convertible, method: method, headers: headers, modifier: requestModifier) { draft in
            try encoding.encode(draft, with: parameters)
        }
        return DataRequest(session: self, draft: draft).intercepted(by: interceptor)
    }

    /// Creates a request whose `Encodable` parameters are put in the query or body by `encoder`.
    ///
    /// ```swift
    /// struct Login: Encodable, Sendable { let email: String; let password: String }
    /// let response = await session.request(
    ///         "http://127.0.0.1:8080/post",
    ///         method: .post,
    ///         parameters: Login(email: "a@example.com", password: "secret"),
    ///         encoder: JSONParameterEncoder.default
    ///     )
    ///     .validate()
    ///     .serializingData()
    ///     .response
    /// ```
    ///
    /// - Parameters:
    ///   - convertible: The URL.
    ///   - method: The method; `GET` by default.
    ///   - parameters: The value to encode, or `nil`.
    ///   - encoder: How to encode it; ``URLEncodedFormParameterEncoder/default`` by default.
    ///   - headers: Header fields; the session's defaults are added for fields not set here.
    ///   - interceptor: Adapts and retries this request, after the session's interceptor.
    ///   - requestModifier: A closure that can change the draft last.
    /// - Returns: The request.
    public func request<Parameters: Encodable & Sendable>(
        _ convertible: any URLConvertible,
        method: HTTPRequest.Method = .get,
        parameters: Parameters? = nil,
        encoder: any ParameterEncoder = URLEncodedFormParameterEncoder.default,
        headers: HTTPFields? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        requestModifier: RequestModifier? = nil
    ) -> DataRequest {
        let draft = Self.makeDraft(convertible, method: method, headers: headers, modifier: requestModifier) { draft in
            try encoder.encode(parameters, into: draft)
        }
        return DataRequest(session: self, draft: draft).intercepted(by: interceptor)
    }

    /// Creates a request from a `URLRequest` or your own ``URLRequestConvertible`` router.
    ///
    /// ```swift
    /// var urlRequest = URLRequest(url: URL(string: "http://127.0.0.1:8080/anything")!)
    /// urlRequest.httpMethod = "PUT"
    /// let data = try await session.request(urlRequest).serializingData().value
    /// ```
    ///
    /// - Parameters:
    ///   - convertible: The request.
    ///   - interceptor: Adapts and retries this request, after the session's interceptor.
    ///   - requestModifier: A closure that can change the draft last.
    /// - Returns: The request.
    public func request(
        _ convertible: any URLRequestConvertible,
        interceptor: (any RequestInterceptor)? = nil,
        requestModifier: RequestModifier? = nil
    ) -> DataRequest {
        DataRequest(session: self, draft: Self.makeDraft(convertible, modifier: requestModifier)).intercepted(
            by: interceptor
        )
    }

    static func makeDraft(
        _ convertible: any URLConvertible,
        method: HTTPRequest.Method,
        headers: HTTPFields?,
        modifier: RequestModifier?,
        encode: (RequestDraft) throws -> RequestDraft
    ) -> Result<RequestDraft, KiteError> {
        let url: URL
        do {
            url = try convertible.asURL()
        } catch {
            let summary = RequestSummary(method: method, url: (convertible as? String) ?? "\(convertible)")
            return .failure(
                Self.wrap(error, code: .invalidURL, message: "the URL could not be made", request: summary)
            )
        }
        var draft = RequestDraft(method: method, url: url, headerFields: headers ?? [:])
        do {
            draft = try encode(draft)
        } catch {
            return .failure(
                Self.wrap(
                    error,
                    code: .parameterEncodingFailed,
                    message: "the parameters could not be encoded",
                    request: draft.summary
                )
            )
        }
        return Self.applying(modifier, to: draft)
    }

    static func makeDraft(
        _ convertible: any URLRequestConvertible,
        modifier: RequestModifier?
    ) -> Result<RequestDraft, KiteError> {
        let draft: RequestDraft
        do {
            draft = try convertible.asURLRequest().asRequestDraft()
        } catch {
            return .failure(
                Self.wrap(
                    error,
                    code: .invalidRequest,
                    message: "the URLRequest could not be made",
                    request: RequestSummary(methodName: "GET", url: "\(convertible)")
                )
            )
        }
        return Self.applying(modifier, to: draft)
    }

    static func applying(
        _ modifier: RequestModifier?,
        to draft: RequestDraft
    ) -> Result<RequestDraft, KiteError> {
        guard let modifier else { return .success(draft) }
        var modified = draft
        do {
            try modifier(&modified)
        } catch {
            return .failure(
                Self.wrap(
                    error,
                    code: .requestAdaptationFailed,
                    message: "the request modifier failed",
                    request: draft.summary
                )
            )
        }
        return .success(modified)
    }

    /// A ``KiteError`` thrown by user code is kept (naming the request); any other error is
    /// wrapped with `code` and a message that includes the error's own description.
    static func wrap(_ error: any Error, code: KiteError.Code, message: String, request: RequestSummary) -> KiteError {
        if let error = error as? KiteError {
            return error.naming(request)
        }
        return KiteError(code: code, message: "\(message): \(error)", request: request, underlyingError: error)
    }
}
