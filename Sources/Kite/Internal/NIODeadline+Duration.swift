import NIOCore

// The pipeline keeps its instants as `NIODeadline`, not `ContinuousClock.Instant`: the standard library's
// instant is a resilient type (not `@frozen`), so every struct holding one gets its layout at run time, and
// each copy, optional check and destroy of it goes through type metadata. `NIODeadline` is a plain
// `UInt64` (`CLOCK_MONOTONIC`), the clock the engine's own deadlines use.

extension NIODeadline {
    /// The time from this instant to `later`.
    func duration(to later: NIODeadline) -> Duration {
        .nanoseconds((later - self).nanoseconds)
    }
}

extension TimeAmount {
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        let nanoseconds = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if nanoseconds.overflow {
            self = .nanoseconds(seconds < 0 ? Int64.min : Int64.max)
        } else {
            self = .nanoseconds(nanoseconds.partialValue &+ attoseconds / 1_000_000_000)
        }
    }
}
