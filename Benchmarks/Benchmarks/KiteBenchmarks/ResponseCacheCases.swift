import Benchmark
import Foundation
import Kite
import Synchronization

/// Cases 7 and 8: Kite's ``ResponseCache``.
///
/// - 7: a small GET answered by the cache (its memory tier; its disk tier alone, in a directory on disk and in
///   one in RAM; both tiers after a restart), beside the same GET going to the server in another process without
///   a cache (Kite, and raw AHC for reference). Every response is checked: its `metrics.cacheStatus` must say
///   where it came from.
/// - 8: 1 GiB downloaded through the disk tier by a client process of its own (``ClientProcess``), then read
///   back from the cache, with the client's peak resident memory.
enum CacheCases {
    /// Case 7's GET: 128 bytes of `k`, fresh for ten minutes (`Cache-Control: max-age=600`).
    static let hitPath = "/cached/benchmark-hit?Cache-Control=max-age%3D600&_size=128"
    static let hitSize = 128

    /// Where case 7's answers come from.
    enum Source: String, CaseIterable, Sendable {
        case memory = "Kite, memory hit"
        case diskOnDisk = "Kite, disk hit, /tmp"
        case diskInRAM = "Kite, disk hit, /dev/shm"
        /// A cache with both tiers whose entry a cache before it stored in the same directory (as after an app's
        /// restart): found on disk; whether later hits come from memory is what this one shows.
        case restartedTiers = "Kite, memory and disk tiers after a restart, /tmp"
        case network = "Kite, no cache"
        case ahc = "raw AHC"

        /// The sources this machine has: the RAM directory only where there is a writable `/dev/shm`.
        static var available: [Source] {
            Self.allCases.filter { $0 != .diskInRAM || FileManager.default.isWritableFile(atPath: "/dev/shm") }
        }

        /// The cache of a source with one.
        var layout: Layout? {
            switch self {
            case .memory: .memory
            case .diskOnDisk: .disk(folder: "/tmp")
            case .diskInRAM: .disk(folder: "/dev/shm")
            case .restartedTiers: .restartedTiers(folder: "/tmp")
            case .network, .ahc: nil
            }
        }
    }

    /// A cache of case 7.
    enum Layout: Sendable {
        /// `ResponseCache(memoryCapacity: 10 MiB)`: memory only.
        case memory
        /// A disk tier alone (`memoryCapacity: 0`, 64 MiB on disk) in a new directory in `folder`.
        case disk(folder: String)
        /// Both tiers (10 MiB in memory, 64 MiB on disk) in a new directory in `folder`, opened a second time after
        /// a first cache stored the response there and its session was shut down.
        case restartedTiers(folder: String)

        /// `memory`, a folder, or `restarted:` and a folder (the `cacheHits` job's argument).
        init(_ text: String) {
            if text == "memory" {
                self = .memory
            } else if text.hasPrefix("restarted:") {
                self = .restartedTiers(folder: String(text.dropFirst("restarted:".count)))
            } else {
                self = .disk(folder: text)
            }
        }

        var folder: String? {
            switch self {
            case .memory: nil
            case .disk(let folder), .restartedTiers(let folder): folder
            }
        }

        /// A new cache of this layout in `directory` (`nil` for ``memory``).
        func makeCache(in directory: URL?) -> ResponseCache {
            switch (self, directory) {
            case (.disk, let directory?):
                ResponseCache(memoryCapacity: 0, diskCapacity: 64 << 20, directory: directory)
            case (.restartedTiers, let directory?):
                ResponseCache(memoryCapacity: 10 << 20, diskCapacity: 64 << 20, directory: directory)
            default:
                ResponseCache(memoryCapacity: 10 << 20)
            }
        }
    }

    /// A session with a cache, the entry already stored, kept for the whole benchmark process.
    final class CachedClient: Sendable {
        let session: Session
        let directory: URL?

        init(session: Session, directory: URL?) {
            self.session = session
            self.directory = directory
        }
    }

    private static let clients = Mutex<[Source: CachedClient]>([:])

    /// Registers case 7; `configuration` is the one of cases 1 and 2.
    static func register(configuration: Benchmark.Configuration) {
        for source in Source.available {
            Benchmark(
                "7 cache hit, small GET, server in another process (\(source.rawValue))",
                configuration: configuration
            ) {
                benchmark in
                let harness = try await Harness.remote
                switch source {
                case .ahc:
                    benchmark.startMeasurement()
                    for _ in benchmark.scaledIterations {
                        let count = try await harness.ahcGet(Self.hitPath)
                        guard count == Self.hitSize else { throw HarnessError("raw AHC: got \(count) bytes") }
                    }
                    benchmark.stopMeasurement()
                case .network:
                    let session = try harness.kite
                    let url = harness.url(Self.hitPath)
                    benchmark.startMeasurement()
                    for _ in benchmark.scaledIterations {
                        let status = try await Self.get(url, with: session)
                        guard status == .network else { throw HarnessError("\(source.rawValue): \(status)") }
                    }
                    benchmark.stopMeasurement()
                case .memory, .diskOnDisk, .diskInRAM, .restartedTiers:
                    let session = try await Self.client(source, on: harness).session
                    let url = harness.url(Self.hitPath)
                    benchmark.startMeasurement()
                    for _ in benchmark.scaledIterations {
                        let status = try await Self.get(url, with: session)
                        guard case .hit = status else {
                            throw HarnessError("\(source.rawValue): the response came from \(status), not a hit")
                        }
                    }
                    benchmark.stopMeasurement()
                }
            }
        }
    }

    /// GETs `url` with `session`, checks the body, and returns where the response came from.
    static func get(_ url: String, with session: Session) async throws -> ResponseCacheStatus {
        let response = await session.request(url).validate().serializingData().response
        let count = try response.result.get().count
        guard count == Self.hitSize else { throw HarnessError("Kite: got \(count) bytes") }
        guard let metrics = response.metrics else { throw HarnessError("Kite: a response without metrics") }
        return metrics.cacheStatus
    }

    /// The session of `source` for this process, made on first use (``makeClient(_:on:)``).
    static func client(_ source: Source, on harness: Harness) async throws -> CachedClient {
        if let client = Self.clients.withLock({ $0[source] }) { return client }
        guard let layout = source.layout else { throw HarnessError("\(source.rawValue) has no cache") }
        let client = try await Self.makeClient(layout, on: harness)
        return Self.clients.withLock { clients in
            if let existing = clients[source] { return existing }
            clients[source] = client
            return client
        }
    }

    /// A session with a cache of `layout` that holds case 7's response: the first GET goes to the server and must
    /// be stored, the next must be a hit. For ``Layout/restartedTiers(folder:)`` the first GET is made by a cache
    /// and session of their own, shut down before the second cache opens the directory.
    static func makeClient(_ layout: Layout, on harness: Harness) async throws -> CachedClient {
        let directory = layout.folder.map {
            URL(fileURLWithPath: $0).appendingPathComponent("kite-benchmarks-cache-\(getpid())-\(UUID().uuidString)")
        }
        func session() -> Session {
            var configuration = Session.Configuration.default
            configuration.cache = layout.makeCache(in: directory)
            return Session(configuration: configuration)
        }
        let url = harness.url(Self.hitPath)
        var client = CachedClient(session: session(), directory: directory)
        do {
            let first = try await Self.get(url, with: client.session)
            guard first == .network else { throw HarnessError("\(layout): the first GET came from \(first)") }
            if case .restartedTiers = layout {
                try await client.session.shutdown()
                client = CachedClient(session: session(), directory: directory)
            }
            let second = try await Self.get(url, with: client.session)
            guard case .hit = second else { throw HarnessError("\(layout): the second GET came from \(second)") }
        } catch {
            try? await Self.shutdown(client)
            throw error
        }
        return client
    }

    /// The `cacheHits` job (``ClientProcess/Transfer/cacheHits``): `argument` is the cache (``Layout/init(_:)``:
    /// `memory`, a folder for a disk tier alone, or `restarted:` and a folder) and the number of hits; case 7's GET
    /// that many times, each checked to be a hit. Writes the time per hit to standard error; returns the number of
    /// hits.
    static func hits(_ harness: Harness, argument: String) async throws -> Int64 {
        let words = argument.split(separator: " ").map(String.init)
        guard words.count == 2, let count = Int(words[1]) else {
            throw HarnessError(
                "cacheHits takes a cache (memory, a folder, restarted:folder) and a count, not \"\(argument)\""
            )
        }
        let client = try await Self.makeClient(Layout(words[0]), on: harness)
        let url = harness.url(Self.hitPath)
        do {
            let start = ContinuousClock.now
            for _ in 0..<count {
                let status = try await Self.get(url, with: client.session)
                guard case .hit = status else { throw HarnessError("cacheHits: the response came from \(status)") }
            }
            let elapsed = start.duration(to: .now) / max(count, 1)
            let microseconds = Double(elapsed.components.attoseconds) / 1e12 + Double(elapsed.components.seconds) * 1e6
            let line = String(format: "cacheHits: %d hits from %@, %.1f µs each\n", count, words[0], microseconds)
            FileHandle.standardError.write(Data(line.utf8))
            try await Self.shutdown(client)
        } catch {
            try? await Self.shutdown(client)
            throw error
        }
        return Int64(count)
    }

    /// Rounds of the `cacheTurns` job.
    static let turnRounds = 7

    /// The `cacheTurns` job (``ClientProcess/Transfer/cacheTurns``): case 7's sources take turns in this process,
    /// blocks of `count` GETs each, the order rotating, ``turnRounds`` rounds after one untimed block each; every
    /// answer is checked as case 7 checks it. Prints each round's time per request of each source, then each
    /// source's median and range and the median round's ratio of Kite's network GET to it (how many times faster
    /// than the round trip). The separate benchmarks run each source in its own process, seconds apart, on a machine
    /// whose speed drifts; taking turns exposes all of them to the same drift.
    static func turns(_ harness: Harness, count: Int) async throws -> Int64 {
        let url = harness.url(Self.hitPath)
        var made: [(Source, CachedClient)] = []
        do {
            for source in Source.available {
                if let layout = source.layout { made.append((source, try await Self.makeClient(layout, on: harness))) }
            }
            var contenders: [(source: Source, get: () async throws -> Void)] = made.map { source, client in
                (
                    source,
                    {
                        let status = try await Self.get(url, with: client.session)
                        guard case .hit = status else { throw HarnessError("\(source.rawValue): \(status), not a hit") }
                    }
                )
            }
            let kite = try harness.kite
            contenders.append(
                (
                    .network,
                    {
                        let status = try await Self.get(url, with: kite)
                        guard status == .network else { throw HarnessError("Kite without a cache: \(status)") }
                    }
                )
            )
            contenders.append(
                (
                    .ahc,
                    {
                        let bytes = try await harness.ahcGet(Self.hitPath)
                        guard bytes == Self.hitSize else { throw HarnessError("raw AHC: got \(bytes) bytes") }
                    }
                )
            )
            for contender in contenders { try await contender.get() }
            var times: [Source: [Double]] = [:]
            var ratios: [Source: [Double]] = [:]
            for round in 0..<Self.turnRounds {
                let shift = round % contenders.count
                var line: [Source: Double] = [:]
                for contender in contenders[shift...] + contenders[..<shift] {
                    let start = ContinuousClock.now
                    for _ in 0..<count { try await contender.get() }
                    let elapsed = start.duration(to: .now) / max(count, 1)
                    line[contender.source] =
                        Double(elapsed.components.seconds) * 1e6 + Double(elapsed.components.attoseconds) / 1e12
                }
                let network = line[.network] ?? .nan
                for (source, microseconds) in line {
                    times[source, default: []].append(microseconds)
                    ratios[source, default: []].append(network / microseconds)
                }
                let text = contenders.map { String(format: "%@ %.1f µs", $0.source.rawValue, line[$0.source] ?? .nan) }
                print("round \(round + 1): " + text.joined(separator: ", "))
            }
            for contender in contenders {
                let sorted = (times[contender.source] ?? []).sorted()
                let ratio = (ratios[contender.source] ?? []).sorted()
                guard let low = sorted.first, let high = sorted.last, !ratio.isEmpty else { continue }
                print(
                    String(
                        format:
                            "%@: median %.1f µs per request (%.1f to %.1f), Kite's network GET takes %.2f times as long",
                        contender.source.rawValue,
                        sorted[sorted.count / 2],
                        low,
                        high,
                        ratio[ratio.count / 2]
                    )
                )
            }
            for (_, client) in made { try await Self.shutdown(client) }
            return Int64(count * Self.turnRounds * contenders.count)
        } catch {
            for (_, client) in made { try? await Self.shutdown(client) }
            throw error
        }
    }

    /// Stops the sessions made by ``client(_:on:)`` and removes their directories; `Benchmark.teardown` calls it.
    static func stop() async throws {
        let made = Self.clients.withLock { clients in
            defer { clients = [:] }
            return Array(clients.values)
        }
        for client in made { try await Self.shutdown(client) }
    }

    private static func shutdown(_ client: CachedClient) async throws {
        try await client.session.shutdown()
        if let directory = client.directory { try? FileManager.default.removeItem(at: directory) }
    }

    // MARK: Case 8: 1 GiB through the disk tier, in a client process

    /// The size of each response of case 8 (the test server's largest `_size`).
    static let fillEntrySize = 64 << 20

    /// The `cacheFill` job (``ClientProcess/Transfer/cacheFill``): downloads `count` different 64 MiB responses
    /// with `session.download` through a cache with only a disk tier (`memoryCapacity: 0`, 2 GiB, entries up to
    /// 128 MiB) in a new directory under `/var/tmp`, which must not be in RAM; checks that each came from the
    /// network and was stored whole, then downloads them all again and checks that each is a hit read from the
    /// cache. Writes each pass's time and the peak resident memory after it to standard error; returns the bytes
    /// of the first pass.
    ///
    /// With `memoryMiB` above 0 (the job's optional second word) the cache has a memory tier of that many MiB in
    /// front of the disk tier, as ``ResponseCache``'s default and its documentation's example have (case 8 runs
    /// without).
    static func fill(_ harness: Harness, count: Int, memoryMiB: Int = 0) async throws -> Int64 {
        let folder = "/var/tmp"
        let type = Self.fileSystemType(folder) ?? "an unknown file system"
        guard !["tmpfs", "ramfs"].contains(type) else {
            throw HarnessError("\(folder) is on \(type): case 8's cache must be on disk")
        }
        let tiers = memoryMiB > 0 ? "a \(memoryMiB) MiB memory tier and a disk tier" : "a disk tier alone"
        FileHandle.standardError.write(Data("cacheFill: \(tiers), its directory in \(folder), on \(type)\n".utf8))
        let directory = URL(fileURLWithPath: folder)
            .appendingPathComponent("kite-benchmarks-cache-fill-\(getpid())-\(UUID().uuidString)")
        let cache = ResponseCache(
            memoryCapacity: memoryMiB << 20,
            diskCapacity: 2 << 30,
            directory: directory,
            maximumEntrySize: 128 << 20
        )
        var configuration = Session.Configuration.default
        configuration.cache = cache
        let session = Session(configuration: configuration)
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            let total = try await Self.fillAndRead(count: count, session: session, cache: cache, harness: harness)
            try await session.shutdown()
            return total
        } catch {
            try? await session.shutdown()
            throw error
        }
    }

    private static func fillAndRead(
        count: Int,
        session: Session,
        cache: ResponseCache,
        harness: Harness
    ) async throws -> Int64 {
        let run = UUID().uuidString.prefix(8)
        let urls = (0..<count).map { index in
            harness.url("/cached/fill-\(run)-\(index)?Cache-Control=max-age%3D600&_size=\(Self.fillEntrySize)")
        }
        var total: Int64 = 0
        var start = ContinuousClock.now
        for url in urls {
            let (size, status) = try await Self.download(url, with: session, harness: harness)
            guard size == Self.fillEntrySize, status == .network else {
                throw HarnessError("cacheFill: \(url) gave \(size) bytes from \(status), expected the network")
            }
            guard let parsed = URL(string: url) else { throw HarnessError("not a URL: \(url)") }
            let stored = await cache.cachedResponses(for: parsed)
            guard stored.count == 1, stored[0].bodyLength == Int64(Self.fillEntrySize) else {
                throw HarnessError("cacheFill: \(url) was not stored whole: \(stored.map(\.bodyLength))")
            }
            total += size
        }
        Self.report("filled \(total >> 20) MiB from the network", since: start)
        start = ContinuousClock.now
        for url in urls {
            let (size, status) = try await Self.download(url, with: session, harness: harness)
            guard size == Self.fillEntrySize, case .hit = status else {
                throw HarnessError("cacheFill: \(url) read back \(size) bytes from \(status), expected a hit")
            }
        }
        Self.report("read \(total >> 20) MiB back as hits", since: start)
        return total
    }

    /// Downloads `url` to a new file in the scratch folder; returns its size (the file is removed) and where the
    /// response came from.
    private static func download(
        _ url: String,
        with session: Session,
        harness: Harness
    ) async throws -> (Int64, ResponseCacheStatus) {
        let destination = harness.scratchFile("cache-fill")
        let response = await session.download(url, to: { _, _ in (destination, []) })
            .validate()
            .serializingDownloadedFileURL()
            .response
        let fileURL = try response.result.get()
        let size = try Harness.sizeAndRemove(fileURL)
        guard let metrics = response.metrics else { throw HarnessError("cacheFill: a response without metrics") }
        return (size, metrics.cacheStatus)
    }

    private static func report(_ what: String, since start: ContinuousClock.Instant) {
        let elapsed = start.duration(to: .now)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let peak = (try? ClientProcess.ownPeakResident()).map { "\($0 >> 20) MiB" } ?? "unknown"
        let line = String(format: "cacheFill: %@ in %.2f s; peak resident memory so far %@\n", what, seconds, peak)
        FileHandle.standardError.write(Data(line.utf8))
    }

    /// The type of the file system that holds `path` (`ext4`, `tmpfs`), from `/proc/mounts`; `nil` when unknown.
    static func fileSystemType(_ path: String) -> String? {
        guard let mounts = try? String(contentsOfFile: "/proc/mounts", encoding: .utf8) else { return nil }
        let resolved = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        var found: (mountPoint: String, type: String)?
        for line in mounts.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count >= 3 else { continue }
            let mountPoint = String(fields[1])
            let holds = mountPoint == "/" || resolved == mountPoint || resolved.hasPrefix(mountPoint + "/")
            // The longest mount point that holds the path; of equal ones the last (mounted over the others).
            if holds, mountPoint.count >= (found?.mountPoint.count ?? 0) {
                found = (mountPoint, String(fields[2]))
            }
        }
        return found?.type
    }
}
