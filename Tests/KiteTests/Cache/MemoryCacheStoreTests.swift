import Foundation
import HTTPTypes
import NIOConcurrencyHelpers
import NIOCore
import Testing

@testable import Kite

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The memory tier through its store API: bounded in bytes, least recently used evicted first.
@Suite struct MemoryCacheStoreTests {
    /// What the entries under `keys` that are still stored cost together.
    static func cost(of keys: [String], in store: MemoryCacheStore) async -> Int {
        var total = 0
        for key in keys {
            for response in await store.responses(forKey: key) {
                total += MemoryCacheStore.cost(of: response, bodyBytes: Int(response.bodyLength ?? 0))
            }
        }
        return total
    }

    @Test func theMemoryTierStaysWithinCapacityAndEvictsTheLeastRecentlyUsed() async throws {
        let store = MemoryCacheStore(capacity: 100_000, maximumEntrySize: 30_000)
        let keys = (0..<20).map { "https://example.com/\($0)" }
        var stored: [CachedResponse] = []
        func isStored(_ index: Int) async -> Bool { await !store.responses(forKey: keys[index]).isEmpty }
        for index in 0..<4 {
            stored.append(try await storeEntry(store, key: keys[index], size: 20_000, chunk: 7_000))
            #expect(store.usedBytes == (await Self.cost(of: keys, in: store)))
        }
        for index in 0..<4 { #expect(await isStored(index), "four entries of 20 KB fit in 100 KB") }
        #expect(
            store.bodyBuffer(of: stored[0]).map { Data($0.readableBytesView) } == Data(repeating: 0x64, count: 20_000)
        )
        for index in 4..<6 {
            stored.append(try await storeEntry(store, key: keys[index], size: 20_000))
            #expect(store.usedBytes <= 100_000)
            #expect(store.usedBytes == (await Self.cost(of: keys, in: store)))
        }
        #expect(await isStored(0), "just read")
        for index in 1...2 { #expect(await !isStored(index), "the least recently used went first") }
        for index in 3...5 { #expect(await isStored(index)) }
        #expect(store.bodyBuffer(of: stored[1]) == nil)
        let body = try #require(await store.body(of: stored[3]))
        #expect(try await collect(body) == Data(repeating: 0x64, count: 20_000))
        for index in 6..<20 {
            _ = try await storeEntry(store, key: keys[index], size: 20_000)
            #expect(store.usedBytes <= 100_000)
            #expect(store.usedBytes == (await Self.cost(of: keys, in: store)))
        }
        var kept: [Int] = []
        for index in 0..<20 where await isStored(index) { kept.append(index) }
        #expect(kept == [16, 17, 18, 19])
    }

    @Test func aBodyOverTheEntryLimitIsNotKept() async throws {
        let store = MemoryCacheStore(capacity: 100_000, maximumEntrySize: 30_000)
        await #expect(throws: CacheStoreError.self) {
            _ = try await storeEntry(store, key: "k", size: 30_001, chunk: 10_000)
        }
        #expect(await store.responses(forKey: "k").isEmpty)
        #expect(store.usedBytes == 0)
        _ = try await storeEntry(store, key: "k", size: 30_000, chunk: 10_000)
        #expect(await store.responses(forKey: "k").first?.bodyLength == 30_000)
        // An entry limit above the capacity is the capacity.
        #expect(MemoryCacheStore(capacity: 1000, maximumEntrySize: 5000).maximumEntrySize == 1000)
    }

    @Test func anUpdatedHeadIsCountedAgainAndStaysWithinCapacity() async throws {
        let store = MemoryCacheStore(capacity: 50_000, maximumEntrySize: 30_000)
        let old = try await storeEntry(store, key: "old", size: 20_000)
        let new = try await storeEntry(store, key: "new", size: 20_000)
        let name = try #require(HTTPField.Name("X-Long"))
        var updated = new
        updated.response.headerFields[name] = String(repeating: "x", count: 5_000)
        await store.update(updated)
        #expect(await store.responses(forKey: "new").first?.response.headerFields[name]?.count == 5_000)
        #expect(store.usedBytes == (await Self.cost(of: ["old", "new"], in: store)), "the longer head counts")
        updated.response.headerFields[name] = String(repeating: "x", count: 15_000)
        await store.update(updated)
        #expect(store.usedBytes <= 50_000)
        #expect(await store.responses(forKey: "old").isEmpty, "made room for the longer head")
        #expect(store.bodyBuffer(of: old) == nil)
        #expect(store.usedBytes == (await Self.cost(of: ["old", "new"], in: store)))
    }

    @Test func removingEntriesFreesTheirBytes() async throws {
        let store = MemoryCacheStore(capacity: 100_000, maximumEntrySize: 30_000)
        let one = try await storeEntry(store, key: "a", size: 1_000)
        _ = try await storeEntry(store, key: "a", size: 2_000)
        _ = try await storeEntry(store, key: "b", size: 3_000)
        #expect(await store.responses(forKey: "a").count == 2)
        await store.remove(one)
        #expect(await store.responses(forKey: "a").map(\.bodyLength) == [2_000])
        await store.removeResponses(forKey: "a")
        #expect(await store.responses(forKey: "a").isEmpty)
        #expect(store.usedBytes == (await Self.cost(of: ["b"], in: store)))
        await store.removeAll()
        #expect(store.usedBytes == 0)
        #expect(await store.responses(forKey: "b").isEmpty)
    }

    @Test func anAbortedWriterKeepsNothing() async throws {
        let store = MemoryCacheStore(capacity: 100_000, maximumEntrySize: 30_000)
        let response = CachedResponse(
            key: "k",
            response: CacheFixture.response(),
            requestTime: Date(),
            responseTime: Date()
        )
        let writer = try #require(await store.makeWriter(for: response))
        try await writer.write(ByteBuffer(string: "partial"))
        await writer.abort()
        await #expect(throws: CacheStoreError.self) { try await writer.commit(length: 7) }
        #expect(await store.responses(forKey: "k").isEmpty)
        #expect(store.usedBytes == 0)
    }
}

/// A user's own ``ResponseCacheStorage``: a dictionary in memory that records the calls it gets.
final class DictionaryCacheStorage: ResponseCacheStorage {
    struct Entry {
        var response: CachedResponse
        var body: Data
    }

    struct State {
        var entries: [UUID: Entry] = [:]
        var calls: [String] = []
        /// Bytes the next bodies leave out, to play a storage that lost some.
        var shortBy = 0
        /// Whether `body(of:)` finds no body (the heads stay).
        var bodiesLost = false
    }

    let state = NIOLockedValueBox(State())

    var calls: [String] { self.state.withLockedValue { $0.calls } }
    var entries: [Entry] { self.state.withLockedValue { Array($0.entries.values) } }

    private func record(_ call: String) { self.state.withLockedValue { $0.calls.append(call) } }

    func responses(forKey key: String) async -> [CachedResponse] {
        self.state.withLockedValue { state in state.entries.values.map(\.response).filter { $0.key == key } }
    }

    func body(of response: CachedResponse) async -> AsyncThrowingStream<Data, any Error>? {
        self.record("body")
        let found = self.state.withLockedValue { state in
            state.bodiesLost ? nil : state.entries[response.id].map { ($0.body, state.shortBy) }
        }
        guard let (body, short) = found else { return nil }
        let kept = body.dropLast(short)
        return AsyncThrowingStream { continuation in
            // In two parts, as a store reading a file would.
            continuation.yield(Data(kept.prefix(kept.count / 2)))
            continuation.yield(Data(kept.dropFirst(kept.count / 2)))
            continuation.finish()
        }
    }

    func makeWriter(for response: CachedResponse) async -> (any ResponseCacheWriter)? {
        self.record("makeWriter")
        return Writer(storage: self, response: response)
    }

    func update(_ response: CachedResponse) async {
        self.record("update")
        self.state.withLockedValue { $0.entries[response.id]?.response = response }
    }

    func remove(_ response: CachedResponse) async {
        self.record("remove")
        self.state.withLockedValue { _ = $0.entries.removeValue(forKey: response.id) }
    }

    func removeResponses(forKey key: String) async {
        self.state.withLockedValue { $0.entries = $0.entries.filter { $0.value.response.key != key } }
    }

    func removeAll() async {
        self.state.withLockedValue { $0.entries = [:] }
    }

    final class Writer: ResponseCacheWriter {
        let storage: DictionaryCacheStorage
        let response: CachedResponse
        let body = NIOLockedValueBox(Data())

        init(storage: DictionaryCacheStorage, response: CachedResponse) {
            self.storage = storage
            self.response = response
        }

        func write(_ chunk: Data) async throws { self.body.withLockedValue { $0.append(chunk) } }

        func commit(length: Int64) async throws {
            var response = self.response
            response.bodyLength = length
            let body = self.body.withLockedValue { $0 }
            self.storage.record("commit")
            self.storage.state.withLockedValue { $0.entries[response.id] = Entry(response: response, body: body) }
        }

        func abort() async { self.storage.record("abort") }
    }
}

@Suite struct UserCacheStorageTests {
    @Test func aHitAndA304UpdateGoThroughTheUsersStorage() async throws {
        let storage = DictionaryCacheStorage()
        let session = cachingSession(ResponseCache(storage: storage))
        defer { Task { try await session.shutdown() } }
        let probe = try await CacheProbe.make()
        let fresh = probe.url([("Cache-Control", "max-age=600"), ("_size", "70000")])
        let first = await get(session, fresh)
        #expect(storage.calls == ["makeWriter", "commit"])
        let entry = try #require(storage.entries.first)
        #expect(entry.body == kBytes(70_000))
        #expect(entry.response.bodyLength == 70_000)
        let second = await get(session, fresh)
        #expect(second.cacheStatus?.isFromCache == true)
        #expect(second.data == first.data)
        #expect(storage.calls.last == "body")
        #expect(try await probe.count() == 1)

        let other = try await CacheProbe.make()
        let validated = other.url([("Cache-Control", "no-cache"), ("ETag", "\"u1\"")])
        let original = await get(session, validated)
        let stored = try #require(storage.entries.first { $0.response.key.contains(other.key) })
        let revalidated = await get(session, validated)
        #expect(revalidated.cacheStatus == .revalidated)
        #expect(revalidated.data == original.data)
        #expect(storage.calls.suffix(2) == ["update", "body"])
        let updated = try #require(storage.entries.first { $0.response.id == stored.response.id })
        #expect(updated.response.responseTime > stored.response.responseTime, "the 304's time is in the storage")
        #expect(updated.body == stored.body)
        #expect(try await other.count() == 2)
    }

    @Test func aBodyTheStorageLostIsAMissAndRemoved() async throws {
        let storage = DictionaryCacheStorage()
        let session = cachingSession(ResponseCache(storage: storage))
        defer { Task { try await session.shutdown() } }
        let probe = try await CacheProbe.make()
        let url = probe.url([("Cache-Control", "max-age=600"), ("_size", "5000")])
        _ = await get(session, url)
        let lost = try #require(storage.entries.first)
        storage.state.withLockedValue { $0.bodiesLost = true }
        let response = await get(session, url)
        #expect(response.cacheStatus == .network)
        #expect(response.data == kBytes(5000))
        #expect(storage.calls.suffix(4) == ["body", "remove", "makeWriter", "commit"])
        #expect(storage.entries.allSatisfy { $0.response.id != lost.response.id }, "the entry was removed")
        #expect(try await probe.count() == 2)
    }

    @Test func aBodyShorterThanItsStoredLengthIsNeverDeliveredAsComplete() async throws {
        let storage = DictionaryCacheStorage()
        let session = cachingSession(ResponseCache(storage: storage))
        defer { Task { try await session.shutdown() } }
        let probe = try await CacheProbe.make()
        let url = probe.url([("Cache-Control", "max-age=600"), ("_size", "5000")])
        _ = await get(session, url)
        storage.state.withLockedValue { $0.shortBy = 100 }
        let response = await get(session, url)
        #expect(response.data == nil, "a short body is not a complete response")
        #expect(response.error?.code == .invalidResponse)
        #expect(response.error?.message.contains("ended after 4900 of its 5000 bytes") == true, "\(response)")
    }
}
