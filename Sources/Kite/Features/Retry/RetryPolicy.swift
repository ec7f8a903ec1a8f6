import Foundation
import HTTPTypes

/// Retries failed requests that are safe to send again, waiting longer after each failure.
///
/// Alamofire 5's `RetryPolicy`, with its names and defaults: up to ``retryLimit`` (2) retries of
/// idempotent methods (``defaultRetryableHTTPMethods``) that failed with a status code in
/// ``retryableHTTPStatusCodes`` (408, 500, 502, 503, 504) or an error code in ``retryableErrorCodes``
/// (the connection failed or was lost, or a connect or idle timeout expired), after
/// `exponentialBackoffBase ^ retryCount * exponentialBackoffScale` seconds: 0.5 s, then 1 s.
///
/// Kite adds three things, so that many clients retrying at once do not keep a struggling server down:
/// - ``jitter``: by default each delay is drawn uniformly from zero to the computed one (AWS's
///   "full jitter"), so clients that failed together do not come back together.
/// - ``maximumDelay``: no backoff is longer than this (60 s). A `Retry-After` on the response
///   replaces the backoff, without jitter; one longer than ``maximumDelay`` ends the request with its
///   error at once rather than waiting.
/// - ``retryBudget``: retries are limited to about 10 % of requests, plus 10 a second (see
///   ``RetryBudget``).
///
/// A request whose total timeout expired is never retried: that timeout spans all attempts. Neither
/// is a request whose adapter failed.
///
/// ```swift
/// let session = Session(configuration: .default, interceptor: RetryPolicy(retryLimit: 3))
/// let data = try await session.request("http://127.0.0.1:8080/status/503")
///     .validate()
///     .serializingData()
///     .value
/// ```
///
/// Every request the policy may retry pays into its budget once, when it starts: from
/// ``adapt(_:using:)`` when the policy is an interceptor (as above), and from the pipeline when it is only a
/// retrier (`Interceptor(adapter: tokens, retrier: RetryPolicy())`), so the budget does not depend on the role.
///
/// The class is `open`, as Alamofire's is, so that an app can subclass it and override
/// ``shouldRetry(request:dueTo:)`` or ``retry(_:for:dueTo:)``. Swift checks `Sendable` only for final
/// classes, hence `@unchecked`: its stored properties are constants of `Sendable` types, and a
/// subclass must keep it so (constants, or state behind a lock).
// @unchecked: every stored property is a `let` of a Sendable type; a non-final class cannot be checked.
open class RetryPolicy: RequestInterceptor, @unchecked Sendable {
    /// How a delay is spread out.
    public enum Jitter: Sendable, Hashable {
        /// The computed delay, as it is.
        case none
        /// A delay drawn uniformly from zero to the computed one (AWS's "full jitter").
        case full
    }

    /// The number of retries: 2.
    public static let defaultRetryLimit = 2
    /// The base of the exponential backoff: 2.
    public static let defaultExponentialBackoffBase = 2
    /// The scale of the exponential backoff, in seconds: 0.5.
    public static let defaultExponentialBackoffScale = 0.5
    /// The idempotent methods: `DELETE`, `GET`, `HEAD`, `OPTIONS`, `PUT` and `TRACE`.
    public static let defaultRetryableHTTPMethods: Set<HTTPRequest.Method> = [
        .delete, .get, .head, .options, .put, .trace,
    ]
    /// Request Timeout, Internal Server Error, Bad Gateway, Service Unavailable, Gateway Timeout.
    public static let defaultRetryableHTTPStatusCodes: Set<Int> = [408, 500, 502, 503, 504]
    /// The connection could not be made or was lost, or a timeout expired (but never the total one).
    public static let defaultRetryableErrorCodes: Set<KiteError.Code> = [.connectionFailed, .connectionLost, .timedOut]
    /// The longest delay: 60 seconds.
    public static let defaultMaximumDelay: Duration = .seconds(60)

    /// How many times a request is retried at most.
    public let retryLimit: Int
    /// The base of the exponential backoff; values below 1 count as 1.
    public let exponentialBackoffBase: Int
    /// The delay before the first retry, in seconds; each retry multiplies it by the base.
    public let exponentialBackoffScale: Double
    /// The methods that may be retried.
    public let retryableHTTPMethods: Set<HTTPRequest.Method>
    /// The response status codes that are retried.
    public let retryableHTTPStatusCodes: Set<Int>
    /// The error codes that are retried, whatever the response. ``KiteError/Code-swift.struct/timedOut``
    /// is retried only for connect and idle timeouts.
    public let retryableErrorCodes: Set<KiteError.Code>
    /// How the backoff is spread out. `Retry-After` delays are not.
    public let jitter: Jitter
    /// The longest backoff, and the longest `Retry-After` the policy waits for.
    public let maximumDelay: Duration
    /// The budget retries are paid from, or `nil` for none.
    public let retryBudget: RetryBudget?

    /// The current time, for `Retry-After` dates.
    let now: @Sendable () -> Date
    /// A number drawn uniformly from a range, for jitter.
    let random: @Sendable (ClosedRange<Double>) -> Double

    /// Creates a policy.
    ///
    /// - Parameters:
    ///   - retryLimit: How many times a request is retried at most.
    ///   - exponentialBackoffBase: The base of the exponential backoff; values below 1 count as 1.
    ///   - exponentialBackoffScale: The delay before the first retry, in seconds.
    ///   - retryableHTTPMethods: The methods that may be retried.
    ///   - retryableHTTPStatusCodes: The response status codes that are retried.
    ///   - retryableErrorCodes: The error codes that are retried.
    ///   - jitter: How the backoff is spread out.
    ///   - maximumDelay: The longest backoff, and the longest `Retry-After` waited for.
    ///   - retryBudget: The budget retries are paid from, or `nil` for none.
    public init(
        retryLimit: Int = RetryPolicy.defaultRetryLimit,
        exponentialBackoffBase: Int = RetryPolicy.defaultExponentialBackoffBase,
        exponentialBackoffScale: Double = RetryPolicy.defaultExponentialBackoffScale,
        retryableHTTPMethods: Set<HTTPRequest.Method> = RetryPolicy.defaultRetryableHTTPMethods,
        retryableHTTPStatusCodes: Set<Int> = RetryPolicy.defaultRetryableHTTPStatusCodes,
        retryableErrorCodes: Set<KiteError.Code> = RetryPolicy.defaultRetryableErrorCodes,
        jitter: Jitter = .full,
        maximumDelay: Duration = RetryPolicy.defaultMaximumDelay,
        retryBudget: RetryBudget? = RetryBudget()
    ) {
        self.retryLimit = retryLimit
        self.exponentialBackoffBase = exponentialBackoffBase
        self.exponentialBackoffScale = exponentialBackoffScale
        self.retryableHTTPMethods = retryableHTTPMethods
        self.retryableHTTPStatusCodes = retryableHTTPStatusCodes
        self.retryableErrorCodes = retryableErrorCodes
        self.jitter = jitter
        self.maximumDelay = maximumDelay
        self.retryBudget = retryBudget
        self.now = { Date() }
        self.random = { Double.random(in: $0) }
    }

    /// Creates a policy that reads the time from `now` and draws jitter from `random` (for tests).
    init(
        retryLimit: Int = RetryPolicy.defaultRetryLimit,
        exponentialBackoffBase: Int = RetryPolicy.defaultExponentialBackoffBase,
        exponentialBackoffScale: Double = RetryPolicy.defaultExponentialBackoffScale,
        retryableHTTPMethods: Set<HTTPRequest.Method> = RetryPolicy.defaultRetryableHTTPMethods,
        retryableHTTPStatusCodes: Set<Int> = RetryPolicy.defaultRetryableHTTPStatusCodes,
        retryableErrorCodes: Set<KiteError.Code> = RetryPolicy.defaultRetryableErrorCodes,
        jitter: Jitter = .full,
        maximumDelay: Duration = RetryPolicy.defaultMaximumDelay,
        retryBudget: RetryBudget? = RetryBudget(),
        now: @escaping @Sendable () -> Date,
        random: @escaping @Sendable (ClosedRange<Double>) -> Double = { Double.random(in: $0) }
    ) {
        self.retryLimit = retryLimit
        self.exponentialBackoffBase = exponentialBackoffBase
        self.exponentialBackoffScale = exponentialBackoffScale
        self.retryableHTTPMethods = retryableHTTPMethods
        self.retryableHTTPStatusCodes = retryableHTTPStatusCodes
        self.retryableErrorCodes = retryableErrorCodes
        self.jitter = jitter
        self.maximumDelay = maximumDelay
        self.retryBudget = retryBudget
        self.now = now
        self.random = random
    }

    /// Returns `request` unchanged.
    ///
    /// - Parameters:
    ///   - request: The head to send.
    ///   - session: The session that sends it.
    /// - Returns: `request`.
    open func adapt(_ request: HTTPRequest, for session: Session) async throws -> HTTPRequest {
        request
    }

    /// Pays into the ``retryBudget`` on a request's first attempt, then calls ``adapt(_:for:)``.
    ///
    /// A subclass that overrides this calls `super`, or the requests it adapts pay nothing into the budget.
    ///
    /// - Parameters:
    ///   - request: The head to send.
    ///   - state: The request and attempt.
    /// - Returns: What ``adapt(_:for:)`` returns.
    open func adapt(_ request: HTTPRequest, using state: RequestAdapterState) async throws -> HTTPRequest {
        if state.retryCount == 0 {
            self.retryBudget?.deposit()
        }
        return try await self.adapt(request, for: state.session)
    }

    /// Retries `request` after the backoff or the response's `Retry-After`, when
    /// ``shouldRetry(request:dueTo:)`` allows it, the ``retryLimit`` is not reached, the delay is not
    /// longer than ``maximumDelay`` and the ``retryBudget`` has a token.
    ///
    /// - Parameters:
    ///   - request: The request whose attempt failed.
    ///   - session: The session that runs it.
    ///   - error: Why the attempt failed.
    /// - Returns: ``RetryResult/retryWithDelay(_:)``, ``RetryResult/retry`` when the delay is zero, or
    ///   ``RetryResult/doNotRetry``.
    open func retry(_ request: BaseRequest, for session: Session, dueTo error: KiteError) async -> RetryResult {
        let retryCount = request.retryCount
        guard retryCount < self.retryLimit, self.shouldRetry(request: request, dueTo: error),
            let delay = self.delay(beforeRetry: retryCount, dueTo: error)
        else {
            return .doNotRetry
        }
        if let retryBudget = self.retryBudget, !retryBudget.tryWithdraw() {
            return .doNotRetry
        }
        return delay == .zero ? .retry : .retryWithDelay(delay)
    }

    /// Whether `error` is worth a retry of `request`, whatever the limit and the budget.
    ///
    /// True when the request's method is in ``retryableHTTPMethods`` and either the response status is
    /// in ``retryableHTTPStatusCodes`` or the error's code is in ``retryableErrorCodes``. Never for an
    /// expired total timeout, a failed adapter or a cancelled request; a timeout only when it is the
    /// connect, idle-read or idle-write one.
    ///
    /// - Parameters:
    ///   - request: The request whose attempt failed.
    ///   - error: Why the attempt failed.
    /// - Returns: Whether to retry.
    open func shouldRetry(request: BaseRequest, dueTo error: KiteError) -> Bool {
        self.shouldRetry(method: request.request?.method ?? request.draft?.method, dueTo: error)
    }

    /// The policy's rules for an attempt with `method` that failed with `error` (KiteOpenAPI's middleware asks
    /// this for a generated client's request, which has no ``BaseRequest``).
    package func shouldRetry(method: HTTPRequest.Method?, dueTo error: KiteError) -> Bool {
        guard let method, self.retryableHTTPMethods.contains(method) else {
            return false
        }
        guard error.code != .requestAdaptationFailed, error.code != .cancelled, error.timeout != .total else {
            return false
        }
        if let status = error.response?.status.code, self.retryableHTTPStatusCodes.contains(status) {
            return true
        }
        guard self.retryableErrorCodes.contains(error.code) else { return false }
        guard error.code == .timedOut else { return true }
        switch error.timeout {
        case .connect, .idleRead, .idleWrite: return true
        case .total, nil: return false
        }
    }

    /// The wait before retry number `retryCount + 1`, or `nil` when `Retry-After` asks for longer
    /// than ``maximumDelay``.
    package func delay(beforeRetry retryCount: Int, dueTo error: KiteError) -> Duration? {
        let maximum = max(self.maximumDelay, .zero)
        let maximumSeconds = maximum.timeInterval
        if let value = error.response?.headerFields[values: .retryAfter].first,
            let seconds = RetryAfter.seconds(in: value, now: self.now())
        {
            guard seconds <= maximumSeconds else { return nil }
            return seconds < maximumSeconds ? .seconds(seconds) : maximum
        }
        let base = Double(max(self.exponentialBackoffBase, 1))
        let scale = self.exponentialBackoffScale.isNaN ? 0 : max(self.exponentialBackoffScale, 0)
        // A zero scale is no backoff, even when the power overflows to infinity.
        let product = scale == 0 ? 0 : pow(base, Double(max(retryCount, 0))) * scale
        let backoff = min(product, maximumSeconds)
        let seconds: Double
        switch self.jitter {
        case .none:
            seconds = backoff
        case .full:
            let drawn = self.random(0...backoff)
            seconds = drawn.isNaN ? backoff : min(max(drawn, 0), backoff)
        }
        return seconds < maximumSeconds ? .seconds(seconds) : maximum
    }
}

/// A ``RetryPolicy`` that retries only lost connections: Alamofire 5's `ConnectionLostRetryPolicy`.
///
/// A server may close an idle keep-alive connection just as a request is sent on it; sending an
/// idempotent request again on a new connection is then safe. No status code is retried.
///
/// ```swift
/// let session = Session(configuration: .default, interceptor: ConnectionLostRetryPolicy())
/// ```
// @unchecked: adds no stored properties to RetryPolicy, whose are all constants of Sendable types.
public final class ConnectionLostRetryPolicy: RetryPolicy, @unchecked Sendable {
    /// Creates a policy that retries ``KiteError/Code-swift.struct/connectionLost`` errors only.
    ///
    /// - Parameters:
    ///   - retryLimit: How many times a request is retried at most.
    ///   - exponentialBackoffBase: The base of the exponential backoff; values below 1 count as 1.
    ///   - exponentialBackoffScale: The delay before the first retry, in seconds.
    ///   - retryableHTTPMethods: The methods that may be retried.
    ///   - jitter: How the backoff is spread out.
    ///   - maximumDelay: The longest backoff.
    ///   - retryBudget: The budget retries are paid from, or `nil` for none.
    public init(
        retryLimit: Int = RetryPolicy.defaultRetryLimit,
        exponentialBackoffBase: Int = RetryPolicy.defaultExponentialBackoffBase,
        exponentialBackoffScale: Double = RetryPolicy.defaultExponentialBackoffScale,
        retryableHTTPMethods: Set<HTTPRequest.Method> = RetryPolicy.defaultRetryableHTTPMethods,
        jitter: Jitter = .full,
        maximumDelay: Duration = RetryPolicy.defaultMaximumDelay,
        retryBudget: RetryBudget? = RetryBudget()
    ) {
        super.init(
            retryLimit: retryLimit,
            exponentialBackoffBase: exponentialBackoffBase,
            exponentialBackoffScale: exponentialBackoffScale,
            retryableHTTPMethods: retryableHTTPMethods,
            retryableHTTPStatusCodes: [],
            retryableErrorCodes: [.connectionLost],
            jitter: jitter,
            maximumDelay: maximumDelay,
            retryBudget: retryBudget
        )
    }
}

extension RequestInterceptor where Self == RetryPolicy {
    /// A ``RetryPolicy`` with the defaults.
    public static var retryPolicy: RetryPolicy { RetryPolicy() }

    /// A ``RetryPolicy`` with the given settings.
    ///
    /// - Parameters:
    ///   - retryLimit: How many times a request is retried at most.
    ///   - exponentialBackoffBase: The base of the exponential backoff; values below 1 count as 1.
    ///   - exponentialBackoffScale: The delay before the first retry, in seconds.
    ///   - retryableHTTPMethods: The methods that may be retried.
    ///   - retryableHTTPStatusCodes: The response status codes that are retried.
    ///   - retryableErrorCodes: The error codes that are retried.
    ///   - jitter: How the backoff is spread out.
    ///   - maximumDelay: The longest backoff, and the longest `Retry-After` waited for.
    ///   - retryBudget: The budget retries are paid from, or `nil` for none.
    /// - Returns: The policy.
    public static func retryPolicy(
        retryLimit: Int = RetryPolicy.defaultRetryLimit,
        exponentialBackoffBase: Int = RetryPolicy.defaultExponentialBackoffBase,
        exponentialBackoffScale: Double = RetryPolicy.defaultExponentialBackoffScale,
        retryableHTTPMethods: Set<HTTPRequest.Method> = RetryPolicy.defaultRetryableHTTPMethods,
        retryableHTTPStatusCodes: Set<Int> = RetryPolicy.defaultRetryableHTTPStatusCodes,
        retryableErrorCodes: Set<KiteError.Code> = RetryPolicy.defaultRetryableErrorCodes,
        jitter: RetryPolicy.Jitter = .full,
        maximumDelay: Duration = RetryPolicy.defaultMaximumDelay,
        retryBudget: RetryBudget? = RetryBudget()
    ) -> RetryPolicy {
        RetryPolicy(
            retryLimit: retryLimit,
            exponentialBackoffBase: exponentialBackoffBase,
            exponentialBackoffScale: exponentialBackoffScale,
            retryableHTTPMethods: retryableHTTPMethods,
            retryableHTTPStatusCodes: retryableHTTPStatusCodes,
            retryableErrorCodes: retryableErrorCodes,
            jitter: jitter,
            maximumDelay: maximumDelay,
            retryBudget: retryBudget
        )
    }
}

extension RequestInterceptor where Self == ConnectionLostRetryPolicy {
    /// A ``ConnectionLostRetryPolicy`` with the defaults.
    public static var connectionLostRetryPolicy: ConnectionLostRetryPolicy { ConnectionLostRetryPolicy() }

    /// A ``ConnectionLostRetryPolicy`` with the given settings.
    ///
    /// - Parameters:
    ///   - retryLimit: How many times a request is retried at most.
    ///   - exponentialBackoffBase: The base of the exponential backoff; values below 1 count as 1.
    ///   - exponentialBackoffScale: The delay before the first retry, in seconds.
    ///   - retryableHTTPMethods: The methods that may be retried.
    ///   - jitter: How the backoff is spread out.
    ///   - maximumDelay: The longest backoff.
    ///   - retryBudget: The budget retries are paid from, or `nil` for none.
    /// - Returns: The policy.
    public static func connectionLostRetryPolicy(
        retryLimit: Int = RetryPolicy.defaultRetryLimit,
        exponentialBackoffBase: Int = RetryPolicy.defaultExponentialBackoffBase,
        exponentialBackoffScale: Double = RetryPolicy.defaultExponentialBackoffScale,
        retryableHTTPMethods: Set<HTTPRequest.Method> = RetryPolicy.defaultRetryableHTTPMethods,
        jitter: RetryPolicy.Jitter = .full,
        maximumDelay: Duration = RetryPolicy.defaultMaximumDelay,
        retryBudget: RetryBudget? = RetryBudget()
    ) -> ConnectionLostRetryPolicy {
        ConnectionLostRetryPolicy(
            retryLimit: retryLimit,
            exponentialBackoffBase: exponentialBackoffBase,
            exponentialBackoffScale: exponentialBackoffScale,
            retryableHTTPMethods: retryableHTTPMethods,
            jitter: jitter,
            maximumDelay: maximumDelay,
            retryBudget: retryBudget
        )
    }
}

/// The delay a `Retry-After` field value asks for (RFC 9110 §10.2.3).
enum RetryAfter {
    private static let shortDayNames: Set<Substring> = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    private static let longDayNames: Set<Substring> = [
        "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday",
    ]
    private static let monthNames: [Substring] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]

    /// The seconds to wait: delta-seconds as they are (`.infinity` when too large to count), an
    /// HTTP-date less `now` (0 when it is past); `nil` when `value` is neither.
    static func seconds(in value: String, now: Date) -> Double? {
        let value = value.trimmingCharacters(in: .whitespaces)
        guard !value.isEmpty else { return nil }
        if value.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            return Double(value) ?? .infinity
        }
        guard let date = self.date(from: value, now: now) else { return nil }
        return max(date.timeIntervalSince(now), 0)
    }

    /// Parses an HTTP-date: the IMF-fixdate `Sun, 06 Nov 1994 08:49:37 GMT`, or the obsolete RFC 850
    /// `Sunday, 06-Nov-94 08:49:37 GMT` and asctime `Sun Nov  6 08:49:37 1994` forms.
    static func date(from value: String, now: Date) -> Date? {
        let parts = value.split(separator: " ")
        switch parts.count {
        case 6:
            // IMF-fixdate.
            guard parts[0].last == ",", Self.shortDayNames.contains(parts[0].dropLast()), parts[5] == "GMT",
                let day = Self.number(parts[1], digits: 2...2), let month = Self.month(parts[2]),
                let year = Self.number(parts[3], digits: 4...4)
            else { return nil }
            return Self.date(year: year, month: month, day: day, time: parts[4])
        case 4:
            // RFC 850: a two-digit year more than 50 years ahead is in the past century.
            let fields = parts[1].split(separator: "-", omittingEmptySubsequences: false)
            guard parts[0].last == ",", Self.longDayNames.contains(parts[0].dropLast()), parts[3] == "GMT",
                fields.count == 3, let day = Self.number(fields[0], digits: 2...2), let month = Self.month(fields[1]),
                let shortYear = Self.number(fields[2], digits: 2...2)
            else { return nil }
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone(identifier: "GMT") ?? calendar.timeZone
            let currentYear = calendar.component(.year, from: now)
            var year = currentYear - currentYear % 100 + shortYear
            if year > currentYear + 50 { year -= 100 }
            return Self.date(year: year, month: month, day: day, time: parts[2])
        case 5:
            // asctime, whose day is padded with a space: split has dropped it.
            guard Self.shortDayNames.contains(parts[0]), let month = Self.month(parts[1]),
                let day = Self.number(parts[2], digits: 1...2), let year = Self.number(parts[4], digits: 4...4)
            else { return nil }
            return Self.date(year: year, month: month, day: day, time: parts[3])
        default:
            return nil
        }
    }

    /// `text` as a number, when it is only ASCII digits and has a count of digits in `digits`.
    private static func number(_ text: Substring, digits: ClosedRange<Int>) -> Int? {
        guard digits.contains(text.utf8.count),
            text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
        else { return nil }
        return Int(text)
    }

    private static func month(_ name: Substring) -> Int? {
        self.monthNames.firstIndex(of: name).map { $0 + 1 }
    }

    /// The date at `time` (`HH:MM:SS`) GMT on the given day, or `nil` when any part is out of range.
    private static func date(year: Int, month: Int, day: Int, time: Substring) -> Date? {
        let clock = time.split(separator: ":", omittingEmptySubsequences: false)
        guard clock.count == 3, let hour = Self.number(clock[0], digits: 2...2),
            let minute = Self.number(clock[1], digits: 2...2), let second = Self.number(clock[2], digits: 2...2),
            (0..<24).contains(hour), (0..<60).contains(minute), (0...60).contains(second),
            (1...CivilCalendar.daysIn(month: month, year: year)).contains(day)
        else { return nil }
        let days = CivilCalendar.daysSinceEpoch(year: year, month: month, day: day)
        return Date(timeIntervalSince1970: TimeInterval(days * 86_400 + hour * 3600 + minute * 60 + second))
    }

}
