import Foundation
import HTTPTypes
import Kite
import OpenAPIRuntime

/// Kite's `RetryPolicy` as a swift-openapi `ClientMiddleware`, for a generated client on any transport.
///
/// A generated client takes every status as a typed response, so a session's retry policy, which sees only
/// failed attempts (as Alamofire's does without `validate()`), never retries a `503` that reached it. This
/// middleware does: it sends a request again when the response status is in the policy's
/// `RetryPolicy.retryableHTTPStatusCodes` or the transport threw an error whose code is in
/// `RetryPolicy.retryableErrorCodes`, for the policy's methods, up to its `RetryPolicy.retryLimit`,
/// after its backoff (or the response's `Retry-After`), paid from its `RetryPolicy.retryBudget`.
///
/// A request whose body iterates `.single` is never sent again: it could not be. The response of the attempt
/// that is retried is dropped unread. When the attempts run out, the last response (or error) is returned.
///
/// ```swift
/// let client = Client(
///     serverURL: URL(string: "http://127.0.0.1:8080")!,
///     transport: KiteClientTransport(session: session),
///     middlewares: [RetryPolicyMiddleware(policy: RetryPolicy(retryLimit: 3))]
/// )
/// ```
///
/// On ``KiteClientTransport`` the session's own interceptors still retry the failed attempts they see; give a
/// session that has a `RetryPolicy` a middleware with `retryableErrorCodes: []`, or errors are retried twice over.
/// A subclass's `shouldRetry(request:dueTo:)` is not consulted: there is no Kite request here.
public struct RetryPolicyMiddleware: ClientMiddleware {
    /// The limits, methods, codes and backoff.
    public let policy: RetryPolicy

    /// Creates a middleware that retries as `policy` says.
    ///
    /// - Parameter policy: The retry policy; Alamofire's defaults when omitted.
    public init(policy: RetryPolicy = RetryPolicy()) {
        self.policy = policy
    }

    public func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        baseURL: URL,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let replayable = body.map { $0.iterationBehavior == .multiple } ?? true
        self.policy.retryBudget?.deposit()
        var retryCount = 0
        while true {
            do {
                let (response, responseBody) = try await next(request, body, baseURL)
                guard self.policy.retryableHTTPStatusCodes.contains(response.status.code) else {
                    return (response, responseBody)
                }
                let failure = KiteError(
                    code: .responseValidationFailed,
                    message: "the server answered with status \(response.status.code)",
                    response: response
                )
                guard replayable,
                    let delay = self.delay(beforeRetry: retryCount, dueTo: failure, method: request.method)
                else {
                    return (response, responseBody)
                }
                try await Self.wait(delay)
            } catch {
                // The runtime wraps what the transport throws in its `ClientError`.
                guard replayable,
                    let kiteError = (error as? KiteError) ?? ((error as? ClientError)?.underlyingError as? KiteError),
                    let delay = self.delay(beforeRetry: retryCount, dueTo: kiteError, method: request.method)
                else { throw error }
                try await Self.wait(delay)
            }
            retryCount += 1
        }
    }

    /// The wait before retry number `retryCount + 1`, or `nil` when the policy does not retry.
    private func delay(beforeRetry retryCount: Int, dueTo error: KiteError, method: HTTPRequest.Method) -> Duration? {
        guard retryCount < self.policy.retryLimit, self.policy.shouldRetry(method: method, dueTo: error),
            let delay = self.policy.delay(beforeRetry: retryCount, dueTo: error)
        else { return nil }
        if let budget = self.policy.retryBudget, !budget.tryWithdraw() { return nil }
        return delay
    }

    private static func wait(_ delay: Duration) async throws {
        guard delay > .zero else { return }
        try await Task.sleep(for: delay)
    }
}
