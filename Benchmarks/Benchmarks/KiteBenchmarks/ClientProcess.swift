import AsyncHTTPClient
import Benchmark
import Foundation
import Kite
import NIOCore
import Synchronization

/// Cases 4 and 5 run Kite and raw AHC a second time in a process of their own, as `curl -o` runs, so
/// that the peak resident memory measured is the client's alone. The benchmark process also holds
/// the in-process server (which generates, parses and hashes every byte it serves or receives),
/// package-benchmark and the other clients' set-up, and so sits at about 60 MiB before a transfer
/// starts.
///
/// Case 8 (``Transfer/cacheFill``) runs Kite's response cache the same way, for the same reason.
///
/// The client process is this executable again, started with ``variable`` naming the job; it makes
/// only the one client, uses its parent's server, and reports the bytes transferred and its own peak
/// resident memory (`VmHWM`) on standard output.
enum ClientProcess {
    enum Transfer: String {
        case download
        case upload
        /// Small GETs one after another, as many as the argument says: a profile of case 1 under callgrind or
        /// perf (`KITE_BENCHMARK_CLIENT_PROCESS="gets Kite http://127.0.0.1:PORT 2000"`).
        case gets
        /// Case 2's unit of work (64 small GETs in flight at once) repeated, as many rounds as the argument says:
        /// a profile of case 2 (`KITE_BENCHMARK_CLIENT_PROCESS="gets64 Kite http://127.0.0.1:PORT 300"`).
        case gets64
        /// Kite's own work per request, without a network: small GETs one after another on a `MockTransport`
        /// that answers 128 bytes at once, as many as the argument says
        /// (`KITE_BENCHMARK_CLIENT_PROCESS="pipeline Kite http://api.test 40000"`), taking turns with as many bare
        /// task hops (`Task { }.value`) in nine rounds; prints each round's times and their ratio, and the median
        /// ratio. CPU-bound and so far steadier than the network cases; under `perf record -g` it gives the cost of
        /// each stage.
        case pipeline
        /// Raw AHC's two APIs and Kite, taking turns in blocks of small sequential GETs against the server process,
        /// six rounds, the order rotating (`KITE_BENCHMARK_CLIENT_PROCESS="engines Kite http://127.0.0.1:PORT 3000"`):
        /// the async API (`execute(_:timeout:)` and `collect`, what Kite's engine uses), the future API
        /// (`execute(request:)`, whose delegate collects the body on the event loop and completes once), and Kite.
        /// Prints each block's time per request.
        case engines
        /// 1 GiB through the response cache's disk tier: as many different 64 MiB responses as the argument says
        /// (16 for 1 GiB), each downloaded to a file through a cache with no memory tier in a directory on disk,
        /// checked to be stored, then all read back from the cache as hits
        /// (`KITE_BENCHMARK_CLIENT_PROCESS="cacheFill Kite http://127.0.0.1:PORT 16"`; a second number adds a memory tier
        /// of that many MiB: ``CacheCases/fill(_:count:memoryMiB:)``).
        case cacheFill
        /// Case 7's cache hits one after another: the argument is the cache (`memory`, a folder for a disk tier alone,
        /// or `restarted:` and a folder for both tiers reopened) and the number of hits, a profile of case 7 under perf
        /// or strace
        /// (`KITE_BENCHMARK_CLIENT_PROCESS="cacheHits Kite http://127.0.0.1:PORT /tmp 20000"`); writes the time per hit
        /// to standard error.
        case cacheHits
        /// Case 7's sources (memory hit, disk hits, Kite without a cache, raw AHC) taking turns in blocks of as many
        /// GETs as the argument says, seven rounds, the order rotating
        /// (`KITE_BENCHMARK_CLIENT_PROCESS="cacheTurns Kite http://127.0.0.1:PORT 2000"`); prints each block's time per
        /// request, and each source's median and its ratio to the network GET (``CacheCases/turns(_:count:)``).
        case cacheTurns
    }

    /// The environment variable that makes this executable a client process.
    static let variable = "KITE_BENCHMARK_CLIENT_PROCESS"

    /// The client process's peak resident memory in bytes (its `VmHWM`). The name is the key of the
    /// static thresholds in `Thresholds/`.
    static let peakResident = BenchmarkMetric.custom("clientPeakMemoryResident")

    /// Does the job and exits when this process is a client process; returns at once otherwise.
    static func runIfRequested() {
        ProcessJob.runIfRequested(Self.variable) { job in
            let bytes = try await Self.perform(job)
            print("\(bytes) \(try Self.ownPeakResident())")
        }
    }

    /// Runs `transfer` with `client` in a client process against `harness`'s server.
    ///
    /// - Parameter argument: The path to download, or the file to upload.
    /// - Returns: The bytes transferred (checked by the client process as the in-process cases check
    ///   them) and the client process's peak resident memory in bytes.
    static func run(
        _ transfer: Transfer,
        with client: Client,
        _ argument: String,
        on harness: Harness
    ) async throws -> (bytes: Int64, peakResident: Int) {
        let executable = URL(
            fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        )
        var environment = ProcessInfo.processInfo.environment
        environment[Self.variable] = [transfer.rawValue, client.rawValue, harness.baseURL, argument]
            .joined(separator: " ")
        let output = try await Harness.runProcess(executable, arguments: [], environment: environment)
        let words = String(decoding: output, as: UTF8.self).split(whereSeparator: \.isWhitespace)
        guard words.count == 2, let bytes = Int64(words[0]), let peak = Int(words[1]) else {
            throw HarnessError("client process answered \"\(String(decoding: output, as: UTF8.self))\"")
        }
        return (bytes, peak)
    }

    /// The client process's side: one client, its parent's server, one transfer.
    private static func perform(_ job: String) async throws -> Int64 {
        let words = job.split(separator: " ", maxSplits: 3).map(String.init)
        // A client by its label or, for labels with spaces, its case name (`ahcInTask`).
        guard words.count == 4, let transfer = Transfer(rawValue: words[0]),
            let client = Client(rawValue: words[1]) ?? Client.allCases.first(where: { "\($0)" == words[1] })
        else {
            throw HarnessError("not a client process job: \(job)")
        }
        if transfer == .pipeline {
            return try await Self.pipeline(url: words[2] + smallPath, count: Int(words[3]) ?? 0)
        }
        let harness = try await Harness(
            serverURL: words[2],
            clients: [.engines, .cacheTurns].contains(transfer)
                ? [.kite, .ahc] : [.cacheFill, .cacheHits].contains(transfer) ? [] : [client]
        )
        let result: Result<Int64, any Error>
        do {
            switch transfer {
            case .download: result = .success(try await harness.download(words[3], with: client))
            case .upload: result = .success(try await harness.upload(URL(fileURLWithPath: words[3]), with: client))
            case .engines:
                try await Self.engines(harness, count: Int(words[3]) ?? 0)
                result = .success(Int64(18 * (Int(words[3]) ?? 0)))
            case .pipeline:
                result = .success(0)  // answered above, without a server
            case .cacheFill:
                let numbers = words[3].split(separator: " ").compactMap { Int($0) }
                let count = numbers.first ?? 0
                result = .success(
                    try await CacheCases.fill(harness, count: count, memoryMiB: numbers.dropFirst().first ?? 0)
                )
            case .cacheTurns:
                result = .success(try await CacheCases.turns(harness, count: Int(words[3]) ?? 0))
            case .cacheHits:
                result = .success(try await CacheCases.hits(harness, argument: words[3]))
            case .gets:
                let count = Int(words[3]) ?? 0
                for _ in 0..<count { try await harness.smallGet(with: client) }
                result = .success(Int64(count))
            case .gets64:
                let rounds = Int(words[3]) ?? 0
                for _ in 0..<rounds { try await harness.smallGets64(with: client) }
                result = .success(Int64(64 * rounds))
            }
        } catch {
            result = .failure(error)
        }
        try await harness.shutdown()
        return try result.get()
    }

    /// The `pipeline` job: Kite on a `MockTransport` and bare task hops, taking turns, nine rounds of `count`
    /// each. Prints each round's time per request of both and their ratio (Kite's GET in task hops), then the
    /// median ratio: the machine's speed changes from minute to minute, the ratio much less.
    ///
    /// A third contender is the floor of any GET with Kite's public API on a task of its own: the URL string
    /// parsed (`URLConvertible` makes a `URL`), a new task that makes the 128-byte body, and the caller woken with
    /// it. Nothing of Kite's runs in it, so (Kite − floor) is what Kite's request, pipeline, mock engine and
    /// response cost.
    private static func pipeline(url: String, count: Int) async throws -> Int64 {
        let mock = MockTransport()
        mock.stub(.any, response: .status(200, body: .string(String(repeating: "k", count: 128))))
        let session = Session(configuration: .default, transport: mock)
        func perRequest(since start: ContinuousClock.Instant) -> Double {
            let duration = start.duration(to: .now) / max(count, 1)
            let nanoseconds =
                duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000
            return Double(nanoseconds) / 1000
        }
        var ratios: [Double] = []
        var floors: [Double] = []
        for round in 1...9 {
            var start = ContinuousClock.now
            for _ in 0..<count {
                let data = try await session.request(url).validate().serializingData().value
                guard data.count == 128 else { throw HarnessError("MockTransport answered \(data.count) bytes") }
            }
            let kite = perRequest(since: start)
            start = ContinuousClock.now
            for _ in 0..<count {
                await Task {}.value
            }
            let hop = perRequest(since: start)
            start = ContinuousClock.now
            for _ in 0..<count {
                guard let parsed = URL(string: url) else { throw HarnessError("\(url) does not parse") }
                let data = await Task { Data(repeating: UInt8(parsed.path.utf8.count), count: 128) }.value
                guard data.count == 128 else { throw HarnessError("the floor made \(data.count) bytes") }
            }
            let floor = perRequest(since: start)
            ratios.append(kite / hop)
            floors.append(floor / hop)
            print(
                String(
                    format: "round %d: Kite on MockTransport %.2f µs, a bare task hop %.2f µs, the floor %.2f µs per "
                        + "request: %.1f hops, the floor %.1f hops",
                    round,
                    kite,
                    hop,
                    floor,
                    kite / hop,
                    floor / hop
                )
            )
        }
        print(
            String(
                format: "median: %.1f hops per GET, the floor %.1f hops",
                ratios.sorted()[ratios.count / 2],
                floors.sorted()[floors.count / 2]
            )
        )
        try await session.shutdown()
        return Int64(27 * count)
    }

    /// The `engines` job: see ``Transfer/engines``.
    private static func engines(_ harness: Harness, count: Int) async throws {
        let labels = ["AHC async API", "AHC future API", "Kite"]
        for round in 0..<6 {
            var times: [String: Duration] = [:]
            for label in labels[(round % 3)...] + labels[..<(round % 3)] {
                let start = ContinuousClock.now
                for _ in 0..<count {
                    let bytes: Int
                    switch label {
                    case "AHC async API": bytes = try await harness.ahcGet(smallPath)
                    case "AHC future API":
                        let request = try HTTPClient.Request(url: harness.url(smallPath))
                        let response = try await harness.ahc.execute(request: request).get()
                        bytes = response.body?.readableBytes ?? 0
                    default: bytes = try await harness.kiteGet(smallPath)
                    }
                    guard bytes == 128 else { throw HarnessError("\(label): got \(bytes) bytes") }
                }
                times[label] = start.duration(to: .now) / max(count, 1)
            }
            let line = labels.map { label in
                let nanoseconds = (times[label] ?? .zero).components.attoseconds / 1_000_000_000
                return "\(label) \(nanoseconds / 1000) µs"
            }
            print("round \(round): " + line.joined(separator: ", "))
        }
    }

    /// This process's peak resident memory in bytes, from `VmHWM` in `/proc/self/status`.
    static func ownPeakResident() throws -> Int {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            let fields = line.split(whereSeparator: \.isWhitespace)
            if fields.count == 3, fields[2] == "kB", let kibibytes = Int(fields[1]) {
                return kibibytes * 1024
            }
        }
        throw HarnessError("no VmHWM in /proc/self/status")
    }
}
