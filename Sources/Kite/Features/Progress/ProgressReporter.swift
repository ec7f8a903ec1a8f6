import Dispatch
import NIOConcurrencyHelpers

/// Fans one transfer's progress out to closures (on their queues) and async streams.
///
/// Reports that would go backwards (a body re-sent after a redirect) are dropped, so observers
/// see a monotonic sequence.
final class ProgressReporter: Sendable {
    private struct State {
        var handlers: [(DispatchQueue, @Sendable (TransferProgress) -> Void)] = []
        var continuations: [AsyncStream<TransferProgress>.Continuation] = []
        var last: TransferProgress?
        var finished = false
    }

    private let state = NIOLockedValueBox(State())

    /// Whether anyone listens; reporting is skipped otherwise.
    var hasObservers: Bool {
        self.state.withLockedValue { !$0.handlers.isEmpty || !$0.continuations.isEmpty }
    }

    /// Adds a closure that gets every report, in order, on `queue`: a serial queue targeting it
    /// keeps the order even when `queue` is concurrent (such as `.global()`).
    func addHandler(queue: DispatchQueue, _ handler: @escaping @Sendable (TransferProgress) -> Void) {
        let serial = DispatchQueue(label: "kite.progress", target: queue)
        self.state.withLockedValue { $0.handlers.append((serial, handler)) }
    }

    func makeStream(
        bufferingPolicy: AsyncStream<TransferProgress>.Continuation.BufferingPolicy
    )
        -> AsyncStream<TransferProgress>
    {
        let (stream, continuation) = AsyncStream.makeStream(of: TransferProgress.self, bufferingPolicy: bufferingPolicy)
        let (finished, last) = self.state.withLockedValue { state in
            if !state.finished { state.continuations.append(continuation) }
            return (state.finished, state.last)
        }
        if finished {
            if let last { continuation.yield(last) }
            continuation.finish()
        }
        return stream
    }

    func report(completed: Int64, total: Int64?) {
        let progress = TransferProgress(completedBytes: completed, totalBytes: total)
        let targets = self.state.withLockedValue {
            state -> (
                [(DispatchQueue, @Sendable (TransferProgress) -> Void)], [AsyncStream<TransferProgress>.Continuation]
            )? in
            guard !state.finished else { return nil }
            if let last = state.last, last.completedBytes > completed || (last == progress) { return nil }
            state.last = progress
            return (state.handlers, state.continuations)
        }
        guard let (handlers, continuations) = targets else { return }
        for (queue, handler) in handlers { queue.async { handler(progress) } }
        for continuation in continuations { continuation.yield(progress) }
    }

    func finish() {
        let continuations = self.state.withLockedValue { state -> [AsyncStream<TransferProgress>.Continuation] in
            guard !state.finished else { return [] }
            state.finished = true
            return state.continuations
        }
        for continuation in continuations { continuation.finish() }
    }
}
