import Foundation
import HTTPTypes

/// The one error type Kite reports.
///
/// Every failure, whether the URL did not parse, the connection was refused or the response failed
/// validation, arrives as a `KiteError`. Its ``code`` says what kind of failure it was and can be
/// compared; its ``description`` is one sentence that names the request and the facts:
///
/// ```swift
/// do {
///     _ = try await Session.default.request("http://127.0.0.1:8080/status/404")
///         .validate()
///         .serializingData()
///         .value
/// } catch {
///     print(error.code == .responseValidationFailed)  // true
///     print(error)  // GET http://127.0.0.1:8080/status/404 failed: response status 404 is not in 200..<300
/// }
/// ```
///
/// Two errors are equal when their codes are equal.
public struct KiteError: Error, Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    /// What kind of failure this is.
    public var code: Code { self.storage.code }

    /// The facts of the failure, without the request, such as `response status 404 is not in 200..<300`.
    public var message: String { self.storage.message }

    /// The request that failed, as method and URL without credentials, when one was known.
    public var request: RequestSummary? { self.storage.request }

    /// The response head, when the server answered before the failure.
    public var response: HTTPResponse? { self.storage.response }

    /// Which timeout expired, for ``Code-swift.struct/timedOut`` errors.
    public var timeout: TimeoutKind? { self.storage.timeout }

    /// The error that caused this one, such as a `DecodingError` or the engine's error.
    public var underlyingError: (any Error)? { self.storage.underlyingError }

    /// For `requestRetryFailed`: the attempt's error that the retrier was asked about.
    public var retriedError: KiteError? { self.storage.retried }

    /// The response body, for errors about a response that was read: a failed validation or a serializer
    /// that did not accept the response (AFNetworking's `AFNetworkingOperationFailingURLResponseDataErrorKey`).
    /// At most ``maximumResponseBodyLength`` bytes: the first ones of a longer body.
    ///
    /// ```swift
    /// do {
    ///     _ = try await session.request("http://127.0.0.1:8080/status/404").validate().serializingData().value
    /// } catch {
    ///     print(String(decoding: error.responseBody ?? Data(), as: UTF8.self))
    /// }
    /// ```
    public var responseBody: Data? { self.storage.responseBody }

    /// How much of a response body an error keeps in ``responseBody``: 64 KiB.
    public static let maximumResponseBodyLength = 64 * 1024

    /// One reference, so the error is one word wherever it is held. Every `throws(KiteError)` call reserves
    /// room for the error in its caller's async frame, and larger frames make the task allocator take more
    /// slabs from malloc on every request; an error pays its one allocation only when it happens.
    private let storage: Storage

    private final class Storage: Sendable {
        let code: Code
        let message: String
        let request: RequestSummary?
        let response: HTTPResponse?
        let timeout: TimeoutKind?
        let underlyingError: (any Error)?
        let retried: KiteError?
        let responseBody: Data?

        init(
            code: Code,
            message: String,
            request: RequestSummary?,
            response: HTTPResponse?,
            timeout: TimeoutKind?,
            underlyingError: (any Error)?,
            retried: KiteError?,
            responseBody: Data? = nil
        ) {
            self.code = code
            self.message = message
            self.request = request
            self.response = response
            self.timeout = timeout
            self.underlyingError = underlyingError
            self.retried = retried
            self.responseBody = responseBody
        }
    }

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: What kind of failure this is.
    ///   - message: The facts of the failure, without the request.
    ///   - request: The request that failed.
    ///   - response: The response head, when there was one.
    ///   - timeout: Which timeout expired, for timeouts.
    ///   - underlyingError: The error that caused this one.
    public init(
        code: Code,
        message: String,
        request: RequestSummary? = nil,
        response: HTTPResponse? = nil,
        timeout: TimeoutKind? = nil,
        underlyingError: (any Error)? = nil
    ) {
        self.storage = Storage(
            code: code,
            message: message,
            request: request,
            response: response,
            timeout: timeout,
            underlyingError: underlyingError,
            retried: nil
        )
    }

    private init(storage: Storage) {
        self.storage = storage
    }

    /// A `requestRetryFailed` error: the retrier's `error` about the attempt's `retried` error.
    static func retryFailed(_ error: any Error, retrying retried: KiteError) -> KiteError {
        KiteError(
            storage: Storage(
                code: .requestRetryFailed,
                message: "the retrier refused to retry (\(error)) after: \(retried.message)",
                request: retried.request,
                response: retried.response,
                timeout: nil,
                underlyingError: error,
                retried: retried,
                responseBody: retried.responseBody
            )
        )
    }

    /// One sentence a user can act on, such as
    /// `GET http://host/x failed: response status 404 is not in 200..<300`.
    public var description: String {
        guard let request else { return "Request failed: \(self.message)" }
        return "\(request) failed: \(self.message)"
    }

    /// The description, the code and the underlying error.
    public var debugDescription: String {
        var text = "KiteError(\(self.code)): \(self.description)"
        if let underlyingError {
            text += " [underlying: \(String(reflecting: underlyingError))]"
        }
        return text
    }

    public static func == (lhs: KiteError, rhs: KiteError) -> Bool {
        lhs.code == rhs.code
    }

    /// The response status code, when there was a response.
    public var responseStatusCode: Int? {
        self.response?.status.code
    }

    /// A copy that names `request`, unless the error already names one.
    func naming(_ request: RequestSummary?) -> KiteError {
        guard self.request == nil, let request else { return self }
        return self.with(request: request, response: self.response)
    }

    /// A copy that carries `response`, unless the error already carries one.
    func carrying(_ response: HTTPResponse?) -> KiteError {
        guard self.response == nil, let response else { return self }
        return self.with(request: self.request, response: response)
    }

    /// A copy with `request` and `response`, everything else the same.
    private func with(request: RequestSummary?, response: HTTPResponse?) -> KiteError {
        KiteError(
            storage: Storage(
                code: self.code,
                message: self.message,
                request: request,
                response: response,
                timeout: self.timeout,
                underlyingError: self.underlyingError,
                retried: self.retriedError,
                responseBody: self.responseBody
            )
        )
    }

    /// A copy that carries the first ``maximumResponseBodyLength`` bytes of `body`, unless the error already
    /// carries a body or `body` is `nil`.
    func carryingBody(_ body: Data?) -> KiteError {
        guard self.responseBody == nil, let body else { return self }
        let kept =
            body.count > Self.maximumResponseBodyLength ? Data(body.prefix(Self.maximumResponseBodyLength)) : body
        return KiteError(
            storage: Storage(
                code: self.code,
                message: self.message,
                request: self.request,
                response: self.response,
                timeout: self.timeout,
                underlyingError: self.underlyingError,
                retried: self.retriedError,
                responseBody: kept
            )
        )
    }
}

extension KiteError {
    /// The kind of a ``KiteError``.
    ///
    /// Codes are static members, so new ones can be added without breaking `switch`-free code:
    ///
    /// ```swift
    /// if error.code == .timedOut { print(error.timeout as Any) }
    /// ```
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String

        private init(_ name: String) {
            self.name = name
        }

        public var description: String { self.name }

        /// The URL did not parse, is not `http` or `https`, has no host, or holds CR, LF or NUL.
        public static let invalidURL = Code("invalidURL")
        /// The request could not be built (an invalid method, an unsupported body).
        public static let invalidRequest = Code("invalidRequest")
        /// A header name or value holds CR, LF, NUL or is otherwise not valid HTTP.
        public static let invalidHeader = Code("invalidHeader")
        /// Parameters could not be encoded into the request.
        public static let parameterEncodingFailed = Code("parameterEncodingFailed")
        /// A request modifier or a ``RequestAdapter`` failed; ``KiteError/underlyingError`` is what it threw.
        public static let requestAdaptationFailed = Code("requestAdaptationFailed")
        /// A ``RequestRetrier`` refused with its own error (``RetryResult/doNotRetryWithError(_:)``):
        /// ``KiteError/underlyingError`` is the retrier's error, ``KiteError/retriedError`` the attempt's.
        public static let requestRetryFailed = Code("requestRetryFailed")
        /// Credentials were refused (a second `401` after answering a challenge), missing, or could not
        /// be refreshed.
        public static let authenticationFailed = Code("authenticationFailed")
        /// A redirect was refused by the rules: from `https` to `http` (unless allowed).
        public static let redirectRefused = Code("redirectRefused")
        /// An upload's body could not be produced: a file or stream failed, or produced a different
        /// number of bytes than declared.
        public static let uploadFailed = Code("uploadFailed")
        /// A one-shot body (an async sequence) would have to be sent again, after a redirect.
        public static let bodyNotReplayable = Code("bodyNotReplayable")
        /// The connection could not be established (refused, unreachable, DNS failure).
        public static let connectionFailed = Code("connectionFailed")
        /// The connection failed after it was established (closed, reset, protocol error).
        public static let connectionLost = Code("connectionLost")
        /// The TLS handshake or certificate verification failed.
        public static let tlsFailed = Code("tlsFailed")
        /// The server is not trusted for the host: its certificate failed verification (expired, for another
        /// host, from an untrusted root) or an evaluator of the ``ServerTrustManager`` refused it (pin
        /// mismatch), or the host has no evaluator and all hosts must be evaluated. The message names the host
        /// and what did not match.
        public static let serverTrustEvaluationFailed = Code("serverTrustEvaluationFailed")
        /// A timeout expired; ``KiteError/timeout`` says which.
        public static let timedOut = Code("timedOut")
        /// The request was cancelled.
        public static let cancelled = Code("cancelled")
        /// The response failed a validator (status code, content type or a custom check).
        public static let responseValidationFailed = Code("responseValidationFailed")
        /// The response body could not be turned into the requested value.
        public static let responseSerializationFailed = Code("responseSerializationFailed")
        /// The server's response is not valid HTTP.
        public static let invalidResponse = Code("invalidResponse")
        /// The response body could not be decompressed, or it inflated past the configured limit.
        public static let decompressionFailed = Code("decompressionFailed")
        /// The response body is larger than the request's or session's maximum response size.
        public static let responseTooLarge = Code("responseTooLarge")
        /// A download's file could not be written, moved into place or read.
        public static let downloadFailed = Code("downloadFailed")
        /// A download could not be resumed: invalid resume data, the server refused the range, or
        /// the file changed on the server.
        public static let resumeFailed = Code("resumeFailed")
        /// More redirects than allowed, or a redirect cycle.
        public static let tooManyRedirects = Code("tooManyRedirects")
        /// The session was shut down before the request was sent.
        public static let sessionShutDown = Code("sessionShutDown")
        /// A streamed response body could not be decoded into items, such as a JSON line that does not decode.
        public static let streamDecodingFailed = Code("streamDecodingFailed")
        /// A line of a streamed response body is longer than the decoder's maximum line length.
        public static let streamLineTooLong = Code("streamLineTooLong")
        /// A multipart form could not be built, encoded, sent or written: a file part failed its checks, a
        /// file or stream part's bytes did not match its length, or the boundary was invalid;
        /// ``KiteError/multipartFailure`` says which.
        public static let multipartEncodingFailed = Code("multipartEncodingFailed")
        /// An ``HTTPCookieJar``'s file could not be read (missing permissions, not a jar's JSON) or written.
        public static let cookieStorageFailed = Code("cookieStorageFailed")
        /// The proxy could not be used: its URL in the environment is not valid or names a kind the engine cannot
        /// speak, it refused the tunnel, asked for credentials (`407`), or did not answer the handshake in time.
        public static let proxyFailed = Code("proxyFailed")
        /// The request's cache policy (`returnCacheDataDontLoad`) allows only a stored response, and the
        /// session's ``ResponseCache`` has none for it.
        public static let cacheMiss = Code("cacheMiss")
    }

    /// Which of a request's timeouts expired.
    public enum TimeoutKind: String, Sendable, Hashable, CustomStringConvertible {
        /// Establishing the connection (TCP and TLS) took too long.
        case connect
        /// The server sent nothing for too long while the response was awaited or read.
        case idleRead
        /// The server took no request body bytes for too long (it stopped reading the upload).
        case idleWrite
        /// The whole request, from start to the last body byte, took too long.
        case total

        public var description: String {
            switch self {
            case .connect: "connect"
            case .idleRead: "idle-read"
            case .idleWrite: "idle-write"
            case .total: "total"
            }
        }
    }
}
