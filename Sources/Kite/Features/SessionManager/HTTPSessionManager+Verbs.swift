import Foundation
import HTTPTypes

extension HTTPSessionManager {
    /// Sends a `GET`: AFNetworking's `GET:parameters:headers:progress:success:failure:`.
    ///
    /// ```swift
    /// manager.get("get", parameters: ["q": "kite"], headers: nil, progress: nil,
    ///     success: { _, object in print(object as? [String: Any] ?? [:]) },
    ///     failure: { _, error in print(error) })
    /// ```
    ///
    /// - Parameters:
    ///   - URLString: A URL, or a path relative to ``baseURL``.
    ///   - parameters: Parameters for the query string.
    ///   - headers: Header fields, over the request serializer's.
    ///   - downloadProgress: Called as the body arrives.
    ///   - success: Called with the task and the response object.
    ///   - failure: Called with the task (`nil` when the request could not be made) and the error.
    /// - Returns: The request, or `nil` when it could not be made.
    @discardableResult
    public func get(
        _ URLString: String,
        parameters: Parameters?,
        headers: [String: String]?,
        progress downloadProgress: (@Sendable (TransferProgress) -> Void)?,
        success: (@Sendable (DataRequest, Any?) -> Void)?,
        failure: (@Sendable (DataRequest?, KiteError) -> Void)?
    ) -> DataRequest? {
        self.dataTask(
            withHTTPMethod: "GET",
            URLString: URLString,
            parameters: parameters,
            headers: headers,
            uploadProgress: nil,
            downloadProgress: downloadProgress,
            success: success,
            failure: failure
        )
    }

    /// Sends a `HEAD`; `success` gets only the task. AFNetworking's `HEAD:parameters:headers:success:failure:`.
    ///
    /// ```swift
    /// manager.head("get", parameters: nil, headers: nil,
    ///     success: { task in print(task.response?.status.code ?? 0) },
    ///     failure: nil)
    /// ```
    ///
    /// - Parameters:
    ///   - URLString: A URL, or a path relative to ``baseURL``.
    ///   - parameters: Parameters for the query string.
    ///   - headers: Header fields, over the request serializer's.
    ///   - success: Called with the task.
    ///   - failure: Called with the task (`nil` when the request could not be made) and the error.
    /// - Returns: The request, or `nil` when it could not be made.
    @discardableResult
    public func head(
        _ URLString: String,
        parameters: Parameters?,
        headers: [String: String]?,
        success: (@Sendable (DataRequest) -> Void)?,
        failure: (@Sendable (DataRequest?, KiteError) -> Void)?
    ) -> DataRequest? {
        var taskOnly: (@Sendable (DataRequest, Any?) -> Void)?
        if let success { taskOnly = { task, _ in success(task) } }
        return self.dataTask(
            withHTTPMethod: "HEAD",
            URLString: URLString,
            parameters: parameters,
            headers: headers,
            uploadProgress: nil,
            downloadProgress: nil,
            success: taskOnly,
            failure: failure
        )
    }

    /// Sends a `POST` with the parameters in the body: AFNetworking's
    /// `POST:parameters:headers:progress:success:failure:`.
    ///
    /// ```swift
    /// manager.post("post", parameters: ["name": "kite"], headers: nil, progress: nil,
    ///     success: { _, object in print(object ?? "") }, failure: nil)
    /// ```
    ///
    /// - Parameters:
    ///   - URLString: A URL, or a path relative to ``baseURL``.
    ///   - parameters: Parameters for the body, written by ``requestSerializer``.
    ///   - headers: Header fields, over the request serializer's.
    ///   - uploadProgress: Called as the body is sent.
    ///   - success: Called with the task and the response object.
    ///   - failure: Called with the task (`nil` when the request could not be made) and the error.
    /// - Returns: The request, or `nil` when it could not be made.
    @discardableResult
    public func post(
        _ URLString: String,
        parameters: Parameters?,
        headers: [String: String]?,
        progress uploadProgress: (@Sendable (TransferProgress) -> Void)?,
        success: (@Sendable (DataRequest, Any?) -> Void)?,
        failure: (@Sendable (DataRequest?, KiteError) -> Void)?
    ) -> DataRequest? {
        self.dataTask(
            withHTTPMethod: "POST",
            URLString: URLString,
            parameters: parameters,
            headers: headers,
            uploadProgress: uploadProgress,
            downloadProgress: nil,
            success: success,
            failure: failure
        )
    }

    /// Sends a `PUT` with the parameters in the body.
    ///
    /// ```swift
    /// manager.put("put", parameters: ["name": "kite"], headers: nil, success: nil, failure: nil)
    /// ```
    ///
    /// - Parameters:
    ///   - URLString: A URL, or a path relative to ``baseURL``.
    ///   - parameters: Parameters for the body.
    ///   - headers: Header fields, over the request serializer's.
    ///   - success: Called with the task and the response object.
    ///   - failure: Called with the task (`nil` when the request could not be made) and the error.
    /// - Returns: The request, or `nil` when it could not be made.
    @discardableResult
    public func put(
        _ URLString: String,
        parameters: Parameters?,
        headers: [String: String]?,
        success: (@Sendable (DataRequest, Any?) -> Void)?,
        failure: (@Sendable (DataRequest?, KiteError) -> Void)?
    ) -> DataRequest? {
        self.dataTask(
            withHTTPMethod: "PUT",
            URLString: URLString,
            parameters: parameters,
            headers: headers,
            uploadProgress: nil,
            downloadProgress: nil,
            success: success,
            failure: failure
        )
    }

    /// Sends a `PATCH` with the parameters in the body.
    ///
    /// ```swift
    /// manager.patch("patch", parameters: ["name": "kite"], headers: nil, success: nil, failure: nil)
    /// ```
    ///
    /// - Parameters:
    ///   - URLString: A URL, or a path relative to ``baseURL``.
    ///   - parameters: Parameters for the body.
    ///   - headers: Header fields, over the request serializer's.
    ///   - success: Called with the task and the response object.
    ///   - failure: Called with the task (`nil` when the request could not be made) and the error.
    /// - Returns: The request, or `nil` when it could not be made.
    @discardableResult
    public func patch(
        _ URLString: String,
        parameters: Parameters?,
        headers: [String: String]?,
        success: (@Sendable (DataRequest, Any?) -> Void)?,
        failure: (@Sendable (DataRequest?, KiteError) -> Void)?
    ) -> DataRequest? {
        self.dataTask(
            withHTTPMethod: "PATCH",
            URLString: URLString,
            parameters: parameters,
            headers: headers,
            uploadProgress: nil,
            downloadProgress: nil,
            success: success,
            failure: failure
        )
    }

    /// Sends a `DELETE` with the parameters in the query string.
    ///
    /// ```swift
    /// manager.delete("delete", parameters: ["id": 7], headers: nil, success: nil, failure: nil)
    /// ```
    ///
    /// - Parameters:
    ///   - URLString: A URL, or a path relative to ``baseURL``.
    ///   - parameters: Parameters for the query string.
    ///   - headers: Header fields, over the request serializer's.
    ///   - success: Called with the task and the response object.
    ///   - failure: Called with the task (`nil` when the request could not be made) and the error.
    /// - Returns: The request, or `nil` when it could not be made.
    @discardableResult
    public func delete(
        _ URLString: String,
        parameters: Parameters?,
        headers: [String: String]?,
        success: (@Sendable (DataRequest, Any?) -> Void)?,
        failure: (@Sendable (DataRequest?, KiteError) -> Void)?
    ) -> DataRequest? {
        self.dataTask(
            withHTTPMethod: "DELETE",
            URLString: URLString,
            parameters: parameters,
            headers: headers,
            uploadProgress: nil,
            downloadProgress: nil,
            success: success,
            failure: failure
        )
    }

    /// Sends a multipart `POST`: the parameters become form fields, then `block` appends parts. AFNetworking's
    /// `POST:parameters:headers:constructingBodyWithBlock:progress:success:failure:`.
    ///
    /// ```swift
    /// manager.post("post", parameters: ["name": "kite"], headers: nil,
    ///     constructingBodyWith: { formData in
    ///         formData.append(Data("hello".utf8), withName: "file", fileName: "a.txt", mimeType: "text/plain")
    ///     },
    ///     progress: nil, success: { _, object in print(object ?? "") }, failure: nil)
    /// ```
    ///
    /// - Parameters:
    ///   - URLString: A URL, or a path relative to ``baseURL``.
    ///   - parameters: Parameters, each query pair (`user[name]`, `tags[]`) a form field, in sorted order.
    ///   - headers: Header fields, over the request serializer's.
    ///   - block: Appends parts after the fields.
    ///   - uploadProgress: Called as the body is sent.
    ///   - success: Called with the task and the response object.
    ///   - failure: Called with the task (`nil` when the request could not be made) and the error.
    /// - Returns: The request, or `nil` when it could not be made.
    @discardableResult
    public func post(
        _ URLString: String,
        parameters: Parameters?,
        headers: [String: String]?,
        constructingBodyWith block: ((inout MultipartFormData) throws -> Void)?,
        progress uploadProgress: (@Sendable (TransferProgress) -> Void)?,
        success: (@Sendable (UploadRequest, Any?) -> Void)?,
        failure: (@Sendable (UploadRequest?, KiteError) -> Void)?
    ) -> UploadRequest? {
        switch self.multipartRequest(URLString, parameters: parameters, headers: headers, block: block ?? { _ in }) {
        case .failure(let error):
            self.reportFailure(error, failure: failure)
            return nil
        case .success(let (request, context)):
            if let uploadProgress { request.uploadProgress(uploadProgress) }
            self.track(request, context, success: success, failure: failure)
            return request
        }
    }

    /// Sends a request with any method: AFNetworking's
    /// `dataTaskWithHTTPMethod:URLString:parameters:headers:uploadProgress:downloadProgress:success:failure:`.
    ///
    /// ```swift
    /// manager.dataTask(withHTTPMethod: "OPTIONS", URLString: "get", parameters: nil, headers: nil,
    ///     uploadProgress: nil, downloadProgress: nil, success: nil, failure: nil)
    /// ```
    ///
    /// - Parameters:
    ///   - method: The method, such as `GET` or `PROPFIND`.
    ///   - URLString: A URL, or a path relative to ``baseURL``.
    ///   - parameters: Parameters, in the query string or body as ``requestSerializer`` decides.
    ///   - headers: Header fields, over the request serializer's.
    ///   - uploadProgress: Called as the body is sent.
    ///   - downloadProgress: Called as the body arrives.
    ///   - success: Called with the task and the response object.
    ///   - failure: Called with the task (`nil` when the request could not be made) and the error.
    /// - Returns: The request, or `nil` when it could not be made.
    @discardableResult
    public func dataTask(
        withHTTPMethod method: String,
        URLString: String,
        parameters: Parameters?,
        headers: [String: String]?,
        uploadProgress: (@Sendable (TransferProgress) -> Void)?,
        downloadProgress: (@Sendable (TransferProgress) -> Void)?,
        success: (@Sendable (DataRequest, Any?) -> Void)?,
        failure: (@Sendable (DataRequest?, KiteError) -> Void)?
    ) -> DataRequest? {
        switch self.dataRequest(method, URLString, parameters: parameters, headers: headers) {
        case .failure(let error):
            self.reportFailure(error, failure: failure)
            return nil
        case .success(let (request, context)):
            if let uploadProgress { request.uploadProgress(uploadProgress) }
            if let downloadProgress { request.downloadProgress(downloadProgress) }
            self.track(request, context, success: success, failure: failure)
            return request
        }
    }

    /// A data request for `method` and `URLString`, or why it cannot be made.
    func dataRequest(
        _ method: String,
        _ URLString: String,
        parameters: Parameters?,
        headers: [String: String]?
    ) -> Result<(DataRequest, RequestContext), KiteError> {
        guard let httpMethod = HTTPRequest.Method(method) else {
            return .failure(KiteError(code: .invalidRequest, message: "\"\(method)\" is not a valid HTTP method"))
        }
        return self.context(for: URLString, headers: headers).map { context in
            (self.makeDataRequest(context, method: httpMethod, parameters: parameters), context)
        }
    }

    /// A multipart upload: the parameters as fields, then the block's parts.
    func multipartRequest(
        _ URLString: String,
        parameters: Parameters?,
        headers: [String: String]?,
        block: (inout MultipartFormData) throws -> Void
    ) -> Result<(UploadRequest, RequestContext), KiteError> {
        let context: RequestContext
        switch self.context(for: URLString, headers: headers) {
        case .failure(let error): return .failure(error)
        case .success(let value): context = value
        }
        var form = MultipartFormData()
        if let parameters {
            form.append(parameters: parameters, encoding: URLEncoding(nullEncoding: .bareKey))
        }
        do {
            try block(&form)
        } catch let error as KiteError {
            return .failure(error)
        } catch {
            return .failure(
                KiteError(
                    code: .multipartEncodingFailed,
                    message: "the block building the form failed: \(error)",
                    underlyingError: error
                )
            )
        }
        let request = context.session.upload(
            multipartFormData: form,
            to: context.url,
            method: .post,
            headers: context.headers,
            requestModifier: context.timeoutModifier
        )
        return .success((request, context))
    }
}
