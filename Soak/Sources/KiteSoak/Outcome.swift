import Foundation
import Kite
import Synchronization

/// How one operation ended.
enum Outcome: Sendable {
    /// A response (checked against what the server must have sent, when the operation knows); the note names a
    /// variant, such as a download finished from its resume data.
    case response(String)
    /// A `KiteError`, the library's one error type.
    case kiteError(KiteError)
    /// Anything else: an error of another type, a wrong body, a success where only an error is right.
    case failure(String)

    /// The label the outcome is counted under.
    var label: String {
        switch self {
        case .response(let note): note.isEmpty ? "response" : "response (\(note))"
        case .kiteError(let error): "KiteError.\(error.code)"
        case .failure: "FAILURE"
        }
    }

    /// A response when `problem` is `nil`, else a failure naming it.
    static func checked(_ problem: String?, note: String = "") -> Outcome {
        problem.map { .failure($0) } ?? .response(note)
    }

    /// The outcome of any error: a `KiteError` by its code, anything else a failure.
    static func thrown<E: Error>(_ error: E) -> Outcome {
        if let kiteError = error as? KiteError { return .kiteError(kiteError) }
        return .failure("an error that is not a KiteError: \(type(of: error)): \(error)")
    }

    /// The outcome of a serialized result, with `check` telling what is wrong with a value.
    static func of<Value>(_ result: Result<Value, KiteError>, check: (Value) -> String?) -> Outcome {
        switch result {
        case .success(let value): .checked(check(value))
        case .failure(let error): .kiteError(error)
        }
    }
}

/// Counts outcomes per operation, and what a monitor saw of every request.
final class Tally: Sendable {
    struct Totals: Sendable {
        var operations = 0
        var responses = 0
        var kiteErrors = 0
        var failures = 0
        var requestsFinished = 0
        var retries = 0
    }

    private struct State {
        var totals = Totals()
        /// Operation → outcome label → count.
        var counts: [String: [String: Int]] = [:]
        /// Operation and label → the first message seen, for the report.
        var examples: [String: String] = [:]
        var failures: [String] = []
    }

    private let state = Mutex(State())

    func record(_ operation: String, _ outcome: Outcome) {
        let label = outcome.label
        let message: String? =
            switch outcome {
            case .response: nil
            case .kiteError(let error): "\(error)"
            case .failure(let problem): problem
            }
        let isNewFailure = self.state.withLock { state -> Bool in
            state.totals.operations += 1
            state.counts[operation, default: [:]][label, default: 0] += 1
            if let message, state.examples["\(operation) | \(label)"] == nil {
                state.examples["\(operation) | \(label)"] = String(message.prefix(400))
            }
            switch outcome {
            case .response: state.totals.responses += 1
            case .kiteError: state.totals.kiteErrors += 1
            case .failure(let problem):
                state.totals.failures += 1
                if state.failures.count < 200 { state.failures.append("\(operation): \(problem)") }
                return true
            }
            return false
        }
        if isNewFailure, case .failure(let problem) = outcome {
            FileHandle.standardError.write(Data("FAILURE \(operation): \(problem)\n".utf8))
        }
    }

    func requestFinished() { self.state.withLock { $0.totals.requestsFinished += 1 } }
    func requestRetried() { self.state.withLock { $0.totals.retries += 1 } }

    var totals: Totals { self.state.withLock { $0.totals } }
    var counts: [String: [String: Int]] { self.state.withLock { $0.counts } }
    var examples: [String: String] { self.state.withLock { $0.examples } }
    var failures: [String] { self.state.withLock { $0.failures } }
}

/// The operation each worker is in, and since when: a hang shows as an old entry.
final class InFlight: Sendable {
    private let entries = Mutex<[Int: (operation: String, since: ContinuousClock.Instant)]>([:])

    func begin(_ worker: Int, _ operation: String) {
        self.entries.withLock { $0[worker] = (operation, .now) }
    }

    func end(_ worker: Int) {
        _ = self.entries.withLock { $0.removeValue(forKey: worker) }
    }

    /// The operations running for longer than `bound`.
    func older(than bound: Duration) -> [String] {
        let now = ContinuousClock.now
        return self.entries.withLock { entries in
            entries.sorted { $0.key < $1.key }.compactMap { worker, entry in
                let age = now - entry.since
                return age > bound ? "worker \(worker): \(entry.operation) running for \(age)" : nil
            }
        }
    }
}

/// Lets the sampler stop the workers between operations, so each minute's sample sees no request in flight.
actor Gate {
    private var paused = false
    private var stopped = false
    private var inFlight = 0
    private var waiters: [CheckedContinuation<Void, Never>] = []

    /// Waits while paused; `false` once the run is over.
    func enter() async -> Bool {
        while self.paused, !self.stopped {
            await withCheckedContinuation { self.waiters.append($0) }
        }
        if self.stopped { return false }
        self.inFlight += 1
        return true
    }

    func leave() { self.inFlight -= 1 }

    func pause() { self.paused = true }

    func resume() {
        self.paused = false
        let waiters = self.waiters
        self.waiters = []
        for waiter in waiters { waiter.resume() }
    }

    func stop() {
        self.stopped = true
        self.resume()
    }

    var busy: Int { self.inFlight }
}
