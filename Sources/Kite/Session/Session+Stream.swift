import Foundation
import HTTPTypes

extension Session {
    /// Creates a request whose body is delivered as it arrives (see ``DataStreamRequest``).
    ///
    /// ```swift
    /// for try await chunk in session.streamRequest("http://127.0.0.1:8080/stream/3").validate().streamingData() {
    ///     print(String(decoding: chunk, as: UTF8.self))
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - convertible: The URL.
    ///   - method: The method; `GET` by default.
    ///   - parameters: Parameters to encode, or `nil`.
    ///   - encoding: How to encode them.
    ///   - headers: Header fields.
    ///   - interceptor: Adapts and retries this request, after the session's interceptor.
    ///   - requestModifier: A closure that can change the draft last.
    /// - Returns: The request.
    public func streamRequest(
        _ convertible: any URLConvertible,
        method: HTTPRequest.Method = .get,
        parameters: Parameters? = nil,
        encoding: any ParameterEncoding = URLEncoding.defaultAsParameterEncoding,
        headers: HTTPFields? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        requestModifier: RequestModifier? = nil
    ) -> DataStreamRequest {
        let draft = Self.makeDraft(convertible, method: method, headers: headers, modifier: requestModifier) { draft in
            try encoding.encode(draft, with: parameters)
        }
        return DataStreamRequest(session: self, draft: draft).intercepted(by: interceptor)
    }

    /// Creates a streaming request whose `Encodable` parameters are put in the query or body by `encoder`.
    ///
    /// ```swift
    /// struct Prompt: Encodable, Sendable { let text: String }
    /// let events = session.streamRequest(
    ///     "http://127.0.0.1:8080/anything",
    ///     method: .post,
    ///     parameters: Prompt(text: "hi"),
    ///     encoder: JSONParameterEncoder.default
    /// ).streamingData()
    /// ```
    ///
    /// - Parameters:
    ///   - convertible: The URL.
    ///   - method: The method; `GET` by default.
    ///   - parameters: The value to encode, or `nil`.
    ///   - encoder: How to encode it.
    ///   - headers: Header fields.
    ///   - interceptor: Adapts and retries this request, after the session's interceptor.
    ///   - requestModifier: A closure that can change the draft last.
    /// - Returns: The request.
    public func streamRequest<Parameters: Encodable & Sendable>(
        _ convertible: any URLConvertible,
        method: HTTPRequest.Method = .get,
        parameters: Parameters? = nil,
        encoder: any ParameterEncoder = URLEncodedFormParameterEncoder.default,
        headers: HTTPFields? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        requestModifier: RequestModifier? = nil
    ) -> DataStreamRequest {
        let draft = Self.makeDraft(convertible, method: method, headers: headers, modifier: requestModifier) { draft in
            try encoder.encode(parameters, into: draft)
        }
        return DataStreamRequest(session: self, draft: draft).intercepted(by: interceptor)
    }

    /// Creates a streaming request from a `URLRequest` or your own router.
    ///
    /// ```swift
    /// let stream = session.streamRequest(URLRequest(url: URL(string: "http://127.0.0.1:8080/stream/2")!)).streamingData()
    /// ```
    ///
    /// - Parameters:
    ///   - convertible: The request.
    ///   - interceptor: Adapts and retries this request, after the session's interceptor.
    ///   - requestModifier: A closure that can change the draft last.
    /// - Returns: The request.
    public func streamRequest(
        _ convertible: any URLRequestConvertible,
        interceptor: (any RequestInterceptor)? = nil,
        requestModifier: RequestModifier? = nil
    ) -> DataStreamRequest {
        DataStreamRequest(session: self, draft: Self.makeDraft(convertible, modifier: requestModifier)).intercepted(
            by: interceptor
        )
    }
}
