import Foundation

/// A cache tier's entries by id and by key, with the bytes they cost and least-recently-used eviction: what the
/// memory and disk tiers share (each keeps one in its lock box). `Payload` is what the tier keeps beside the head:
/// the body in memory, nothing on disk.
struct CacheIndex<Payload> {
    struct Entry {
        var response: CachedResponse
        var payload: Payload
        var cost: Int64
        var lastUse: UInt64
    }

    /// The bytes all entries may cost together.
    let capacity: Int64
    private(set) var entries: [UUID: Entry] = [:]
    private var keys: [String: [UUID]] = [:]
    /// The bytes the entries cost now.
    private(set) var used: Int64 = 0
    private var clock: UInt64 = 0

    init(capacity: Int64) {
        self.capacity = capacity
    }

    /// The heads of the entries under `key`.
    func responses(forKey key: String) -> [CachedResponse] {
        (self.keys[key] ?? []).compactMap { self.entries[$0]?.response }
    }

    /// Marks the entry as just used; returns it, or `nil` when it is not here.
    mutating func use(_ id: UUID) -> Entry? {
        self.clock += 1
        self.entries[id]?.lastUse = self.clock
        return self.entries[id]
    }

    /// Adds an entry (replacing one with its id) as the most recently used; returns the entries evicted to make room.
    mutating func insert(_ response: CachedResponse, payload: Payload, cost: Int64) -> [Entry] {
        self.remove(response.id)
        self.clock += 1
        self.entries[response.id] = Entry(response: response, payload: payload, cost: cost, lastUse: self.clock)
        self.keys[response.key, default: []].append(response.id)
        self.used += cost
        return self.evict()
    }

    /// Replaces the head of the entry with `response`'s id, which now costs `cost`, marking it as used; returns
    /// whether it is still here, and the entries evicted to make room.
    mutating func replaceHead(_ response: CachedResponse, cost: Int64) -> (stored: Bool, evicted: [Entry]) {
        guard var entry = self.use(response.id) else { return (false, []) }
        self.used += cost - entry.cost
        entry.response = response
        entry.cost = cost
        self.entries[response.id] = entry
        let evicted = self.evict()
        return (self.entries[response.id] != nil, evicted)
    }

    @discardableResult
    mutating func remove(_ id: UUID) -> Entry? {
        guard let entry = self.entries.removeValue(forKey: id) else { return nil }
        self.used -= entry.cost
        let key = entry.response.key
        self.keys[key]?.removeAll { $0 == id }
        if self.keys[key]?.isEmpty == true { self.keys[key] = nil }
        return entry
    }

    /// Removes the entries under `key`; returns them.
    mutating func removeAll(forKey key: String) -> [Entry] {
        (self.keys[key] ?? []).compactMap { self.remove($0) }
    }

    /// Removes every entry; returns them.
    mutating func removeAll() -> [Entry] {
        defer { self = CacheIndex(capacity: self.capacity) }
        return Array(self.entries.values)
    }

    /// Removes least recently used entries until the rest fit.
    private mutating func evict() -> [Entry] {
        var evicted: [Entry] = []
        while self.used > self.capacity, let oldest = self.entries.values.min(by: { $0.lastUse < $1.lastUse }) {
            if let removed = self.remove(oldest.response.id) { evicted.append(removed) }
        }
        return evicted
    }
}

extension CacheIndex: Sendable where Payload: Sendable {}
extension CacheIndex.Entry: Sendable where Payload: Sendable {}
