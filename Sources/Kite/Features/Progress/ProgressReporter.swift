import Dispatch
import NIOConcurrencyHelpers

/// Fans one transfer's progress out to closures (on their queues) and async streams.
///
/// Reports that would go backwards (a body re-sent after a redirect) are dropped, so observers
/// see a monotonic sequence. A request's upload and download reporters keep their state in the
/// request's state machine (``RequestRecord/progress``), so they cost the request no allocation of
/// their own; none of their methods is called while that box is locked.
struct ProgressReporter {
    struct State {
        fileprivate var handlers: [(DispatchQueue, @Sendable (TransferProgress) -> Void)] = []
        fileprivate var continuations: [AsyncStream<TransferProgress>.Continuation] = []
        fileprivate var last: TransferProgress?
        fileprivate var finished = false

        /// Whether anyone listens; reporting is skipped otherwise.
        var hasObservers: Bool { !self.handlers.isEmpty || !self.continuations.isEmpty }

        /// Marks the transfer over; returns the streams to finish, outside the lock.
        mutating func finish() -> [AsyncStream<TransferProgress>.Continuation] {
            guard !self.finished else { return [] }
            self.finished = true
            return self.continuations
        }
    }

    /// The upload and download states of one request.
    struct States {
        var upload = State()
        var download = State()

        /// Marks both transfers over; returns the streams to finish, outside the lock (the pipeline does this in
        /// the lock round trip that reads its metrics).
        mutating func finish() -> [AsyncStream<TransferProgress>.Continuation] {
            let upload = self.upload.finish()
            let download = self.download.finish()
            return upload.isEmpty ? download : upload + download
        }
    }

    private let box: NIOLockedValueBox<BaseRequest.Machine>
    private let isUpload: Bool

    /// The reporter of one direction of the request whose state box is `box`.
    init(in box: NIOLockedValueBox<BaseRequest.Machine>, isUpload: Bool) {
        self.box = box
        self.isUpload = isUpload
    }

    /// Runs `body` on this reporter's state, under the shared lock.
    private func withState<Result>(_ body: (inout State) -> Result) -> Result {
        self.box.withLockedValue { machine in
            self.isUpload ? body(&machine.record.progress.upload) : body(&machine.record.progress.download)
        }
    }

    /// Whether anyone listens; reporting is skipped otherwise.
    var hasObservers: Bool {
        self.withState(\.hasObservers)
    }

    /// Adds a closure that gets every report, in order, on `queue`: a serial queue targeting it
    /// keeps the order even when `queue` is concurrent (such as `.global()`).
    func addHandler(queue: DispatchQueue, _ handler: @escaping @Sendable (TransferProgress) -> Void) {
        let serial = DispatchQueue(label: "kite.progress", target: queue)
        self.withState { $0.handlers.append((serial, handler)) }
    }

    func makeStream(
        bufferingPolicy: AsyncStream<TransferProgress>.Continuation.BufferingPolicy
    )
        -> AsyncStream<TransferProgress>
    {
        let (stream, continuation) = AsyncStream.makeStream(of: TransferProgress.self, bufferingPolicy: bufferingPolicy)
        let (finished, last) = self.withState { state in
            if !state.finished { state.continuations.append(continuation) }
            return (state.finished, state.last)
        }
        if finished {
            if let last { continuation.yield(last) }
            continuation.finish()
        }
        return stream
    }

    /// Reports a step to the observers; returns it when it was new (not a repeat, not backwards), for the
    /// request's event monitors.
    @discardableResult
    func report(completed: Int64, total: Int64?) -> TransferProgress? {
        let progress = TransferProgress(completedBytes: completed, totalBytes: total)
        let targets = self.withState {
            state -> (
                [(DispatchQueue, @Sendable (TransferProgress) -> Void)], [AsyncStream<TransferProgress>.Continuation]
            )? in
            guard !state.finished else { return nil }
            if let last = state.last, last.completedBytes > completed || (last == progress) { return nil }
            state.last = progress
            return (state.handlers, state.continuations)
        }
        guard let (handlers, continuations) = targets else { return nil }
        for (queue, handler) in handlers { queue.async { handler(progress) } }
        for continuation in continuations { continuation.yield(progress) }
        return progress
    }
}
