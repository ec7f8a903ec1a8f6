import Atomics
import NIOConcurrencyHelpers

/// A session's running requests, for ``Session/cancelAllRequests(completingOnQueue:completion:)`` and
/// ``Session/withAllRequests(perform:)``.
///
/// A request is in it from the moment its pipeline starts until it finishes, held strongly as Alamofire's
/// `activeRequests` holds it. A request made but not yet started is not in it (nothing would remove one that is
/// never started); instead it reads the session's cancellation generation when it is made, and one that starts
/// after a later ``cancelAll()`` is cancelled as it starts. Two lock round trips per request: one at start, one
/// at finish.
final class RequestRegistry: Sendable {
    /// Bumped by every ``cancelAll()``, under ``running``'s lock; read without it when a request is made.
    private let generation = ManagedAtomic<UInt64>(0)
    private let running = NIOLockedValueBox([ObjectIdentifier: BaseRequest]())

    /// The generation a request made now belongs to.
    var currentGeneration: UInt64 { self.generation.load(ordering: .relaxed) }

    /// Adds a starting `request` made in `generation`; `false` when a ``cancelAll()`` came after it was made
    /// (then it is not added, and its caller cancels it).
    func started(_ request: BaseRequest, madeIn generation: UInt64) -> Bool {
        self.running.withLockedValue { running in
            guard generation == self.generation.load(ordering: .relaxed) else { return false }
            running[ObjectIdentifier(request)] = request
            return true
        }
    }

    /// Removes a finished request.
    func finished(_ request: BaseRequest) {
        self.running.withLockedValue { _ = $0.removeValue(forKey: ObjectIdentifier(request)) }
    }

    /// The running requests.
    var all: [BaseRequest] {
        self.running.withLockedValue { Array($0.values) }
    }

    /// Starts a new generation, so requests made before it are cancelled when they start, and returns the
    /// running requests (to cancel).
    func cancelAll() -> [BaseRequest] {
        self.running.withLockedValue { running in
            self.generation.wrappingIncrement(ordering: .relaxed)
            return Array(running.values)
        }
    }
}
