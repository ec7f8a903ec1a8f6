import AsyncHTTPClient
import HTTPTypes
import NIOCore

/// Sending a request a second time: when the first try never reached the server, or reached a connection the server
/// had given up (``StaleConnectionWatch``), for a request that may be sent twice.
extension AHCTransport {
    /// Runs `attempt` (one exchange on the client for the request's route, up to its response head), once more
    /// when the first try failed before any of the request was written, or, for an `idempotent` request, on a
    /// reused connection the server had closed before answering (telling `events`): on `proxied`'s client, else on
    /// `direct`.
    @inline(never)
    func execute<Answer>(
        on direct: HTTPClient,
        through proxied: ProxyClients.Proxied?,
        mayResend: Bool,
        idempotent: Bool = false,
        watch: UploadWatch?,
        authority: String?,
        events: (any TransportEvents)?,
        _ attempt: (HTTPClient) async throws -> Answer
    ) async throws(KiteError) -> Answer {
        // The head was written by the time the answer's head arrived (or never will be): its handler took the watch.
        defer { if let watch { self.uploadWatches.forget(watch) } }
        var resent = false
        while true {
            do {
                return try await attempt(proxied?.client ?? direct)
            } catch {
                // A pooled connection the server had already closed (say, after stray bytes following a
                // response) fails the first write with "I/O on closed channel": nothing of the request
                // reached the server, so it is sent once more on a fresh connection, as curl and Go do.
                // So is a request whose HTTP/2 stream the server refused (REFUSED_STREAM, or above the last
                // stream of its GOAWAY, which nginx sends after 1,000 requests on a connection): the server
                // did not process it. So is an idempotent request (or one with an `Idempotency-Key`) that went out on a
                // reused connection the server closed before a byte of its answer came (``StaleConnectionWatch``:
                // a keep-alive timeout met the request on its way). Any other request whose bytes may have been
                // written is never sent again here.
                let unsent = Self.failedBeforeWriting(error) && watch?.wasPulled != true
                let stale = error is StaleConnectionWatch.ClosedBeforeAnswer
                if !resent, mayResend, unsent || Self.wasRefused(error) || (stale && idempotent) {
                    resent = true
                    events?.transportWillResend(
                        after: self.failure(from: error, through: proxied, authority: authority)
                    )
                    continue
                }
                let failure = self.failure(from: error, through: proxied, authority: authority)
                if failure.code == .serverTrustEvaluationFailed, Self.isVerificationFailure(error) {
                    throw await self.explainingTrustFailure(failure, through: proxied, authority: authority)
                }
                if stale, !resent {
                    let reason =
                        !idempotent
                        ? "its method is not idempotent (an Idempotency-Key field allows sending it again)"
                        : "its body cannot be made again"
                    throw KiteError(
                        code: failure.code,
                        message: "\(failure.message); it was not sent again: \(reason)",
                        underlyingError: error
                    )
                }
                throw failure
            }
        }
    }

    /// Whether a request may be sent twice: its method is idempotent (RFC 9110 §9.2.2), or it carries an
    /// `Idempotency-Key` (or `X-Idempotency-Key`) field, which says the server takes it once however often it comes
    /// (as Go's `net/http` reads them).
    static func isIdempotent(_ head: HTTPRequest) -> Bool {
        switch head.method {
        case .get, .head, .options, .trace, .put, .delete:
            return true
        default:
            return head.headerFields.contains { field in
                let name = field.name.canonicalName
                return name == "idempotency-key" || name == "x-idempotency-key"
            }
        }
    }

    /// Whether `error` says the request failed at its first write on a connection that was already closed.
    private static func failedBeforeWriting(_ error: any Error) -> Bool {
        (error as? ChannelError) == .ioOnClosedChannel
    }
}
