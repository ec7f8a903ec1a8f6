import Foundation
import HTTPTypes

extension Session {
    /// Uploads `data` as the request body, streamed in slices so upload progress moves smoothly.
    ///
    /// ```swift
    /// let receipt = try await session.upload(Data("hello".utf8), to: "http://127.0.0.1:8080/upload")
    ///     .validate()
    ///     .serializingJSON()
    ///     .value
    /// ```
    ///
    /// - Parameters:
    ///   - data: The body.
    ///   - convertible: The URL.
    ///   - method: The method; `POST` by default.
    ///   - headers: Header fields.
    ///   - requestModifier: A closure that can change the draft last.
    /// - Returns: The request.
    public func upload(
        _ data: Data,
        to convertible: any URLConvertible,
        method: HTTPRequest.Method = .post,
        headers: HTTPFields? = nil,
        requestModifier: RequestModifier? = nil
    ) -> UploadRequest {
        let draft = Self.makeDraft(convertible, method: method, headers: headers, modifier: requestModifier) { $0 }
        return UploadRequest(session: self, draft: draft, source: .data(data))
    }

    /// Uploads the bytes of an async sequence (of `Data`, `[UInt8]` or any `DataProtocol`) as the
    /// request body, as the engine pulls them.
    ///
    /// With a `length`, it is sent as `Content-Length` and the sequence must produce exactly that
    /// many bytes (else `uploadFailed`); without one the body is sent chunked. The sequence is read
    /// once: a redirect that needs the body again fails with `bodyNotReplayable`.
    ///
    /// ```swift
    /// let chunks = AsyncStream<Data> { continuation in
    ///     continuation.yield(Data("hello ".utf8))
    ///     continuation.yield(Data("world".utf8))
    ///     continuation.finish()
    /// }
    /// let receipt = try await session.upload(chunks, length: 11, to: "http://127.0.0.1:8080/upload")
    ///     .serializingJSON()
    ///     .value
    /// ```
    ///
    /// - Parameters:
    ///   - stream: The bytes.
    ///   - length: The exact number of bytes, or `nil` to send the body chunked.
    ///   - convertible: The URL.
    ///   - method: The method; `POST` by default.
    ///   - headers: Header fields.
    ///   - requestModifier: A closure that can change the draft last.
    /// - Returns: The request.
    public func upload<Stream: AsyncSequence & Sendable>(
        _ stream: Stream,
        length: Int64?,
        to convertible: any URLConvertible,
        method: HTTPRequest.Method = .post,
        headers: HTTPFields? = nil,
        requestModifier: RequestModifier? = nil
    ) -> UploadRequest where Stream.Element: DataProtocol {
        let draft = Self.makeDraft(convertible, method: method, headers: headers, modifier: requestModifier) { $0 }
        return UploadRequest(session: self, draft: draft, source: .stream(OneShotBody(stream, length: length)))
    }

    /// Uploads `data` with a whole request from a `URLRequest` or your own router; its `httpBody` is replaced.
    ///
    /// ```swift
    /// var urlRequest = URLRequest(url: URL(string: "http://127.0.0.1:8080/upload")!)
    /// urlRequest.httpMethod = "PUT"
    /// let receipt = try await session.upload(Data("x".utf8), with: urlRequest).serializingJSON().value
    /// ```
    ///
    /// - Parameters:
    ///   - data: The body.
    ///   - convertible: The request.
    ///   - requestModifier: A closure that can change the draft last.
    /// - Returns: The request.
    public func upload(
        _ data: Data,
        with convertible: any URLRequestConvertible,
        requestModifier: RequestModifier? = nil
    ) -> UploadRequest {
        UploadRequest(session: self, draft: Self.makeDraft(convertible, modifier: requestModifier), source: .data(data))
    }
}
