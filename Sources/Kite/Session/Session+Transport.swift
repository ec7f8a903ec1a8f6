import Foundation
import HTTPTypes

extension Session {
    /// A stream request for a transport that hands Kite a request head and a body sequence (KiteOpenAPI's
    /// `KiteClientTransport`). It runs the whole pipeline; its body is read as the engine sends it and its
    /// response arrives through ``DataStreamRequest/responseHead()``.
    ///
    /// A stream request leaves the cache alone unless it asks for it; a transport's request is a document
    /// like a data request's, so it uses the session's cache policy.
    ///
    /// - Parameters:
    ///   - method: The method.
    ///   - url: The URL.
    ///   - headerFields: The header fields.
    ///   - body: The body, or `nil` for none.
    ///   - length: The body's length when known (sent as `Content-Length`); the body must produce exactly that many bytes.
    ///   - replayable: Whether `body` can be iterated again from the start, so a retry, a redirect that keeps
    ///     the body or an answered challenge may send it again; a body that cannot fails those with
    ///     `bodyNotReplayable`, and is never retried.
    ///   - operationID: The generated client's operation, in log metadata and the span's attributes.
    ///   - maximumResponseSize: The response body's size limit (``DataStreamRequest/limitResponseSize(to:)``), or
    ///     `nil` for none.
    /// - Returns: The request, not yet started.
    package func transportRequest<Body: AsyncSequence & Sendable>(
        method: HTTPRequest.Method,
        url: URL,
        headerFields: HTTPFields,
        body: Body?,
        length: Int64?,
        replayable: Bool,
        operationID: String?,
        maximumResponseSize: Int64?
    ) -> DataStreamRequest where Body.Element: DataProtocol {
        var draft = RequestDraft(method: method, url: url, headerFields: headerFields)
        draft.cachePolicy = self.context.requestCachePolicy
        let source: RequestBodySource =
            body.map { .stream(OneShotBody($0, length: length, replayable: replayable)) } ?? .draft
        let request = DataStreamRequest(session: self, draft: .success(draft), body: source)
        request.machine.withLockedValue { machine in
            machine.record.operationID = operationID
            machine.record.maximumResponseSize = .some(maximumResponseSize)
        }
        return request
    }
}

extension DataStreamRequest {
    /// Starts the request and waits for its response head: the final one, after redirects, answered challenges
    /// and retries. Once the head is handed out no attempt follows (a transport's caller holds the response).
    /// The body arrives through the returned stream, which cancels the request when its reader goes away
    /// unfinished. Cancelling the calling task while it waits cancels the request.
    ///
    /// - Returns: The head and the body.
    /// - Throws: The request's ``KiteError`` when it ended before a head arrived.
    package func responseHead() async throws(KiteError) -> (HTTPResponse, DataStream) {
        let head = Promise<Result<HTTPResponse, KiteError>>()
        self.machine.withLockedValue { machine in
            machine.record.responseHeadHandler = { head.fulfill(.success($0)) }
        }
        let stream = self.subscribe(automaticallyCancelling: true)
        // The first of the head and the request's end fulfills the promise; the other does nothing.
        self.appendHandler { [summary = self.summary] outcome in
            if let error = outcome.error {
                head.fulfill(.failure(error))
            } else if let response = outcome.response {
                head.fulfill(.success(response))
            } else {
                head.fulfill(
                    .failure(
                        KiteError(
                            code: .invalidResponse,
                            message: "the request ended without a response",
                            request: summary
                        )
                    )
                )
            }
        }
        self.resume()
        let result = await head.value(cancelling: self)
        return (try result.get(), stream)
    }
}
