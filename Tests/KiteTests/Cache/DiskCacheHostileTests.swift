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

/// A directory the cache cannot write to: the responses still come from the server, whole, and nothing is kept.
@Suite(.timeLimit(.minutes(1))) struct DiskCacheUnwritableTests {
    /// Whether mode 0555 stops this process writing (it does not for root).
    static let modeStopsWrites: Bool = {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let manager = FileManager.default
        guard (try? manager.createDirectory(at: directory.url, withIntermediateDirectories: true)) != nil,
            (try? manager.setAttributes([.posixPermissions: 0o555], ofItemAtPath: directory.path)) != nil
        else { return false }
        let wrote = manager.createFile(atPath: directory.file("probe"), contents: Data("x".utf8))
        try? manager.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory.path)
        return !wrote
    }()

    static func expectNothingStored(at url: URL, path: String? = nil) async throws {
        let cache = ResponseCache(memoryCapacity: 1 << 20, diskCapacity: 1 << 20, directory: url)
        let session = cachingSession(cache)
        defer { Task { try await session.shutdown() } }
        let probe = try await CacheProbe.make()
        let json = probe.url([("Cache-Control", "max-age=600")])
        let sized = probe.url([("Cache-Control", "max-age=600"), ("_size", "40000")])
        for round in 1...2 {
            let first = await get(session, json)
            #expect(first.cacheStatus == .network)
            #expect(try decodeCached(first).count == 2 * round - 1)
            let second = await get(session, sized)
            #expect(second.cacheStatus == .network)
            #expect(second.data == kBytes(40_000))
        }
        #expect(try await cache.ids(for: json).isEmpty)
        #expect(try await cache.ids(for: sized).isEmpty)
        #expect(try await probe.count() == 4)
    }

    @Test func aDirectoryThatCannotBeMadeStoresNothing() async throws {
        let parent = CacheDirectory()
        defer { parent.remove() }
        // The directory's parent is a regular file: nothing can be made under it, whoever runs the test.
        try Data("a file".utf8).write(to: parent.url)
        try await Self.expectNothingStored(at: parent.url.appendingPathComponent("cache"))
        #expect(try Data(contentsOf: parent.url) == Data("a file".utf8))
    }

    @Test(
        .enabled(if: modeStopsWrites, "mode 0555 does not stop root's writes (aDirectoryThatCannotBeMade… covers it)")
    )
    func aReadOnlyDirectoryStoresNothing() async throws {
        let directory = CacheDirectory()
        defer {
            try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory.path)
            directory.remove()
        }
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: directory.path)
        try await Self.expectNothingStored(at: directory.url)
        #expect(directory.files.isEmpty)
    }

    /// A tmpfs of 64 KiB, to fill; only where this process may mount one (root, and a kernel that lets it).
    static let tinyVolumes: Bool = {
        guard let volume = try? TinyVolume() else { return false }
        volume.unmount()
        return true
    }()

    @Test(
        .enabled(if: tinyVolumes, "mounting a 64 KiB tmpfs needs root and a kernel that allows it"),
        arguments: [200_000, 3_000_000]
    )
    func aResponseLargerThanTheFreeSpaceIsDeliveredWholeAndLeavesNoFile(size: Int) async throws {
        let volume = try TinyVolume()
        defer { volume.unmount() }
        let directory = CacheDirectory(in: volume.directory.url)
        let cache = diskCache(directory, capacity: 16 << 20, maximumEntrySize: 8 << 20)
        let session = cachingSession(cache)
        defer { Task { try await session.shutdown() } }
        let probe = try await CacheProbe.make()
        let url = probe.url([("Cache-Control", "max-age=600"), ("_size", "\(size)")])
        for _ in 0..<2 {
            let response = await get(session, url)
            #expect(response.error == nil)
            #expect(response.cacheStatus == .network)
            #expect(response.data == kBytes(size), "whole")
        }
        #expect(try await cache.ids(for: url).isEmpty)
        #expect(directory.files.isEmpty, "no partial file left: \(directory.files)")
        #expect(await cache.diskTier?.usedBytes == 0)
        // The space is free again: a small response is stored and served.
        let small = probe.url([("Cache-Control", "max-age=600"), ("_size", "1000")])
        _ = await get(session, small)
        #expect(await get(session, small).cacheStatus?.isFromCache == true)
        #expect(try await probe.count() == 3)
    }
}

/// A tmpfs of 64 KiB mounted on a directory of its own.
struct TinyVolume {
    let directory = CacheDirectory()

    init() throws {
        try FileManager.default.createDirectory(at: self.directory.url, withIntermediateDirectories: true)
        #if canImport(Glibc)
        let result = mount("tmpfs", self.directory.path, "tmpfs", 0, "size=64k")
        #else
        let result: CInt = -1
        #endif
        guard result == 0 else {
            self.directory.remove()
            throw POSIXError(.EPERM)
        }
    }

    func unmount() {
        #if canImport(Glibc)
        umount2(self.directory.path, CInt(MNT_DETACH))
        #endif
        self.directory.remove()
    }
}

/// Two caches on one directory, as two processes would have.
@Suite(.timeLimit(.minutes(2))) struct DiskCacheSharingTests {
    @Test func twoCachesOnOneDirectoryServeCorrectResponsesAndLeaveOnlyWholeEntries() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        var made: [CacheProbe] = []
        for _ in 0..<30 { made.append(try await CacheProbe.make()) }
        let probes = made
        @Sendable func url(_ index: Int) -> String {
            index % 3 == 0
                ? probes[index].url([("Cache-Control", "max-age=600")])
                : probes[index].url([("Cache-Control", "max-age=600"), ("_size", "\(5_000 + index * 4_000)")])
        }
        @Sendable func check(_ response: DataResponse<Data, KiteError>, _ index: Int) throws {
            #expect(response.error == nil, "\(index)")
            #expect(response.response?.status.code == 200, "\(index)")
            if index % 3 == 0 {
                #expect(try decodeCached(response).key == probes[index].key, "\(index)")
            } else {
                #expect(response.data == kBytes(5_000 + index * 4_000), "\(index)")
            }
        }
        // Both caches load the entries already there, and evict (each its own view) as they store.
        let seed = cachingSession(diskCache(directory))
        for index in [0, 1, 2, 27, 28, 29] { try check(await get(seed, url(index)), index) }
        try await seed.shutdown()
        let sessions = [
            cachingSession(diskCache(directory, capacity: 600_000)),
            cachingSession(diskCache(directory, capacity: 600_000, memory: 1 << 20)),
        ]
        let ranges = [0..<20, 10..<30]
        try await withThrowingTaskGroup(of: Void.self) { group in
            for round in 0..<2 {
                for (session, range) in zip(sessions, ranges) {
                    for index in range {
                        group.addTask { try check(await get(session, url(index)), index) }
                    }
                }
                if round == 0 { try await group.waitForAll() }
            }
            try await group.waitForAll()
        }
        for session in sessions { try await session.shutdown() }
        #expect(directory.files.keys.filter { $0.hasSuffix(".partial") }.isEmpty)

        let next = diskCache(directory, capacity: 4 << 20)
        let disk = try #require(next.diskTier)
        #expect(await disk.usedBytes == directory.totalSize)
        let files = directory.files
        for name in files.keys where name.hasSuffix(".head") {
            let data = try Data(contentsOf: URL(fileURLWithPath: directory.file(name)))
            let head = try JSONDecoder().decode(DiskCacheStore.Head.self, from: data)
            #expect(head.response != nil, "\(name)")
            #expect(name == "\(head.id.uuidString).head")
            #expect(files["\(head.id.uuidString).body"] == head.bodyLength, "\(name)")
        }
        let heads = files.keys.filter { $0.hasSuffix(".head") }.count
        #expect(heads > 0)
        #expect(files.count == 2 * heads, "a body for every head, and no other file: \(files.keys.sorted())")
        let nextSession = cachingSession(next)
        defer { Task { try await nextSession.shutdown() } }
        for index in 0..<30 where try await !next.ids(for: url(index)).isEmpty {
            let response = await get(nextSession, url(index))
            #expect(response.cacheStatus?.isFromCache == true, "\(index)")
            try check(response, index)
        }
    }
}

/// `maximumEntrySize` bounds what the disk tier keeps.
@Suite struct DiskCacheEntryLimitTests {
    @Test(arguments: [0, 1 << 20])
    func aResponseOverTheEntryLimitIsDeliveredButLeavesNoFile(memory: Int) async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let cache = diskCache(directory, memory: memory, maximumEntrySize: 10_000)
        let session = cachingSession(cache)
        defer { Task { try await session.shutdown() } }
        let probe = try await CacheProbe.make()
        let large = probe.url([("Cache-Control", "max-age=600"), ("_size", "10001")])
        #expect(await get(session, large).data == kBytes(10_001))
        #expect(try await cache.ids(for: large).isEmpty)
        #expect(directory.files.isEmpty)
        // Without a Content-Length the limit is found while the body streams.
        let chunked = try await FaultServer.url("/close-after?bytes=30000&length=30000&chunked=1")
        #expect(await get(session, chunked).data?.count == 30_000)
        #expect(try await cache.ids(for: chunked).isEmpty)
        #expect(directory.files.isEmpty, "\(directory.files)")
        // At the limit it is stored.
        let exact = probe.url([("Cache-Control", "max-age=600"), ("_size", "10000")])
        _ = await get(session, exact)
        let id = try #require(try await cache.ids(for: exact).first)
        #expect(directory.files["\(id.uuidString).body"] == 10_000)
        #expect(directory.files.count == 2)
        #expect(await get(session, exact).cacheStatus?.isFromCache == true)
        #expect(try await probe.count() == 2)
    }

    @Test func aWriterPastTheEntryLimitCommitsNothing() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let store = DiskCacheStore(directory: directory.url, capacity: 1 << 20, maximumEntrySize: 10_000)
        await #expect(throws: CacheStoreError.self) {
            _ = try await storeEntry(store, key: "k", size: 12_000, chunk: 6_000)
        }
        #expect(await store.responses(forKey: "k").isEmpty)
        #expect(directory.files.isEmpty)
        #expect(await store.usedBytes == 0)
    }
}
