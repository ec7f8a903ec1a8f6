import Foundation
import HTTPTypes

extension HTTPSessionManager {
    /// Sends a `GET` and returns the task and the response object.
    ///
    /// The async forms return to the caller: ``completionQueue`` and ``completionGroup`` are for closures. The
    /// response object is made in the caller's context, so it needs not be `Sendable`. Cancelling the awaiting
    /// task cancels the request.
    ///
    /// ```swift
    /// let (task, object) = try await manager.get("get", parameters: ["q": "kite"])
    /// print(task.response?.status.code ?? 0, object as? [String: Any] ?? [:])
    /// ```
    ///
    /// - Parameters:
    ///   - URLString: A URL, or a path relative to ``baseURL``.
    ///   - parameters: Parameters for the query string.
    ///   - headers: Header fields, over the request serializer's.
    ///   - downloadProgress: Called as the body arrives.
    /// - Returns: The task and the response object.
    /// - Throws: ``KiteError``: why the request could not be made, failed, or was not accepted.
    nonisolated(nonsending) public func get(
        _ URLString: String,
        parameters: Parameters? = nil,
        headers: [String: String]? = nil,
        progress downloadProgress: (@Sendable (TransferProgress) -> Void)? = nil
    ) async throws(KiteError) -> (task: DataRequest, responseObject: Any?) {
        try await self.dataTask(
            withHTTPMethod: "GET",
            URLString: URLString,
            parameters: parameters,
            headers: headers,
            downloadProgress: downloadProgress
        )
    }

    /// Sends a `HEAD` and returns the task.
    ///
    /// ```swift
    /// let task = try await manager.head("get")
    /// print(task.response?.headerFields[.contentLength] ?? "")
    /// ```
    ///
    /// - Parameters:
    ///   - URLString: A URL, or a path relative to ``baseURL``.
    ///   - parameters: Parameters for the query string.
    ///   - headers: Header fields, over the request serializer's.
    /// - Returns: The task.
    /// - Throws: ``KiteError``: why the request could not be made, failed, or was not accepted.
    @discardableResult
    nonisolated(nonsending) public func head(
        _ URLString: String,
        parameters: Parameters? = nil,
        headers: [String: String]? = nil
    ) async throws(KiteError) -> DataRequest {
        try await self.dataTask(withHTTPMethod: "HEAD", URLString: URLString, parameters: parameters, headers: headers)
            .task
    }

    /// Sends a `POST` with the parameters in the body and returns the task and the response object.
    ///
    /// ```swift
    /// let (_, object) = try await manager.post("post", parameters: ["name": "kite"])
    /// ```
    ///
    /// - Parameters:
    ///   - URLString: A URL, or a path relative to ``baseURL``.
    ///   - parameters: Parameters for the body, written by ``requestSerializer``.
    ///   - headers: Header fields, over the request serializer's.
    ///   - uploadProgress: Called as the body is sent.
    /// - Returns: The task and the response object.
    /// - Throws: ``KiteError``: why the request could not be made, failed, or was not accepted.
    nonisolated(nonsending) public func post(
        _ URLString: String,
        parameters: Parameters? = nil,
        headers: [String: String]? = nil,
        progress uploadProgress: (@Sendable (TransferProgress) -> Void)? = nil
    ) async throws(KiteError) -> (task: DataRequest, responseObject: Any?) {
        try await self.dataTask(
            withHTTPMethod: "POST",
            URLString: URLString,
            parameters: parameters,
            headers: headers,
            uploadProgress: uploadProgress
        )
    }

    /// Sends a `PUT` with the parameters in the body and returns the task and the response object.
    ///
    /// ```swift
    /// let (_, object) = try await manager.put("put", parameters: ["name": "kite"])
    /// ```
    ///
    /// - Parameters:
    ///   - URLString: A URL, or a path relative to ``baseURL``.
    ///   - parameters: Parameters for the body.
    ///   - headers: Header fields, over the request serializer's.
    /// - Returns: The task and the response object.
    /// - Throws: ``KiteError``: why the request could not be made, failed, or was not accepted.
    nonisolated(nonsending) public func put(
        _ URLString: String,
        parameters: Parameters? = nil,
        headers: [String: String]? = nil
    ) async throws(KiteError) -> (task: DataRequest, responseObject: Any?) {
        try await self.dataTask(withHTTPMethod: "PUT", URLString: URLString, parameters: parameters, headers: headers)
    }

    /// Sends a `PATCH` with the parameters in the body and returns the task and the response object.
    ///
    /// ```swift
    /// let (_, object) = try await manager.patch("patch", parameters: ["name": "kite"])
    /// ```
    ///
    /// - Parameters:
    ///   - URLString: A URL, or a path relative to ``baseURL``.
    ///   - parameters: Parameters for the body.
    ///   - headers: Header fields, over the request serializer's.
    /// - Returns: The task and the response object.
    /// - Throws: ``KiteError``: why the request could not be made, failed, or was not accepted.
    nonisolated(nonsending) public func patch(
        _ URLString: String,
        parameters: Parameters? = nil,
        headers: [String: String]? = nil
    ) async throws(KiteError) -> (task: DataRequest, responseObject: Any?) {
        try await self.dataTask(withHTTPMethod: "PATCH", URLString: URLString, parameters: parameters, headers: headers)
    }

    /// Sends a `DELETE` with the parameters in the query string and returns the task and the response object.
    ///
    /// ```swift
    /// let (_, object) = try await manager.delete("delete", parameters: ["id": 7])
    /// ```
    ///
    /// - Parameters:
    ///   - URLString: A URL, or a path relative to ``baseURL``.
    ///   - parameters: Parameters for the query string.
    ///   - headers: Header fields, over the request serializer's.
    /// - Returns: The task and the response object.
    /// - Throws: ``KiteError``: why the request could not be made, failed, or was not accepted.
    nonisolated(nonsending) public func delete(
        _ URLString: String,
        parameters: Parameters? = nil,
        headers: [String: String]? = nil
    ) async throws(KiteError) -> (task: DataRequest, responseObject: Any?) {
        try await self.dataTask(
            withHTTPMethod: "DELETE",
            URLString: URLString,
            parameters: parameters,
            headers: headers
        )
    }

    /// Sends a multipart `POST` (the parameters as fields, then `block`'s parts) and returns the task and the
    /// response object.
    ///
    /// ```swift
    /// let (_, object) = try await manager.post("post", parameters: ["name": "kite"]) { formData in
    ///     formData.append(Data("hello".utf8), withName: "file", fileName: "a.txt", mimeType: "text/plain")
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - URLString: A URL, or a path relative to ``baseURL``.
    ///   - parameters: Parameters, each query pair a form field.
    ///   - headers: Header fields, over the request serializer's.
    ///   - uploadProgress: Called as the body is sent.
    ///   - block: Appends parts after the fields.
    /// - Returns: The task and the response object.
    /// - Throws: ``KiteError``: why the request could not be made, failed, or was not accepted.
    nonisolated(nonsending) public func post(
        _ URLString: String,
        parameters: Parameters? = nil,
        headers: [String: String]? = nil,
        progress uploadProgress: (@Sendable (TransferProgress) -> Void)? = nil,
        constructingBodyWith block: (inout MultipartFormData) throws -> Void
    ) async throws(KiteError) -> (task: UploadRequest, responseObject: Any?) {
        let (request, context) = try self.multipartRequest(
            URLString,
            parameters: parameters,
            headers: headers,
            block: block
        )
        .get()
        if let uploadProgress { request.uploadProgress(uploadProgress) }
        return try await self.response(of: request, context)
    }

    /// Sends a request with any method and returns the task and the response object.
    ///
    /// ```swift
    /// let (_, object) = try await manager.dataTask(withHTTPMethod: "OPTIONS", URLString: "get")
    /// ```
    ///
    /// - Parameters:
    ///   - method: The method, such as `GET` or `PROPFIND`.
    ///   - URLString: A URL, or a path relative to ``baseURL``.
    ///   - parameters: Parameters, in the query string or body as ``requestSerializer`` decides.
    ///   - headers: Header fields, over the request serializer's.
    ///   - uploadProgress: Called as the body is sent.
    ///   - downloadProgress: Called as the body arrives.
    /// - Returns: The task and the response object.
    /// - Throws: ``KiteError``: why the request could not be made, failed, or was not accepted.
    nonisolated(nonsending) public func dataTask(
        withHTTPMethod method: String,
        URLString: String,
        parameters: Parameters? = nil,
        headers: [String: String]? = nil,
        uploadProgress: (@Sendable (TransferProgress) -> Void)? = nil,
        downloadProgress: (@Sendable (TransferProgress) -> Void)? = nil
    ) async throws(KiteError) -> (task: DataRequest, responseObject: Any?) {
        let (request, context) = try self.dataRequest(method, URLString, parameters: parameters, headers: headers).get()
        if let uploadProgress { request.uploadProgress(uploadProgress) }
        if let downloadProgress { request.downloadProgress(downloadProgress) }
        return try await self.response(of: request, context)
    }
}
