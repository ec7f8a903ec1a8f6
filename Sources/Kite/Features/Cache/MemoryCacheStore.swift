import Foundation
import NIOConcurrencyHelpers
import NIOCore

/// The cache's memory tier: entries with their bodies, bounded in bytes, least recently used evicted first.
final class MemoryCacheStore: CacheStore {
    /// The bytes all entries may take together (bodies plus an estimate of their heads).
    let capacity: Int
    /// The body bytes one entry may have; a larger one is not kept.
    let maximumEntrySize: Int

    private let state: NIOLockedValueBox<CacheIndex<ByteBuffer>>

    init(capacity: Int, maximumEntrySize: Int) {
        self.capacity = max(capacity, 0)
        self.maximumEntrySize = max(min(maximumEntrySize, self.capacity), 0)
        self.state = NIOLockedValueBox(CacheIndex(capacity: Int64(self.capacity)))
    }

    /// The bytes the entries take now.
    var usedBytes: Int { self.state.withLockedValue { Int($0.used) } }

    /// What an entry counts against the capacity: its body and an estimate of its head.
    static func cost(of response: CachedResponse, bodyBytes: Int) -> Int {
        var head = 256 + response.key.utf8.count
        for field in response.response.headerFields {
            head += field.name.rawName.utf8.count + field.value.utf8.count + 32
        }
        return head + bodyBytes
    }

    func responses(forKey key: String) async -> [CachedResponse] {
        self.state.withLockedValue { $0.responses(forKey: key) }
    }

    func body(of response: CachedResponse) async -> ByteChunks? {
        self.bodyBuffer(of: response).map { ByteChunks(chunks: [$0]) }
    }

    /// The whole body of `response` when this tier holds it, marking the entry as used.
    func bodyBuffer(of response: CachedResponse) -> ByteBuffer? {
        self.state.withLockedValue { $0.use(response.id)?.payload }
    }

    /// Keeps `response` with `body` (a body the disk tier read, say); does nothing when it is too large.
    @discardableResult
    func insert(_ response: CachedResponse, body: ByteBuffer) -> Bool {
        let cost = Self.cost(of: response, bodyBytes: body.readableBytes)
        guard body.readableBytes <= self.maximumEntrySize, cost <= self.capacity else { return false }
        _ = self.state.withLockedValue { $0.insert(response, payload: body, cost: Int64(cost)) }
        return true
    }

    func makeWriter(for response: CachedResponse) async -> (any CacheStoreWriter)? {
        guard Self.cost(of: response, bodyBytes: 0) <= self.capacity else { return nil }
        return Writer(store: self, response: response)
    }

    func update(_ response: CachedResponse) async {
        self.state.withLockedValue { state in
            guard let body = state.entries[response.id]?.payload else { return }
            _ = state.replaceHead(response, cost: Int64(Self.cost(of: response, bodyBytes: body.readableBytes)))
        }
    }

    func remove(_ response: CachedResponse) async {
        self.state.withLockedValue { _ = $0.remove(response.id) }
    }

    func removeResponses(forKey key: String) async {
        _ = self.state.withLockedValue { $0.removeAll(forKey: key) }
    }

    func removeAll() async {
        _ = self.state.withLockedValue { $0.removeAll() }
    }

    /// Gathers a body in memory until it commits; one that outgrows the entry limit is dropped.
    final class Writer: CacheStoreWriter {
        private let store: MemoryCacheStore
        private let response: CachedResponse
        /// The body so far; `nil` once it outgrew the limit or ended.
        private let body = NIOLockedValueBox<ByteBuffer?>(ByteBuffer())

        init(store: MemoryCacheStore, response: CachedResponse) {
            self.store = store
            self.response = response
        }

        func write(_ chunk: ByteBuffer) async throws {
            let limit = self.store.maximumEntrySize
            self.body.withLockedValue { body in
                guard body != nil else { return }
                if let size = body?.readableBytes, size + chunk.readableBytes > limit {
                    body = nil
                    return
                }
                var chunk = chunk
                body?.writeBuffer(&chunk)
            }
        }

        func commit(length: Int64) async throws {
            guard let body = self.body.withLockedValue({ $0.take() }) else { throw CacheStoreError.tooLarge }
            var response = self.response
            response.bodyLength = Int64(body.readableBytes)
            // Not kept (its head makes it larger than the tier): the caller must not count it as stored.
            guard self.store.insert(response, body: body) else { throw CacheStoreError.tooLarge }
        }

        func abort() async {
            self.body.withLockedValue { $0 = nil }
        }
    }
}

/// Why a store did not keep an entry.
enum CacheStoreError: Error {
    /// The body outgrew the entry limit.
    case tooLarge
    /// The disk tier could not write it: the file system's error.
    case system(SystemFile.SystemError)
}
