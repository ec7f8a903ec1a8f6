import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSOCKS
import NIOSSL

extension AHCTransport {
    /// The engine's error as a ``KiteError`` whose message a user can act on; the engine error is
    /// kept as the underlying error, never printed.
    func kiteError(from error: any Error, authority: String?) -> KiteError {
        if let error = error as? KiteError {
            return error
        }
        if error is IdleWriteTimeoutError {
            return self.timeout(.idleWrite, configured: self.configuration.idleWriteTimeout, underlying: error)
        }
        if error is StaleConnectionWatch.ClosedBeforeAnswer {
            return KiteError(
                code: .connectionLost,
                message: "the server closed the connection, which had served an earlier request, before it answered",
                underlyingError: error
            )
        }
        if error is CancellationError {
            return KiteError(code: .cancelled, message: "the request was cancelled", underlyingError: error)
        }
        if let error = error as? HTTPClientError {
            return self.kiteError(fromClientError: error)
        }
        if let error = error as? NIOConnectionError {
            return KiteError(
                code: .connectionFailed,
                message: "could not connect to \(error.host):\(error.port): \(Self.connectionFailureReason(error))",
                underlyingError: error
            )
        }
        if let refusal = error as? TrustGate.Refusal {
            return refusal.error
        }
        if Self.isVerificationFailure(error) {
            let host = authority.map(TrustGate.Check.host(ofAuthority:)) ?? "the server"
            return KiteError(
                code: .serverTrustEvaluationFailed,
                message: "the server \(host) is not trusted: its certificate failed verification",
                underlyingError: error
            )
        }
        if error is NIOSSLError || error is BoringSSLError || error is NIOSSLExtraError {
            return KiteError(
                code: .tlsFailed,
                message: "the TLS handshake failed (\(Self.tlsFailureReason(error)))",
                underlyingError: error
            )
        }
        if let error = error as? ChannelError {
            switch error {
            case .connectTimeout(let amount):
                return self.timeout(.connect, configured: .nanoseconds(amount.nanoseconds), underlying: error)
            case .ioOnClosedChannel, .alreadyClosed, .outputClosed, .inputClosed, .eof:
                return KiteError(
                    code: .connectionLost,
                    message: "the connection closed before the response was complete",
                    underlyingError: error
                )
            default:
                break
            }
        }
        if let error = error as? IOError {
            return Self.kiteError(fromErrno: error.errnoCode, authority: authority ?? "the server", underlying: error)
        }
        if let error = error as? HTTPParserError, error == .invalidEOFState {
            // The connection closed (FIN) before the body announced by the head was complete: a lost
            // connection, like a reset, not a malformed response.
            return KiteError(
                code: .connectionLost,
                message: "the server closed the connection before the response was complete",
                underlyingError: error
            )
        }
        if error is HTTPParserError {
            return KiteError(
                code: .invalidResponse,
                message: "the server's response is not valid HTTP",
                underlyingError: error
            )
        }
        if error is NIOTooManyBytesError {
            return KiteError(
                code: .invalidResponse,
                message: "the response is larger than allowed",
                underlyingError: error
            )
        }
        if let error = error as? NIOHTTP2Errors.StreamClosed {
            let code = Self.name(of: error.errorCode)
            return KiteError(
                code: .connectionLost,
                message: error.errorCode == .refusedStream
                    ? "the server refused the request's HTTP/2 stream (\(code)): it did not process the request"
                    : "the server reset the request's HTTP/2 stream (\(code))",
                underlyingError: error
            )
        }
        return KiteError(
            code: .connectionLost,
            message: "the exchange failed (\(type(of: error)))",
            underlyingError: error
        )
    }

    /// Whether `error` says the server refused the request's HTTP/2 stream: a `RST_STREAM` with `REFUSED_STREAM`, or
    /// a `GOAWAY` whose last stream is below it (NIOHTTP2 reports both so). The server did not process such a request
    /// (RFC 9113 §8.7), so it may be sent again, whatever its method.
    static func wasRefused(_ error: any Error) -> Bool {
        (error as? NIOHTTP2Errors.StreamClosed)?.errorCode == .refusedStream
    }

    /// An HTTP/2 error code by its name in RFC 9113 §7.
    private static func name(of code: NIOHTTP2.HTTP2ErrorCode) -> String {
        let names = [
            "NO_ERROR", "PROTOCOL_ERROR", "INTERNAL_ERROR", "FLOW_CONTROL_ERROR", "SETTINGS_TIMEOUT", "STREAM_CLOSED",
            "FRAME_SIZE_ERROR", "REFUSED_STREAM", "CANCEL", "COMPRESSION_ERROR", "CONNECT_ERROR", "ENHANCE_YOUR_CALM",
            "INADEQUATE_SECURITY", "HTTP_1_1_REQUIRED",
        ]
        return names.indices.contains(code.networkCode)
            ? names[code.networkCode] : "error code 0x\(String(code.networkCode, radix: 16))"
    }

    private func kiteError(fromClientError error: HTTPClientError) -> KiteError {
        switch error {
        case .connectTimeout, .tlsHandshakeTimeout:
            return self.timeout(.connect, configured: self.configuration.connectTimeout, underlying: error)
        case .getConnectionFromPoolTimeout:
            // async-http-client starts a request's connect deadline when the request is queued, so the connect
            // timeout also bounds the wait for one of the host's connections to become free.
            let busy = self.configuration.maximumConnectionsPerHost
            let connections = busy == 1 ? "its 1 connection was" : "all \(busy) of its connections were"
            return KiteError(
                code: .timedOut,
                message: "the connect timeout (\(self.configuration.connectTimeout.kiteDescription)) expired while "
                    + "the request waited for a connection to the host: \(connections) busy",
                timeout: .connect,
                underlyingError: error
            )
        case .readTimeout:
            return self.timeout(.idleRead, configured: self.configuration.idleReadTimeout, underlying: error)
        case .deadlineExceeded:
            return KiteError(
                code: .timedOut,
                message: "the total timeout expired",
                timeout: .total,
                underlyingError: error
            )
        case .cancelled, .requestStreamCancelled:
            return KiteError(code: .cancelled, message: "the request was cancelled", underlyingError: error)
        case .redirectLimitReached:
            return KiteError(
                code: .tooManyRedirects,
                message: "the server redirected more than the allowed number of times",
                underlyingError: error
            )
        case .redirectCycleDetected:
            return KiteError(
                code: .tooManyRedirects,
                message: "the server's redirects form a cycle",
                underlyingError: error
            )
        case .remoteConnectionClosed:
            return KiteError(
                code: .connectionLost,
                message: "the server closed the connection before the response was complete",
                underlyingError: error
            )
        case .alreadyShutdown:
            return KiteError(code: .sessionShutDown, message: "the session was shut down", underlyingError: error)
        case .invalidURL, .emptyHost, .emptyScheme:
            return KiteError(code: .invalidURL, message: "the URL is not valid", underlyingError: error)
        case .bodyLengthMismatch:
            return KiteError(
                code: .invalidRequest,
                message: "the request body's length differs from its declared Content-Length",
                underlyingError: error
            )
        case .traceRequestWithBody:
            return KiteError(
                code: .invalidRequest,
                message: "a TRACE request cannot have a body",
                underlyingError: error
            )
        default:
            if EngineErrorCase.isHeaderError(error) {
                return KiteError(code: .invalidHeader, message: "a header is not valid", underlyingError: error)
            }
            return KiteError(
                code: .connectionLost,
                message: "the exchange failed (\(error.shortDescription))",
                underlyingError: error
            )
        }
    }

    private func timeout(_ kind: KiteError.TimeoutKind, configured: Duration?, underlying: any Error) -> KiteError {
        let amount = configured.map { " (\($0.kiteDescription))" } ?? ""
        let what =
            switch kind {
            case .connect: "the connect timeout\(amount) expired before the connection was established"
            case .idleRead: "the idle-read timeout\(amount) expired: the server sent nothing for that long"
            case .idleWrite:
                "the idle-write timeout\(amount) expired: the server took no request body bytes for that long"
            case .total: "the total timeout\(amount) expired"
            }
        return KiteError(code: .timedOut, message: what, timeout: kind, underlyingError: underlying)
    }

    private static func connectionFailureReason(_ error: NIOConnectionError) -> String {
        if error.dnsAError != nil || error.dnsAAAAError != nil {
            return "the host name could not be resolved"
        }
        if let errno = error.connectionErrors.lazy.compactMap({ ($0.error as? IOError)?.errnoCode }).first {
            return Self.describe(errno: errno)
        }
        return "no address accepted the connection"
    }

    private static func kiteError(fromErrno errno: CInt, authority: String, underlying: any Error) -> KiteError {
        switch errno {
        case ECONNREFUSED, EHOSTUNREACH, ENETUNREACH, EADDRNOTAVAIL:
            return KiteError(
                code: .connectionFailed,
                message: "could not connect to \(authority): \(Self.describe(errno: errno))",
                underlyingError: underlying
            )
        default:
            return KiteError(
                code: .connectionLost,
                message: "the connection failed: \(Self.describe(errno: errno))",
                underlyingError: underlying
            )
        }
    }

    private static func describe(errno: CInt) -> String {
        switch errno {
        case ECONNREFUSED: "connection refused"
        case ECONNRESET: "connection reset by the server"
        case EHOSTUNREACH: "host unreachable"
        case ENETUNREACH: "network unreachable"
        case ETIMEDOUT: "connection timed out"
        case EPIPE: "broken pipe"
        default: String(cString: strerror(errno)).lowercased()
        }
    }

    /// Whether the handshake failed because the server's certificate did not verify (chain, dates or host).
    static func isVerificationFailure(_ error: any Error) -> Bool {
        if let error = error as? NIOSSLError, case .handshakeFailed(let boringError) = error {
            return EngineErrorCase.packedCodes(of: boringError).contains(EngineErrorCase.certificateVerifyFailed)
        }
        if let error = error as? NIOSSLExtraError {
            return error == .failedToValidateHostname || error == .serverHostnameImpossibleToMatch
        }
        return false
    }

    private static func tlsFailureReason(_ error: any Error) -> String {
        if let error = error as? NIOSSLError {
            switch error {
            case .handshakeFailed(let boringError):
                if EngineErrorCase.packedCodes(of: boringError).contains(EngineErrorCase.certificateVerifyFailed) {
                    return "the server's certificate is not trusted"
                }
                return "certificate verification or negotiation failed"
            case .unableToValidateCertificate: return "the server certificate could not be validated"
            case .uncleanShutdown: return "the server closed the TLS connection uncleanly"
            default: return "TLS error"
            }
        }
        if error is BoringSSLError {
            return "the TLS library rejected the connection"
        }
        return "TLS error"
    }
}

extension Duration {
    /// A short human form: `10 s`, `1.5 s`, `250 ms`.
    var kiteDescription: String {
        let (seconds, attoseconds) = self.components
        let milliseconds = seconds * 1000 + attoseconds / 1_000_000_000_000_000
        if milliseconds == 0, attoseconds > 0 {
            return "\(attoseconds / 1_000_000_000_000) µs"
        }
        if milliseconds % 1000 == 0 {
            return "\(milliseconds / 1000) s"
        }
        if milliseconds < 1000 {
            return "\(milliseconds) ms"
        }
        let text = String(format: "%.3f", Double(milliseconds) / 1000)
        let trimmed = text.replacingOccurrences(of: #"\.?0+$"#, with: "", options: .regularExpression)
        return "\(trimmed) s"
    }
}

/// What an engine error is, by the dependency's public API where it has one (`HTTPClientError` is `Equatable`
/// with public static values; NIOSOCKS's errors are public types), else read from its structure (never from its
/// text): `HTTPClientError`'s cases with a payload hide their `code` enum, NIOSSL's `BoringSSLInternalError` its
/// packed BoringSSL error code, and AHC's `HTTP1ProxyConnectHandler` fails with a private type. If a later
/// version renames those, the lookups return nothing and the errors fall back to their generic codes;
/// `EngineErrorMappingTests` builds each one and fails then.
enum EngineErrorCase {
    /// Whether the `HTTPClientError` is about request header fields.
    static func isHeaderError(_ error: HTTPClientError) -> Bool {
        // (`incompatibleHeaders` and `chunkedSpecifiedMultipleTimes` are deprecated: AHC corrects those headers.)
        if error == .identityCodingIncorrectlyPresent { return true }
        // These carry the offending fields, so no public value equals them: only their case's name tells.
        guard let name = Self.name(of: error) else { return false }
        return name == "invalidHeaderFieldNames" || name == "invalidHeaderFieldValues"
    }

    /// Whether the error is one of NIOSOCKS's, which a SOCKS proxy's handshake fails with.
    static func isSOCKSError(_ error: any Error) -> Bool {
        error is SOCKSError.ConnectionFailed || error is SOCKSError.InvalidServerState
            || error is SOCKSError.InvalidClientState || error is SOCKSError.InvalidProtocolVersion
            || error is SOCKSError.InvalidReservedByte || error is SOCKSError.InvalidAddressType
            || error is SOCKSError.InvalidAuthenticationSelection || error is SOCKSError.NoValidAuthenticationMethod
            || error is SOCKSError.UnexpectedRead
    }

    /// Whether the error is the one AHC's `CONNECT` handler fails with when it is removed before the tunnel
    /// opened (the proxy closed the connection): a type private to AHC, known by its name only.
    static func isProxyConnectHandlerRemoved(_ error: any Error) -> Bool {
        String(reflecting: type(of: error)).contains("HTTP1ProxyConnectHandler")
    }

    /// BoringSSL's packed code for `SSL_R_CERTIFICATE_VERIFY_FAILED`: `ERR_PACK(ERR_LIB_SSL = 16, 125)`.
    static let certificateVerifyFailed: UInt32 = (16 << 24) | 125

    /// The name of the `HTTPClientError`'s hidden `code` case, such as `invalidHeaderFieldNames`.
    static func name(of error: HTTPClientError) -> String? {
        guard let code = Mirror(reflecting: error).children.first(where: { $0.label == "code" })?.value else {
            return nil
        }
        // A case with a payload is a child labelled with the case's name; one without is the value itself.
        if let label = Mirror(reflecting: code).children.first?.label { return label }
        return Mirror(reflecting: code).displayStyle == .enum ? "\(code)" : nil
    }

    /// The packed BoringSSL codes inside a handshake failure.
    static func packedCodes(of error: BoringSSLError) -> [UInt32] {
        guard case .sslError(let internals) = error else { return [] }
        return internals.compactMap { entry in
            guard let backing = Mirror(reflecting: entry).children.first(where: { $0.label == "backing" })?.value,
                let info = Mirror(reflecting: backing).children.first(where: { $0.label == "boringSSLErrorInfo" })
            else { return nil }
            return Mirror(reflecting: info.value).children.first?.value as? UInt32
        }
    }
}
