import NIOConcurrencyHelpers

/// Objects that a request hands to a connection's handler by a tag header: the request registers one under a fresh
/// tag and writes the tag into its head; the handler, on the connection's event loop, finds it by the tag (and
/// removes the header before the head is encoded). Shared by ``ConnectionProbe`` and ``UploadWatch``.
final class TagRegistry<Value: AnyObject & Sendable>: Sendable {
    private let state = NIOLockedValueBox(State())

    private struct State {
        var nextTag: UInt64 = 0
        var values: [UInt64: Value] = [:]
    }

    /// Registers the value `make` makes from a fresh tag.
    func register(_ make: (String) -> Value) -> Value {
        self.state.withLockedValue { state in
            state.nextTag &+= 1
            let value = make(String(state.nextTag))
            state.values[state.nextTag] = value
            return value
        }
    }

    /// The value registered under `tag`, if any.
    func value(for tag: String) -> Value? {
        guard let tag = UInt64(tag) else { return nil }
        return self.state.withLockedValue { $0.values[tag] }
    }

    /// Removes and returns the value registered under `tag`, if any.
    @discardableResult
    func remove(_ tag: String) -> Value? {
        guard let tag = UInt64(tag) else { return nil }
        return self.state.withLockedValue { $0.values.removeValue(forKey: tag) }
    }

    /// How many values are registered.
    var count: Int { self.state.withLockedValue { $0.values.count } }
}
