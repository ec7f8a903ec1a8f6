import NIOConcurrencyHelpers

/// Limits retries to a share of requests, so that a failing server is not sent more and more traffic.
///
/// A token bucket in the manner of Finagle's and gRPC's retry budgets. Every request that starts
/// (its first attempt, not its retries) deposits ``ratio`` tokens; every retry withdraws one. With
/// the defaults, 10 requests pay for 1 retry: when everything fails, retries add at most about 10 %
/// to the traffic instead of multiplying it by ``RetryPolicy/retryLimit`` + 1.
///
/// So that a client that sends few requests can still retry, a second, small reserve is used when
/// the balance is empty: it holds up to ``minimumRetriesPerSecond`` tokens, starts full, and refills
/// at that many tokens a second. With the defaults, a client sending 1,000 requests a second that
/// all fail retries about 100 + 10 of them a second, not 2,000.
///
/// The numbers:
/// - A deposit adds ``ratio`` tokens (0.1 by default), counted in thousandths of a token, so ten
///   deposits of 0.1 make exactly one token.
/// - The balance holds at most ``maximumBalance`` tokens (100), so that a long quiet spell does not
///   save up an unbounded burst of retries.
/// - A withdrawal takes one token from the balance when it holds one, else one from the reserve,
///   else fails.
///
/// One budget is shared by every request that uses it: give a ``RetryPolicy`` its own, or share one
/// between policies that call the same server.
///
/// ```swift
/// let budget = RetryBudget(ratio: 0.2, minimumRetriesPerSecond: 5)
/// let session = Session(configuration: .default, interceptor: RetryPolicy(retryBudget: budget))
/// ```
public final class RetryBudget: Sendable {
    /// The most tokens the balance holds.
    public static let maximumBalance = 100

    /// Tokens each request deposits: the share of requests that may be retried.
    public let ratio: Double

    /// Retries allowed each second however few requests were made; also the size of the reserve.
    public let minimumRetriesPerSecond: Int

    /// Thousandths of a token in one token.
    private static let unit = 1000

    /// Thousandths of a token a deposit adds.
    private let depositAmount: Int

    private let state: NIOLockedValueBox<State>

    private let now: @Sendable () -> ContinuousClock.Instant

    /// Creates a budget.
    ///
    /// - Parameters:
    ///   - ratio: Tokens each request deposits, and so the share of requests that may be retried
    ///     (0.1: one retry per ten requests). Clamped to `0...100`; not a number counts as 0.
    ///   - minimumRetriesPerSecond: Retries allowed each second even when the balance is empty.
    ///     Clamped to `0...1_000_000`; 0 allows none beyond the balance.
    public convenience init(ratio: Double = 0.1, minimumRetriesPerSecond: Int = 10) {
        self.init(ratio: ratio, minimumRetriesPerSecond: minimumRetriesPerSecond, now: { .now })
    }

    /// Creates a budget that reads the time from `now` (for tests).
    init(ratio: Double, minimumRetriesPerSecond: Int, now: @escaping @Sendable () -> ContinuousClock.Instant) {
        let ratio = ratio.isNaN ? 0 : min(max(ratio, 0), Double(Self.maximumBalance))
        let minimumRetriesPerSecond = min(max(minimumRetriesPerSecond, 0), 1_000_000)
        self.ratio = ratio
        self.minimumRetriesPerSecond = minimumRetriesPerSecond
        self.depositAmount = Int((ratio * Double(Self.unit)).rounded())
        self.now = now
        self.state = NIOLockedValueBox(
            State(
                balance: 0,
                reserve: minimumRetriesPerSecond * Self.unit,
                reserveCapacity: minimumRetriesPerSecond * Self.unit,
                refilledAt: now()
            )
        )
    }

    /// Adds ``ratio`` tokens to the balance, up to ``maximumBalance``: call it once for every request
    /// that starts.
    public func deposit() {
        let amount = self.depositAmount
        self.state.withLockedValue { state in
            state.balance = min(state.balance + amount, Self.maximumBalance * Self.unit)
        }
    }

    /// Takes one token for a retry, from the balance or else from the reserve.
    ///
    /// - Returns: Whether the retry may go ahead.
    public func tryWithdraw() -> Bool {
        let now = self.now()
        let perSecond = self.minimumRetriesPerSecond
        return self.state.withLockedValue { state in
            if state.balance >= Self.unit {
                state.balance -= Self.unit
                return true
            }
            state.refillReserve(at: now, perSecond: perSecond)
            if state.reserve >= Self.unit {
                state.reserve -= Self.unit
                return true
            }
            return false
        }
    }

    /// The tokens in the balance and in the reserve (for tests).
    var tokens: (balance: Double, reserve: Double) {
        self.state.withLockedValue { state in
            (Double(state.balance) / Double(Self.unit), Double(state.reserve) / Double(Self.unit))
        }
    }

    /// The counts, in thousandths of a token.
    private struct State {
        var balance: Int
        var reserve: Int
        let reserveCapacity: Int
        var refilledAt: ContinuousClock.Instant

        /// Adds the reserve's tokens earned since the last refill: `perSecond` tokens a second.
        mutating func refillReserve(at now: ContinuousClock.Instant, perSecond: Int) {
            guard self.reserve < self.reserveCapacity else {
                self.refilledAt = now
                return
            }
            let elapsed = now - self.refilledAt
            guard elapsed > .zero else { return }
            // The reserve holds one second's worth, so a second or more refills it.
            guard elapsed < .seconds(1) else {
                self.reserve = self.reserveCapacity
                self.refilledAt = now
                return
            }
            let microseconds = Int(elapsed.components.attoseconds / 1_000_000_000_000)
            // perSecond tokens a second are perSecond thousandths of a token a millisecond.
            let earned = microseconds * perSecond / 1000
            guard earned > 0 else { return }
            self.reserve = min(self.reserve + earned, self.reserveCapacity)
            self.refilledAt = now
        }
    }
}
