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
    ///   - interceptor: Adapts and retries this request, after the session's interceptor.
    ///   - requestModifier: A closure that can change the draft last.
    /// - Returns: The request.
    public func upload(
        _ data: Data,
        to convertible: any URLConvertible,
        method: HTTPRequest.Method = .post,
        headers: HTTPFields? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        requestModifier: RequestModifier? = nil
    ) -> UploadRequest {
        let draft = Self.makeDraft(convertible, method: method, headers: headers, modifier: requestModifier) { $0 }
        return UploadRequest(session: self, draft: draft, source: .data(data)).intercepted(by: interceptor)
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
    ///   - interceptor: Adapts and retries this request, after the session's interceptor.
    ///   - requestModifier: A closure that can change the draft last.
    /// - Returns: The request.
    public func upload<Stream: AsyncSequence & Sendable>(
        _ stream: Stream,
        length: Int64?,
        to convertible: any URLConvertible,
        method: HTTPRequest.Method = .post,
        headers: HTTPFields? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        requestModifier: RequestModifier? = nil
    ) -> UploadRequest where Stream.Element: DataProtocol {
        let draft = Self.makeDraft(convertible, method: method, headers: headers, modifier: requestModifier) { $0 }
        return UploadRequest(session: self, draft: draft, source: .stream(OneShotBody(stream, length: length)))
            .intercepted(by: interceptor)
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
    ///   - interceptor: Adapts and retries this request, after the session's interceptor.
    ///   - requestModifier: A closure that can change the draft last.
    /// - Returns: The request.
    public func upload(
        _ data: Data,
        with convertible: any URLRequestConvertible,
        interceptor: (any RequestInterceptor)? = nil,
        requestModifier: RequestModifier? = nil
    ) -> UploadRequest {
        UploadRequest(session: self, draft: Self.makeDraft(convertible, modifier: requestModifier), source: .data(data))
            .intercepted(by: interceptor)
    }

    /// Uploads a file as the request body, read in chunks as the engine pulls it (constant memory),
    /// with `Content-Length` set to the file's size.
    ///
    /// The file is checked when the request is sent: not a file URL, missing, a directory, of unknown
    /// size or unreadable each fail the request with a message naming the path. A file that changes
    /// size while it is sent fails it too, rather than sending a body of the wrong length.
    ///
    /// ```swift
    /// let receipt = try await session.upload(URL(fileURLWithPath: "/tmp/report.pdf"), to: "http://127.0.0.1:8080/upload")
    ///     .uploadProgress { print($0) }
    ///     .serializingJSON()
    ///     .value
    /// ```
    ///
    /// - Parameters:
    ///   - fileURL: The file.
    ///   - convertible: The URL.
    ///   - method: The method; `POST` by default.
    ///   - headers: Header fields.
    ///   - interceptor: Adapts and retries this request, after the session's interceptor.
    ///   - requestModifier: A closure that can change the draft last.
    /// - Returns: The request.
    public func upload(
        _ fileURL: URL,
        to convertible: any URLConvertible,
        method: HTTPRequest.Method = .post,
        headers: HTTPFields? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        requestModifier: RequestModifier? = nil
    ) -> UploadRequest {
        let draft = Self.makeDraft(convertible, method: method, headers: headers, modifier: requestModifier) { $0 }
        return UploadRequest(session: self, draft: draft, source: .file(fileURL)).intercepted(by: interceptor)
    }

    /// Uploads a file with a whole request from a `URLRequest` or your own router, as
    /// ``upload(_:to:method:headers:interceptor:requestModifier:)-(URL,_,_,_,_,_)`` does; the request's `httpBody`
    /// is replaced by the file.
    ///
    /// ```swift
    /// var urlRequest = URLRequest(url: URL(string: "http://127.0.0.1:8080/upload")!)
    /// urlRequest.httpMethod = "PUT"
    /// let receipt = try await session.upload(URL(fileURLWithPath: "/tmp/report.pdf"), with: urlRequest)
    ///     .serializingJSON()
    ///     .value
    /// ```
    ///
    /// - Parameters:
    ///   - fileURL: The file.
    ///   - convertible: The request.
    ///   - interceptor: Adapts and retries this request, after the session's interceptor.
    ///   - requestModifier: A closure that can change the draft last.
    /// - Returns: The request.
    public func upload(
        _ fileURL: URL,
        with convertible: any URLRequestConvertible,
        interceptor: (any RequestInterceptor)? = nil,
        requestModifier: RequestModifier? = nil
    ) -> UploadRequest {
        let draft = Self.makeDraft(convertible, modifier: requestModifier)
        return UploadRequest(session: self, draft: draft, source: .file(fileURL)).intercepted(by: interceptor)
    }

    /// Uploads a multipart form, streamed from its parts' sources with an exact `Content-Length` and
    /// `Content-Type: multipart/form-data; boundary=…` (unless the headers set one).
    ///
    /// Forms of at most `threshold` bytes without stream parts are encoded in memory once; larger
    /// ones stream their files in chunks as the engine pulls them, in constant memory, with no
    /// temporary file. A redirect that needs the body again re-reads the files; a form with stream
    /// parts cannot be sent twice (`bodyNotReplayable`).
    ///
    /// ```swift
    /// var form = MultipartFormData()
    /// form.append(Data("kite".utf8), withName: "name")
    /// form.append(URL(fileURLWithPath: "/tmp/photo.png"), withName: "photo")
    /// let receipt = try await session.upload(multipartFormData: form, to: "http://127.0.0.1:8080/upload")
    ///     .validate()
    ///     .serializingJSON()
    ///     .value
    /// ```
    ///
    /// - Parameters:
    ///   - multipartFormData: The form.
    ///   - convertible: The URL.
    ///   - threshold: The largest form encoded in memory, in bytes; 10 MB by default.
    ///   - method: The method; `POST` by default.
    ///   - headers: Header fields.
    ///   - interceptor: Adapts and retries this request, after the session's interceptor.
    ///   - requestModifier: A closure that can change the draft last.
    /// - Returns: The request.
    public func upload(
        multipartFormData: MultipartFormData,
        to convertible: any URLConvertible,
        usingThreshold threshold: UInt64 = MultipartFormData.encodingMemoryThreshold,
        method: HTTPRequest.Method = .post,
        headers: HTTPFields? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        requestModifier: RequestModifier? = nil
    ) -> UploadRequest {
        let draft = Self.makeDraft(convertible, method: method, headers: headers, modifier: requestModifier) {
            Self.typed($0, as: multipartFormData)
        }
        return UploadRequest(session: self, draft: draft, source: .multipart(multipartFormData, threshold: threshold))
            .intercepted(by: interceptor)
    }

    /// Uploads a multipart form built by `builder`, as `upload(multipartFormData:to:)` does.
    ///
    /// ```swift
    /// let receipt = try await session.upload(
    ///         multipartFormData: { form in
    ///             form.append(Data("kite".utf8), withName: "name")
    ///         },
    ///         to: "http://127.0.0.1:8080/upload"
    ///     )
    ///     .serializingJSON()
    ///     .value
    /// ```
    ///
    /// - Parameters:
    ///   - builder: Appends the parts.
    ///   - convertible: The URL.
    ///   - threshold: The largest form encoded in memory, in bytes; 10 MB by default.
    ///   - method: The method; `POST` by default.
    ///   - headers: Header fields.
    ///   - interceptor: Adapts and retries this request, after the session's interceptor.
    ///   - requestModifier: A closure that can change the draft last.
    /// - Returns: The request.
    public func upload(
        multipartFormData builder: (inout MultipartFormData) -> Void,
        to convertible: any URLConvertible,
        usingThreshold threshold: UInt64 = MultipartFormData.encodingMemoryThreshold,
        method: HTTPRequest.Method = .post,
        headers: HTTPFields? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        requestModifier: RequestModifier? = nil
    ) -> UploadRequest {
        var form = MultipartFormData()
        builder(&form)
        return self.upload(
            multipartFormData: form,
            to: convertible,
            usingThreshold: threshold,
            method: method,
            headers: headers,
            interceptor: interceptor,
            requestModifier: requestModifier
        )
    }

    /// Uploads a multipart form with a whole request from a `URLRequest` or your own router, as
    /// ``upload(multipartFormData:to:usingThreshold:method:headers:interceptor:requestModifier:)-(MultipartFormData,_,_,_,_,_,_)``
    /// does; the request's `httpBody` is replaced by the form, and its `Content-Type` is the form's unless the
    /// request names one.
    ///
    /// ```swift
    /// var form = MultipartFormData()
    /// form.append(Data("kite".utf8), withName: "name")
    /// var urlRequest = URLRequest(url: URL(string: "http://127.0.0.1:8080/upload")!)
    /// urlRequest.httpMethod = "PUT"
    /// let receipt = try await session.upload(multipartFormData: form, with: urlRequest).serializingJSON().value
    /// ```
    ///
    /// - Parameters:
    ///   - multipartFormData: The form.
    ///   - convertible: The request.
    ///   - threshold: The largest form encoded in memory, in bytes; 10 MB by default.
    ///   - interceptor: Adapts and retries this request, after the session's interceptor.
    ///   - requestModifier: A closure that can change the draft last.
    /// - Returns: The request.
    public func upload(
        multipartFormData: MultipartFormData,
        with convertible: any URLRequestConvertible,
        usingThreshold threshold: UInt64 = MultipartFormData.encodingMemoryThreshold,
        interceptor: (any RequestInterceptor)? = nil,
        requestModifier: RequestModifier? = nil
    ) -> UploadRequest {
        let draft = Self.makeDraft(convertible, modifier: requestModifier).map { Self.typed($0, as: multipartFormData) }
        return UploadRequest(session: self, draft: draft, source: .multipart(multipartFormData, threshold: threshold))
            .intercepted(by: interceptor)
    }

    /// Uploads a multipart form built by `builder` with a whole request, as
    /// ``upload(multipartFormData:with:usingThreshold:interceptor:requestModifier:)-(MultipartFormData,_,_,_,_)`` does.
    ///
    /// ```swift
    /// let urlRequest = URLRequest(url: URL(string: "http://127.0.0.1:8080/upload")!)
    /// let receipt = try await session.upload(
    ///         multipartFormData: { form in
    ///             form.append(Data("kite".utf8), withName: "name")
    ///         },
    ///         with: urlRequest
    ///     )
    ///     .serializingJSON()
    ///     .value
    /// ```
    ///
    /// - Parameters:
    ///   - builder: Appends the parts.
    ///   - convertible: The request.
    ///   - threshold: The largest form encoded in memory, in bytes; 10 MB by default.
    ///   - interceptor: Adapts and retries this request, after the session's interceptor.
    ///   - requestModifier: A closure that can change the draft last.
    /// - Returns: The request.
    public func upload(
        multipartFormData builder: (inout MultipartFormData) -> Void,
        with convertible: any URLRequestConvertible,
        usingThreshold threshold: UInt64 = MultipartFormData.encodingMemoryThreshold,
        interceptor: (any RequestInterceptor)? = nil,
        requestModifier: RequestModifier? = nil
    ) -> UploadRequest {
        var form = MultipartFormData()
        builder(&form)
        return self.upload(
            multipartFormData: form,
            with: convertible,
            usingThreshold: threshold,
            interceptor: interceptor,
            requestModifier: requestModifier
        )
    }

    /// `draft` with the form's `Content-Type` (`multipart/form-data; boundary=…`), unless it names one.
    private static func typed(_ draft: RequestDraft, as form: MultipartFormData) -> RequestDraft {
        guard draft.headerFields[.contentType] == nil else { return draft }
        var typed = draft
        typed.headerFields[.contentType] = form.contentType
        return typed
    }
}
