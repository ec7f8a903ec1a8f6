/// Where a request is in its life.
///
/// ```
/// initialized → resumed ⇄ suspended → cancelled | finished
/// ```
///
/// `cancelled` and `finished` are final. Transitions that make no sense (resuming a finished
/// request, suspending a cancelled one) are ignored.
public enum RequestState: String, Sendable, Hashable, CustomStringConvertible {
    /// Created; nothing sent yet.
    case initialized
    /// Running: bytes flow.
    case resumed
    /// Paused: no bytes are read or written until resumed.
    case suspended
    /// Cancelled by the caller, the awaiting task or a timeout; final.
    case cancelled
    /// Completed, successfully or not; final.
    case finished

    public var description: String { self.rawValue }

    /// Whether the request can no longer change state.
    public var isFinal: Bool {
        self == .cancelled || self == .finished
    }
}
