import Foundation
import HTTPTypes
import Kite
import OpenAPIRuntime

/// A swift-openapi `ClientTransport` that sends a generated client's requests through a Kite `Session`.
///
/// Every request runs the session's whole pipeline: interceptors, the retry policy, Basic and Digest
/// challenges and `AuthenticationInterceptor`, the redirect handler, trust evaluation, proxies, the cookie
/// jar, timeouts, size limits, the response cache, event monitors, logging, metrics and tracing (the
/// `operationId` is in the log metadata and the span's attributes as `openapi.operation_id`).
///
/// ```swift
/// let client = Client(
///     serverURL: URL(string: "http://127.0.0.1:8080")!,
///     transport: KiteClientTransport(session: Session(interceptor: RetryPolicy()))
/// )
/// let json = try await client.getJSON().ok.body.json
/// ```
///
/// Both bodies stream. The request's `HTTPBody` is pulled as the engine sends it, with its length as
/// `Content-Length` when known. The response body is an `HTTPBody` that yields chunks as they arrive, so the
/// runtime's server-sent-events, JSON Lines and JSON Sequence decoders work as the server writes. While the
/// caller holds the body unread the engine reads nothing more, and the idle-read timeout does not count that time.
///
/// - A request body whose iteration behaviour is `.single` is sent once: it is never retried, and a redirect
///   that keeps the body (307, 308) or a `401` challenge fails with `bodyNotReplayable` rather than send it
///   again. A `.multiple` body is sent anew each time.
/// - Response fields are passed on as Kite received them, repeated ones (several `Set-Cookie`) all kept.
/// - Cancelling the calling task stops the exchange, whether it is still sending or its caller is reading the
///   response body; a response body dropped unfinished cancels the request and frees its connection.
/// - Errors are `KiteError`s, which the runtime wraps in its `ClientError`:
///   `(error as? ClientError)?.underlyingError as? KiteError` gives the code.
public struct KiteClientTransport: ClientTransport {
    /// The session that sends the requests.
    public let session: Session
    /// The credential that answers Basic and Digest challenges (`401`), as `BaseRequest.authenticate(with:)`
    /// does for one request.
    public let credential: Credential?
    /// The largest response body a request may receive; a larger one fails with `responseTooLarge` (before the
    /// response is returned when its `Content-Length` says so, while the body is read otherwise). `nil` has no
    /// limit.
    public let maximumResponseSize: Int64?

    /// Creates a transport on `session`, whose response bodies are limited as a data request's are.
    ///
    /// Generated code collects a JSON, text or form body whole, without a limit of its own, so a response body
    /// larger than the session's `Session.Configuration.maximumResponseSize` (100 MiB by default) fails with
    /// `responseTooLarge`. A stream that may run longer (server-sent events for hours, a large binary body) needs
    /// ``init(session:credential:maximumResponseSize:)`` with a larger limit or `nil`.
    ///
    /// - Parameters:
    ///   - session: The session whose pipeline, configuration and connections the requests use.
    ///   - credential: The credential that answers Basic and Digest challenges, or `nil`.
    public init(session: Session, credential: Credential? = nil) {
        self.init(
            session: session,
            credential: credential,
            maximumResponseSize: session.configuration.maximumResponseSize
        )
    }

    /// Creates a transport on `session` with a response size limit of its own.
    ///
    /// - Parameters:
    ///   - session: The session whose pipeline, configuration and connections the requests use.
    ///   - credential: The credential that answers Basic and Digest challenges, or `nil`.
    ///   - maximumResponseSize: The largest response body in bytes, or `nil` for no limit.
    public init(session: Session, credential: Credential? = nil, maximumResponseSize: Int64?) {
        self.session = session
        self.credential = credential
        self.maximumResponseSize = maximumResponseSize
    }

    /// Sends `request` with `body` to `baseURL` and returns the response head as soon as it arrives, with the
    /// body still streaming.
    ///
    /// - Parameters:
    ///   - request: The request head; its path (with the query) is appended to `baseURL`'s.
    ///   - body: The request body, or `nil`.
    ///   - baseURL: The server URL.
    ///   - operationID: The document's `operationId`, for logs and traces.
    /// - Returns: The response head and its body (`nil` for `HEAD`).
    /// - Throws: A `KiteError`.
    public func send(
        _ request: HTTPRequest,
        body: HTTPBody?,
        baseURL: URL,
        operationID: String
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let url = try Self.url(of: request, baseURL: baseURL)
        var length: Int64?
        if case .known(let count) = body?.length { length = count }
        let streamRequest = self.session.transportRequest(
            method: request.method,
            url: url,
            headerFields: request.headerFields,
            body: body,
            length: length,
            replayable: body?.iterationBehavior == .multiple,
            operationID: operationID,
            maximumResponseSize: self.maximumResponseSize
        )
        if let credential = self.credential {
            streamRequest.authenticate(with: credential)
        }
        let (response, stream) = try await streamRequest.responseHead()
        guard request.method != .head else {
            // No body follows; reading the stream's end lets the request finish as it is, never cancelled.
            var rest = stream.makeAsyncIterator()
            while (try? await rest.next()) != nil {}
            return (response, nil)
        }
        let bytes = ResponseBytes(stream: stream, owner: RequestOwner(streamRequest))
        return (response, HTTPBody(bytes, length: Self.bodyLength(of: response), iterationBehavior: .single))
    }

    /// `baseURL` with the request's path and query appended, as swift-openapi's other transports do.
    static func url(of request: HTTPRequest, baseURL: URL) throws(KiteError) -> URL {
        let path = request.path ?? ""
        // The usual server URL (no query, no fragment) takes the path as text: one parse instead of three.
        if baseURL.query == nil, baseURL.fragment == nil, path.isEmpty || path.hasPrefix("/") {
            var base = baseURL.absoluteString
            if base.hasSuffix("/"), path.hasPrefix("/") { base.removeLast() }
            if let url = URL(string: base + path, encodingInvalidCharacters: false) { return url }
        }
        guard var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: true),
            let target = URLComponents(string: path)
        else {
            throw KiteError(
                code: .invalidURL,
                message: "the path \"\(path)\" cannot be joined to the server URL \(baseURL.absoluteString)"
            )
        }
        var basePath = components.percentEncodedPath
        if basePath.hasSuffix("/"), target.percentEncodedPath.hasPrefix("/") { basePath.removeLast() }
        components.percentEncodedPath = basePath + target.percentEncodedPath
        components.percentEncodedQuery = target.percentEncodedQuery
        guard let url = components.url else {
            throw KiteError(
                code: .invalidURL,
                message: "the path \"\(path)\" joined to the server URL \(baseURL.absoluteString) is not a URL"
            )
        }
        return url
    }

    /// The body's length when the head gives it for the bytes the caller gets: not for a coded body, which
    /// Kite may decompress. One pass over the fields, none joined.
    static func bodyLength(of response: HTTPResponse) -> HTTPBody.Length {
        var length: HTTPBody.Length = .unknown
        for field in response.headerFields {
            switch field.name {
            case .contentEncoding:
                if field.value.lowercased() != "identity" { return .unknown }
            case .contentLength:
                // Repeated lengths that differ leave the length unknown.
                guard let count = Int64(field.value), count >= 0 else { return .unknown }
                if case .known(let known) = length, known != count { return .unknown }
                length = .known(count)
            default:
                continue
            }
        }
        return length
    }
}

/// Cancels a stream request when the response body that reads it is released unfinished, so a dropped body
/// frees its connection. (Cancelling a finished request does nothing.)
final class RequestOwner: Sendable {
    let request: DataStreamRequest

    init(_ request: DataStreamRequest) {
        self.request = request
    }

    deinit {
        // Checked first: cancel() names the request in its error before it finds the request over.
        if self.request.state != .finished { self.request.cancel() }
    }
}

/// The response body as the runtime's byte chunks.
struct ResponseBytes: AsyncSequence, Sendable {
    typealias Element = ArraySlice<UInt8>

    let stream: DataStream
    let owner: RequestOwner

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: DataStream.AsyncIterator
        let owner: RequestOwner

        mutating func next() async throws -> ArraySlice<UInt8>? {
            guard let chunk = try await self.base.next() else { return nil }
            return ArraySlice(chunk)
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: self.stream.makeAsyncIterator(), owner: self.owner)
    }
}
