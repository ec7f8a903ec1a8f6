import Foundation
import Hummingbird
import NIOConcurrencyHelpers

/// Kite-only helpers for retry tests (httpbin has no such routes):
/// - `/flaky/{key}?failures=N&status=S`: the first `N` requests (default 2) for `key` answer status
///   `S` (default 503), later ones 200 with `{"attempt": n, "key": key}`; the count is per key, so
///   concurrent tests use their own keys.
/// - `/retry-after/{seconds}?status=S&form=date`: status `S` (default 503) with `Retry-After` as
///   delta-seconds, or as an HTTP-date `seconds` from now with `form=date`.
extension Router<HTTPBinRequestContext> {
    func addRetryRoutes() {
        self.route("/flaky/:key", methods: Self.anyMethod) { request, context in
            let key = try context.text("key")
            let info = RequestInfo(request: request, context: context)
            let failures = try info.args.number("failures", default: 2)
            let status = try info.args.number("status", default: 503)
            let attempt = flakyAttempts.withLockedValue { attempts in
                attempts[key, default: 0] += 1
                return attempts[key, default: 0]
            }
            guard attempt > failures else {
                return StatusResponses.response(for: status)
            }
            return .json(["attempt": .integer(Int64(attempt)), "key": .string(key)])
        }
        self.route("/retry-after/:seconds", methods: Self.anyMethod) { request, context in
            let seconds = try context.count("seconds")
            let info = RequestInfo(request: request, context: context)
            let status = try info.args.number("status", default: 503)
            let value =
                info.args.option("form") == "date"
                ? HTTPDate.string(from: Date().addingTimeInterval(TimeInterval(seconds)))
                : String(seconds)
            var response = StatusResponses.response(for: status)
            response.headers[.retryAfter] = value
            return response
        }
    }
}

/// Requests seen per `/flaky` key.
private let flakyAttempts = NIOLockedValueBox<[String: Int]>([:])
