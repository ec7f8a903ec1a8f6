import NIOConcurrencyHelpers

/// A token bucket that holds transfers to a number of bytes per second.
///
/// A transfer takes tokens for each chunk before it moves; when the bucket runs dry the transfer
/// sleeps until the debt is paid, so the long-run rate never exceeds `bytesPerSecond` however many
/// transfers share the bucket. Up to a tenth of a second's worth (at least 16 KiB) may go at once.
final class RateLimiter: Sendable {
    let bytesPerSecond: Int
    private let capacity: Double
    private let state: NIOLockedValueBox<(tokens: Double, updated: ContinuousClock.Instant)>

    init(bytesPerSecond: Int) {
        let rate = max(1, bytesPerSecond)
        self.bytesPerSecond = rate
        self.capacity = max(Double(rate) / 10, 16 * 1024)
        self.state = NIOLockedValueBox((tokens: max(Double(rate) / 10, 16 * 1024), updated: .now))
    }

    /// How long to wait before `byteCount` bytes may move; the bytes are reserved either way.
    func reserve(_ byteCount: Int) -> Duration {
        let rate = Double(self.bytesPerSecond)
        return self.state.withLockedValue { state in
            let now = ContinuousClock.now
            let elapsed = state.updated.duration(to: now).timeInterval
            state.tokens = min(self.capacity, state.tokens + elapsed * rate) - Double(byteCount)
            state.updated = now
            guard state.tokens < 0 else { return .zero }
            return .nanoseconds(Int64((-state.tokens / rate * 1e9).rounded(.up)))
        }
    }
}

extension Array where Element == RateLimiter {
    /// Waits until every limiter lets `byteCount` bytes through.
    func acquire(_ byteCount: Int) async throws {
        var wait = Duration.zero
        for limiter in self {
            wait = Swift.max(wait, limiter.reserve(byteCount))
        }
        if wait > .zero {
            try await Task.sleep(for: wait)
        }
    }
}
