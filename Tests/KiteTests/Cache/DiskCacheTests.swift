import Foundation
import HTTPTypes
import NIOConcurrencyHelpers
import NIOCore
import Testing

@testable import Kite

#if canImport(Glibc)
import Glibc
#endif

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A directory of its own for one test's disk cache (made by the cache when it first loads).
struct CacheDirectory {
    let url: URL

    init(in parent: URL = FileManager.default.temporaryDirectory) {
        self.url = parent.appendingPathComponent("kite-disk-cache-\(UUID().uuidString)")
    }

    var path: String { self.url.path }

    func file(_ name: String) -> String { self.url.appendingPathComponent(name).path }

    func file(_ id: UUID, _ suffix: String) -> String { self.file("\(id.uuidString).\(suffix)") }

    func exists(_ id: UUID, _ suffix: String) -> Bool { FileManager.default.fileExists(atPath: self.file(id, suffix)) }

    /// Name and size of every file in it, as the file system reports them.
    var files: [String: Int64] {
        let manager = FileManager.default
        var sizes: [String: Int64] = [:]
        for name in (try? manager.contentsOfDirectory(atPath: self.path)) ?? [] {
            let size = (try? manager.attributesOfItem(atPath: self.file(name)))?[.size] as? NSNumber
            sizes[name] = size?.int64Value ?? -1
        }
        return sizes
    }

    var totalSize: Int64 { self.files.values.reduce(0, +) }

    /// Sets the file's modification time `seconds` into the past.
    func age(_ name: String, by seconds: TimeInterval) throws {
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSinceNow: -seconds)],
            ofItemAtPath: self.file(name)
        )
    }

    func remove() {
        try? FileManager.default.removeItem(at: self.url)
    }
}

/// A cache whose disk tier is on `directory`; `memory` 0 puts nothing in memory, so every hit reads a file.
func diskCache(
    _ directory: CacheDirectory,
    capacity: Int = 4 << 20,
    memory: Int = 0,
    maximumEntrySize: Int64 = 1 << 20
) -> ResponseCache {
    ResponseCache(
        memoryCapacity: memory,
        diskCapacity: capacity,
        directory: directory.url,
        maximumEntrySize: maximumEntrySize
    )
}

extension ResponseCache {
    var diskTier: DiskCacheStore? { (self.store as? TieredCacheStore)?.disk }

    /// The entries stored for `url`.
    func cachedResponses(for url: String) async throws -> [CachedResponse] {
        await self.cachedResponses(for: try #require(URL(string: url)))
    }

    /// The ids of the entries stored for `url`.
    func ids(for url: String) async throws -> [UUID] {
        try await self.cachedResponses(for: url).map(\.id)
    }
}

func get(_ session: Session, _ url: String) async -> DataResponse<Data, KiteError> {
    await session.request(url).serializingData().response
}

/// `count` bytes `k`, the body of `/cached` with `_size`.
func kBytes(_ count: Int) -> Data { Data(repeating: UInt8(ascii: "k"), count: count) }

/// Stores a body of `size` bytes `d` under `key` through the store's writer, in chunks of `chunk` bytes.
func storeEntry(
    _ store: any CacheStore,
    key: String,
    size: Int,
    chunk: Int = 16_384,
    fields: [(String, String)] = []
) async throws -> CachedResponse {
    let response = CachedResponse(
        key: key,
        response: CacheFixture.response(200, fields),
        requestTime: Date(),
        responseTime: Date()
    )
    let writer = try #require(await store.makeWriter(for: response))
    var remaining = size
    while remaining > 0 {
        try await writer.write(ByteBuffer(repeating: UInt8(ascii: "d"), count: min(chunk, remaining)))
        remaining -= min(chunk, remaining)
    }
    try await writer.commit(length: Int64(size))
    var stored = response
    stored.bodyLength = Int64(size)
    return stored
}

/// Reads a whole body.
func collect(_ chunks: ByteChunks) async throws -> Data {
    var data = Data()
    for try await chunk in chunks { data.append(contentsOf: chunk.readableBytesView) }
    return data
}

/// A cache on a directory outlives its process: what one cache stored, a new one on the same directory serves.
@Suite struct DiskCachePersistenceTests {
    @Test(arguments: [0, 1 << 20])
    func responsesStoredByOneCacheAreServedByTheNextOnTheSameDirectory(memory: Int) async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        var probes: [CacheProbe] = []
        for _ in 0..<4 { probes.append(try await CacheProbe.make()) }
        let urls = [
            probes[0].url([("Cache-Control", "max-age=600")]),
            probes[1].url([("Cache-Control", "max-age=600"), ("_size", "150000")]),
            probes[2].url([("Cache-Control", "max-age=600"), ("Vary", "X-Absent")]),
            probes[3].url([("Cache-Control", "max-age=600"), ("_size", "0")]),
        ]
        let first = cachingSession(diskCache(directory, memory: memory))
        var bodies: [Data] = []
        for url in urls {
            let response = await get(first, url)
            #expect(response.cacheStatus == .network)
            bodies.append(try #require(response.data))
        }
        #expect(bodies[1] == kBytes(150_000))
        try await first.shutdown()

        let cache = diskCache(directory, memory: memory)
        let second = cachingSession(cache)
        defer { Task { try await second.shutdown() } }
        for (index, url) in urls.enumerated() {
            let response = await get(second, url)
            guard case .hit = response.cacheStatus else {
                Issue.record("\(index): expected a hit, got \(String(describing: response.cacheStatus))")
                continue
            }
            #expect(response.response?.status.code == 200)
            #expect(response.data == bodies[index], "\(index): the stored body, byte for byte")
            #expect(try await probes[index].count() == 1, "\(index): the server was not asked again")
        }
        #expect(await cache.diskTier?.usedBytes == directory.totalSize)
    }

    @Test func aRevalidatedHeadIsWhatTheNextCacheLoads() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let probe = try await CacheProbe.make()
        let url = probe.url([("Cache-Control", "no-cache"), ("ETag", "\"v1\"")])
        let cache = diskCache(directory, memory: 1 << 20)
        let session = cachingSession(cache)
        let first = await get(session, url)
        let before = try #require(try await cache.cachedResponses(for: url).first)
        let second = await get(session, url)
        #expect(second.cacheStatus == .revalidated)
        let after = try #require(try await cache.cachedResponses(for: url).first)
        #expect(after.id == before.id)
        #expect(after.responseTime > before.responseTime, "the 304 refreshed the head")
        try await session.shutdown()

        let next = diskCache(directory)
        let loaded = try await next.cachedResponses(for: url)
        #expect(loaded.count == 1)
        let head = try #require(loaded.first)
        #expect(head.id == after.id)
        #expect(abs(head.responseTime.timeIntervalSince(after.responseTime)) < 0.001, "the refreshed time")
        #expect(abs(head.requestTime.timeIntervalSince(after.requestTime)) < 0.001)
        #expect(head.response == after.response)
        #expect(head.bodyLength == Int64(first.data?.count ?? -1))
        let nextSession = cachingSession(next)
        defer { Task { try await nextSession.shutdown() } }
        let third = await get(nextSession, url)
        #expect(third.cacheStatus == .revalidated)
        #expect(third.data == first.data)
        #expect(try await probe.count() == 3)
    }

    @Test func anUpdatedHeadIsWrittenAndCountedAgain() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let store = DiskCacheStore(directory: directory.url, capacity: 1 << 20, maximumEntrySize: 1 << 20)
        let stored = try await storeEntry(store, key: "k", size: 1000, fields: [("Cache-Control", "max-age=60")])
        #expect(await store.usedBytes == directory.totalSize)
        var updated = stored
        updated.response.headerFields[try #require(HTTPField.Name("X-Updated"))] = String(repeating: "u", count: 500)
        await store.update(updated)
        #expect(await store.usedBytes == directory.totalSize, "the longer head counts")
        updated.response.headerFields[try #require(HTTPField.Name("X-Updated"))] = nil
        await store.update(updated)
        #expect(await store.usedBytes == directory.totalSize, "and the shorter one")

        updated.response.headerFields[try #require(HTTPField.Name("X-Updated"))] = "yes"
        await store.update(updated)
        let reloaded = DiskCacheStore(directory: directory.url, capacity: 1 << 20, maximumEntrySize: 1 << 20)
        let loaded = try #require(await reloaded.responses(forKey: "k").first)
        #expect(loaded.response.headerFields[try #require(HTTPField.Name("X-Updated"))] == "yes")
        #expect(loaded.bodyLength == 1000)
        #expect(try await collect(try #require(await reloaded.body(of: loaded))) == Data(repeating: 0x64, count: 1000))
        #expect(await reloaded.usedBytes == directory.totalSize)
    }

    @Test func concurrentUpdatesOfOneEntryFromTwoStoresLeaveAWholeHead() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let one = DiskCacheStore(directory: directory.url, capacity: 1 << 20, maximumEntrySize: 1 << 20)
        let stored = try await storeEntry(one, key: "k", size: 100)
        // The second store, as another process would, loads the entry and updates it too.
        let two = DiskCacheStore(directory: directory.url, capacity: 1 << 20, maximumEntrySize: 1 << 20)
        #expect(await two.responses(forKey: "k").count == 1)
        let name = try #require(HTTPField.Name("X-Round"))
        // Two updates at once, one from each store, of different lengths: a head torn between the two writes
        // would not parse, and the entry would be lost.
        for round in 0..<200 {
            var short = stored
            short.response.headerFields[name] = String(repeating: "s", count: 60_000)
            var long = stored
            long.response.headerFields[name] = String(repeating: "l", count: 100_000)
            let (forOne, forTwo) = round % 2 == 0 ? (short, long) : (long, short)
            async let first: Void = one.update(forOne)
            async let second: Void = two.update(forTwo)
            _ = await (first, second)
            let found = try await PoolFile.run { DiskCacheStore.scan(directory.url) }
            guard found.count == 1 else {
                Issue.record("round \(round): the head did not parse: \(directory.files)")
                break
            }
        }
        #expect(directory.files.keys.allSatisfy { !$0.hasSuffix(".partial") }, "\(directory.files)")
        let reloaded = DiskCacheStore(directory: directory.url, capacity: 1 << 20, maximumEntrySize: 1 << 20)
        #expect(await reloaded.responses(forKey: "k").count == 1)
        #expect(await reloaded.usedBytes == directory.totalSize)
    }
}

/// What is in the directory is checked when a cache loads it: a damaged entry is a miss and removed.
@Suite struct DiskCacheDamageTests {
    enum Damage: String, CaseIterable {
        case garbageHead, truncatedHead, otherFormat, missingBody, shortBody, longBody, emptyHead, none
    }

    static func damage(_ damage: Damage, _ id: UUID, in directory: CacheDirectory) throws {
        let head = directory.file(id, "head")
        let body = directory.file(id, "body")
        let headData = try Data(contentsOf: URL(fileURLWithPath: head))
        let bodyData = try Data(contentsOf: URL(fileURLWithPath: body))
        switch damage {
        case .garbageHead:
            try Data((0..<300).map { UInt8(truncatingIfNeeded: $0 &* 37) }).write(to: URL(fileURLWithPath: head))
        case .truncatedHead:
            try headData.prefix(headData.count / 2).write(to: URL(fileURLWithPath: head))
        case .otherFormat:
            var object = try #require(try JSONSerialization.jsonObject(with: headData) as? [String: Any])
            #expect(object["format"] as? String == DiskCacheStore.Head.currentFormat)
            object["format"] = "kite-cache-0"
            try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: head))
        case .missingBody:
            try FileManager.default.removeItem(atPath: body)
        case .shortBody:
            try bodyData.dropLast().write(to: URL(fileURLWithPath: body))
        case .longBody:
            try (bodyData + Data("k".utf8)).write(to: URL(fileURLWithPath: body))
        case .emptyHead:
            try Data().write(to: URL(fileURLWithPath: head))
        case .none:
            break
        }
    }

    @Test func damagedEntriesAreMissesAndRemovedWhileSoundOnesStillHit() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        var probes: [Damage: CacheProbe] = [:]
        for damage in Damage.allCases { probes[damage] = try await CacheProbe.make() }
        func url(_ damage: Damage) -> String {
            probes[damage]?.url([("Cache-Control", "max-age=600"), ("_size", "3000")]) ?? ""
        }
        let cache = diskCache(directory)
        let session = cachingSession(cache)
        var ids: [Damage: UUID] = [:]
        for damage in Damage.allCases {
            #expect(await get(session, url(damage)).data == kBytes(3000))
            let id = try #require(try await cache.ids(for: url(damage)).first)
            ids[damage] = id
        }
        try await session.shutdown()
        for damage in Damage.allCases { try Self.damage(damage, try #require(ids[damage]), in: directory) }
        try Data("hands off".utf8).write(to: URL(fileURLWithPath: directory.file("notes.txt")))

        let next = diskCache(directory)
        for damage in Damage.allCases where damage != .none {
            let id = try #require(ids[damage])
            #expect(try await next.ids(for: url(damage)).isEmpty, "\(damage)")
            #expect(!directory.exists(id, "head") && !directory.exists(id, "body"), "\(damage): removed on load")
        }
        #expect(try await next.ids(for: url(.none)) == [try #require(ids[.none])])
        #expect(try Data(contentsOf: URL(fileURLWithPath: directory.file("notes.txt"))) == Data("hands off".utf8))
        #expect(await next.diskTier?.usedBytes == directory.totalSize - Int64("hands off".utf8.count))

        let nextSession = cachingSession(next)
        defer { Task { try await nextSession.shutdown() } }
        for damage in Damage.allCases {
            let response = await get(nextSession, url(damage))
            #expect(response.data == kBytes(3000), "\(damage)")
            if damage == .none {
                #expect(response.cacheStatus?.isFromCache == true)
                #expect(try await probes[damage]?.count() == 1)
            } else {
                #expect(response.cacheStatus == .network, "\(damage)")
                #expect(try await probes[damage]?.count() == 2, "\(damage)")
            }
        }
        #expect(FileManager.default.fileExists(atPath: directory.file("notes.txt")))
    }

    enum LiveDamage: String, CaseIterable {
        case truncated, extended, removed
    }

    @Test(arguments: LiveDamage.allCases)
    func aBodyDamagedWhileTheCacheRunsIsAMissThatRemovesTheEntry(damage: LiveDamage) async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let probe = try await CacheProbe.make()
        let url = probe.url([("Cache-Control", "max-age=600"), ("_size", "100000")])
        let cache = diskCache(directory)
        let session = cachingSession(cache)
        defer { Task { try await session.shutdown() } }
        _ = await get(session, url)
        let id = try #require(try await cache.ids(for: url).first)
        let body = directory.file(id, "body")
        switch damage {
        case .truncated:
            // In place, as another process's write would: same file, fewer bytes.
            let handle = try #require(FileHandle(forWritingAtPath: body))
            try handle.truncate(atOffset: 50_000)
            try handle.close()
        case .extended:
            let handle = try #require(FileHandle(forWritingAtPath: body))
            try handle.seekToEnd()
            try handle.write(contentsOf: Data("more".utf8))
            try handle.close()
        case .removed:
            try FileManager.default.removeItem(atPath: body)
        }
        let second = await get(session, url)
        #expect(second.error == nil)
        #expect(second.cacheStatus == .network)
        #expect(second.data == kBytes(100_000), "whole, from the server")
        #expect(try await probe.count() == 2)
        #expect(!directory.exists(id, "head") && !directory.exists(id, "body"), "the damaged entry is gone")
        let third = await get(session, url)
        #expect(third.cacheStatus?.isFromCache == true, "the server's answer was stored again")
        #expect(third.data == kBytes(100_000))
        #expect(try await probe.count() == 2)
    }

    @Test func aBodyTruncatedWhileItIsReadFailsInsteadOfEndingShort() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let store = DiskCacheStore(directory: directory.url, capacity: 1 << 20, maximumEntrySize: 1 << 20)
        let stored = try await storeEntry(store, key: "k", size: 200_000)
        var iterator = try #require(await store.body(of: stored)).makeAsyncIterator()
        var received = try #require(try await iterator.next()).readableBytes
        let handle = try #require(FileHandle(forWritingAtPath: directory.file(stored.id, "body")))
        try handle.truncate(atOffset: 100_000)
        try handle.close()
        var failed = false
        do {
            while let chunk = try await iterator.next() { received += chunk.readableBytes }
        } catch {
            failed = true
        }
        #expect(failed, "a body that ends short is an error, never a complete response")
        #expect(received < 200_000)
    }

    @Test func aBodyBeingReadWhenItsEntryIsEvictedIsStillDeliveredWhole() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let store = DiskCacheStore(directory: directory.url, capacity: 250_000, maximumEntrySize: 200_000)
        let old = try await storeEntry(store, key: "old", size: 150_000)
        let body = try #require(await store.body(of: old))
        _ = try await storeEntry(store, key: "new", size: 150_000)
        #expect(await store.responses(forKey: "old").isEmpty, "evicted")
        #expect(!directory.exists(old.id, "body"))
        #expect(try await collect(body) == Data(repeating: UInt8(ascii: "d"), count: 150_000))
    }
}

/// A process killed mid-write leaves `.partial` files or a body without its head: never served, and removed
/// at load only when old (another process may still be writing fresh ones).
@Suite struct DiskCacheLeftoverTests {
    enum Leftover: String, CaseIterable {
        /// Killed after the body was renamed, before the head was: `ID.body` and `ID.head.partial`.
        case headUnrenamed
        /// Killed while the body was written: `ID.body.partial` only.
        case bodyUnrenamed
    }

    @Test func partialFilesAndOrphanBodiesAreNeverServedAndOnlyOldOnesAreRemoved() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let cache = diskCache(directory)
        let session = cachingSession(cache)
        var cases: [(leftover: Leftover, old: Bool, probe: CacheProbe, url: String, id: UUID)] = []
        for leftover in Leftover.allCases {
            for old in [false, true] {
                let probe = try await CacheProbe.make()
                let url = probe.url([("Cache-Control", "max-age=600"), ("_size", "5000")])
                _ = await get(session, url)
                let id = try #require(try await cache.ids(for: url).first)
                cases.append((leftover, old, probe, url, id))
            }
        }
        try await session.shutdown()
        let manager = FileManager.default
        var expected: [String: Bool] = [:]  // name: whether it stays
        for item in cases {
            let stem = item.id.uuidString
            switch item.leftover {
            case .headUnrenamed:
                try manager.moveItem(
                    atPath: directory.file("\(stem).head"),
                    toPath: directory.file("\(stem).head.partial")
                )
                expected["\(stem).body"] = !item.old
                expected["\(stem).head.partial"] = !item.old
            case .bodyUnrenamed:
                try manager.moveItem(
                    atPath: directory.file("\(stem).body"),
                    toPath: directory.file("\(stem).body.partial")
                )
                try manager.removeItem(atPath: directory.file("\(stem).head"))
                expected["\(stem).body.partial"] = !item.old
            }
        }
        // Files of no entry at all.
        for old in [false, true] {
            let stem = UUID().uuidString
            for suffix in ["body", "body.partial", "head.partial"] {
                try Data("leftover".utf8).write(to: URL(fileURLWithPath: directory.file("\(stem).\(suffix)")))
                expected["\(stem).\(suffix)"] = !old
            }
        }
        for (name, stays) in expected where !stays {
            try directory.age(name, by: DiskCacheStore.abandonedAge + 600)
        }

        let next = diskCache(directory)
        for item in cases {
            #expect(try await next.ids(for: item.url).isEmpty, "\(item.leftover), old: \(item.old)")
        }
        let files = directory.files
        for (name, stays) in expected {
            #expect((files[name] != nil) == stays, "\(name) \(stays ? "stays" : "is removed")")
        }
        #expect(files.count == expected.values.filter { $0 }.count, "\(files.keys.sorted())")
        let nextSession = cachingSession(next)
        defer { Task { try await nextSession.shutdown() } }
        for item in cases {
            let response = await get(nextSession, item.url)
            #expect(response.cacheStatus == .network)
            #expect(response.data == kBytes(5000))
            #expect(try await item.probe.count() == 2)
        }
    }
}

/// The disk tier holds at most its capacity, measured on disk, and evicts the least recently used first.
@Suite struct DiskCacheCapacityTests {
    @Test(arguments: [0, 4 << 20])
    func theDirectoryStaysWithinCapacityAndTheLeastRecentlyUsedGoFirst(memory: Int) async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let capacity = 200_000
        let cache = diskCache(directory, capacity: capacity, memory: memory, maximumEntrySize: 50_000)
        let disk = try #require(cache.diskTier)
        let session = cachingSession(cache)
        defer { Task { try await session.shutdown() } }
        var urls: [String] = []
        for _ in 0..<50 {
            urls.append(try await CacheProbe.make().url([("Cache-Control", "max-age=600"), ("_size", "20000")]))
        }
        func stored(_ index: Int) async throws -> Bool { try await !cache.ids(for: urls[index]).isEmpty }
        func store(_ index: Int) async throws {
            let response = await get(session, urls[index])
            #expect(response.cacheStatus == .network, "\(index)")
            #expect(response.data == kBytes(20_000), "\(index)")
            let files = directory.files
            let total = files.values.reduce(0, +)
            #expect(total <= Int64(capacity), "after storing \(index): \(total) bytes on disk")
            #expect(await disk.usedBytes == total, "after storing \(index)")
            #expect(files.keys.filter { $0.hasSuffix(".partial") }.isEmpty, "after storing \(index)")
        }
        for index in 0..<8 { try await store(index) }
        for index in 0..<8 { #expect(try await stored(index), "eight entries of 20 KB fit in 200 KB") }
        // Read the oldest: it becomes the most recently used, and 1, 2, … go before it.
        let touched = await get(session, urls[0])
        #expect(touched.cacheStatus?.isFromCache == true)
        for index in 8..<11 { try await store(index) }
        #expect(try await stored(0), "the entry just read survived")
        #expect(try await !stored(1), "the least recently used went first")
        var kept: [Int] = []
        for index in 1..<11 where try await stored(index) { kept.append(index) }
        #expect(kept == Array((11 - kept.count)..<11), "the older ones went in order: kept \(kept)")
        for index in 11..<50 { try await store(index) }
        kept = []
        for index in 0..<50 where try await stored(index) { kept.append(index) }
        #expect(kept.count >= 8 && kept == Array((50 - kept.count)..<50), "the newest are kept: \(kept)")
        #expect(directory.files.count == 2 * kept.count, "a head and a body per entry, nothing else")
        let last = await get(session, urls[49])
        #expect(last.cacheStatus?.isFromCache == true)
        #expect(last.data == kBytes(20_000))
    }

    @Test func aCacheLoadingMoreThanItsCapacityEvictsTheOldestFiles() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let large = DiskCacheStore(directory: directory.url, capacity: 1 << 20, maximumEntrySize: 1 << 20)
        var stored: [CachedResponse] = []
        for index in 0..<10 { stored.append(try await storeEntry(large, key: "k\(index)", size: 20_000)) }
        // Oldest first, by the heads' modification times.
        for (index, response) in stored.enumerated() {
            try directory.age("\(response.id.uuidString).head", by: Double(100 - index))
        }
        let small = DiskCacheStore(directory: directory.url, capacity: 100_000, maximumEntrySize: 50_000)
        let used = await small.usedBytes
        #expect(used == directory.totalSize)
        #expect(used <= 100_000)
        var kept: [Int] = []
        for index in 0..<10 where await !small.responses(forKey: "k\(index)").isEmpty { kept.append(index) }
        #expect(kept == [6, 7, 8, 9], "the four newest of 20 KB and their heads fit")
    }
}
