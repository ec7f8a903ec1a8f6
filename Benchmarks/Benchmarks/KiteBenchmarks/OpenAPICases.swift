import AsyncHTTPClient
import Benchmark
import Foundation
import Kite
import KiteOpenAPI
import OpenAPIAsyncHTTPClient
import OpenAPIRuntime
import Synchronization

@testable import GeneratedOpenAPIClient

/// Case 9: the client swift-openapi-generator made from `Scripts/openapi/openapi.yaml` (the one Kite's tests use,
/// `Tests/KiteOpenAPITests/Generated`) on two transports, against the server in another process:
/// ``Transport/kite`` (KiteOpenAPI's `KiteClientTransport` over a `Session` with the default configuration) and
/// ``Transport/ahc`` (swift-openapi-async-http-client's `AsyncHTTPClientTransport` over an `HTTPClient` configured
/// as Kite's engine, the same connection limits). The generated code is the same for both; only the transport
/// differs.
///
/// - Separately, each transport in a benchmark process of its own: throughput and allocations per request
///   (`mallocCountTotal`; the server's allocations are in its own process).
/// - Interleaved, as ``Interleaved`` does for cases 1 and 2: the two transports take turns in one process, block
///   by block, the order rotating, new clients every iteration; each iteration records the median over
///   ``rounds`` rounds of Kite's rate as a percentage of AHC's, and the median rates themselves.
enum OpenAPICases {
    /// The transports compared.
    enum Transport: String, CaseIterable, Sendable {
        case kite = "KiteClientTransport"
        case ahc = "AsyncHTTPClientTransport"
    }

    /// The generated client's operations measured.
    enum Operation: String, CaseIterable, Sendable {
        /// `GET /json`: httpbin's slideshow (421 bytes), decoded by the generated client into
        /// `Components.Schemas.SlideshowDocument`.
        case getJSON
        /// `GET /bytes/65536`: 64 KiB of `application/octet-stream`, its `HTTPBody` read chunk by chunk as it
        /// streams in and counted.
        case getBytes

        /// The bytes `getBytes` asks for.
        static let byteCount = 65_536

        /// The case's name in the benchmark's.
        var label: String {
            switch self {
            case .getJSON: "getJSON (small JSON, decoded)"
            case .getBytes: "getBytes 64 KiB (body streamed)"
            }
        }

        /// Requests per block in the interleaved case: about a tenth of a second each here.
        var block: Int {
            switch self {
            case .getJSON: 300
            case .getBytes: 150
            }
        }

        /// Calls the operation with `client` and checks the answer.
        func perform(with client: GeneratedOpenAPIClient.Client) async throws {
            switch self {
            case .getJSON:
                let output = try await client.getJSON()
                guard case .ok(let ok) = output else { throw HarnessError("getJSON answered \(output)") }
                let document = try ok.body.json
                guard document.slideshow.title == "Sample Slide Show", document.slideshow.slides.count == 2 else {
                    throw HarnessError("getJSON decoded \(document)")
                }
                blackHole(document)
            case .getBytes:
                let output = try await client.getBytes(path: .init(n: Self.byteCount))
                guard case .ok(let ok) = output else { throw HarnessError("getBytes answered \(output)") }
                var count = 0
                for try await chunk in try ok.body.binary {
                    count += chunk.count
                }
                guard count == Self.byteCount else { throw HarnessError("getBytes read \(count) bytes") }
            }
        }
    }

    /// The generated client on `transport`, over `harness`'s Kite session or AHC client.
    static func client(_ transport: Transport, on harness: Harness) throws -> GeneratedOpenAPIClient.Client {
        guard let serverURL = URL(string: harness.baseURL) else { throw HarnessError("not a URL: \(harness.baseURL)") }
        switch transport {
        case .kite:
            return GeneratedOpenAPIClient.Client(
                serverURL: serverURL,
                transport: KiteClientTransport(session: try harness.kite)
            )
        case .ahc:
            return GeneratedOpenAPIClient.Client(
                serverURL: serverURL,
                transport: AsyncHTTPClientTransport(configuration: .init(client: try harness.ahc))
            )
        }
    }

    /// Kite's throughput as a percentage of AHC's, both through the generated client; larger is better.
    static let percentOfAHC = BenchmarkMetric.custom(
        "kiteOpenAPIThroughputPercentOfAHC",
        polarity: .prefersLarger,
        useScalingFactor: false
    )
    /// The transports' rates in the same iteration (the medians over its rounds), requests per second.
    static let kiteRate = BenchmarkMetric.custom(
        "kiteClientTransportRequestsPerSecond",
        polarity: .prefersLarger,
        useScalingFactor: false
    )
    static let ahcRate = BenchmarkMetric.custom(
        "asyncHTTPClientTransportRequestsPerSecond",
        polarity: .prefersLarger,
        useScalingFactor: false
    )

    /// Rounds of blocks per iteration of the interleaved case.
    static let rounds = 5

    /// One block of `operation` with `client`: requests per second.
    static func block(
        _ operation: Operation,
        count: Int,
        with client: GeneratedOpenAPIClient.Client
    ) async throws -> Double {
        let start = ContinuousClock.now
        for _ in 0..<count {
            try await operation.perform(with: client)
        }
        let elapsed = start.duration(to: .now)
        return Double(count) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }

    /// `rounds` rounds of one block of `count` requests with each transport, the order rotating; returns each
    /// round's rates.
    static func turns(
        _ operation: Operation,
        count: Int,
        rounds: Int,
        clients: [Transport: GeneratedOpenAPIClient.Client]
    ) async throws -> [[Transport: Double]] {
        let transports = Transport.allCases
        var result: [[Transport: Double]] = []
        for round in 0..<rounds {
            let shift = round % transports.count
            var rates: [Transport: Double] = [:]
            for transport in transports[shift...] + transports[..<shift] {
                guard let client = clients[transport] else { throw HarnessError("no \(transport.rawValue) client") }
                rates[transport] = try await Self.block(operation, count: count, with: client)
            }
            result.append(rates)
        }
        return result
    }

    /// The median of `values` (the upper one of an even count).
    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? .nan : sorted[sorted.count / 2]
    }

    /// Registers case 9: each operation on each transport separately (one request per iteration, with
    /// `configuration`, the request cases' metrics), then the two transports interleaved.
    static func register(configuration: Benchmark.Configuration) {
        for operation in Operation.allCases {
            for transport in Transport.allCases {
                Benchmark(
                    "9 OpenAPI \(operation.label), sequential, server in another process (\(transport.rawValue))",
                    configuration: configuration
                ) { benchmark in
                    let client = try Self.client(transport, on: try await Harness.remote)
                    benchmark.startMeasurement()
                    for _ in benchmark.scaledIterations {
                        try await operation.perform(with: client)
                    }
                    benchmark.stopMeasurement()
                }
            }
        }
        let interleaved = Benchmark.Configuration(
            metrics: [Self.percentOfAHC, Self.kiteRate, Self.ahcRate],
            warmupIterations: 2,
            maxDuration: .seconds(60),
            maxIterations: 21
        )
        for operation in Operation.allCases {
            Benchmark(
                "9 OpenAPI \(operation.label), sequential, server in another process "
                    + "(KiteClientTransport % of AsyncHTTPClientTransport, interleaved)",
                configuration: interleaved
            ) { benchmark in
                let server = try await Harness.remote
                for _ in benchmark.scaledIterations {
                    let rounds = try await Interleaved.withFreshClients(of: server) { harness in
                        var clients: [Transport: GeneratedOpenAPIClient.Client] = [:]
                        for transport in Transport.allCases {
                            let client = try Self.client(transport, on: harness)
                            clients[transport] = client
                            // One untimed block each: the new clients open their connections.
                            _ = try await Self.block(operation, count: operation.block, with: client)
                        }
                        return try await Self.turns(
                            operation,
                            count: operation.block,
                            rounds: Self.rounds,
                            clients: clients
                        )
                    }
                    let percentages = rounds.map { 100 * ($0[.kite] ?? 0) / ($0[.ahc] ?? .nan) }
                    benchmark.measurement(Self.percentOfAHC, Int(Self.median(percentages).rounded()))
                    benchmark.measurement(Self.kiteRate, Int(Self.median(rounds.map { $0[.kite] ?? 0 }).rounded()))
                    benchmark.measurement(Self.ahcRate, Int(Self.median(rounds.map { $0[.ahc] ?? 0 }).rounded()))
                }
            }
        }
    }

    // MARK: A process of its own, for profiles

    /// The environment variable that makes this executable run one of case 9's jobs and exit, against a server
    /// process started by hand (BENCHMARKS.md, "Generated clients (KiteOpenAPI)"):
    ///
    /// - `getJSON KiteClientTransport http://127.0.0.1:PORT 20000`: that many calls one after another with one
    ///   transport (`getBytes`, `AsyncHTTPClientTransport` likewise), a profile of one side under `perf record`;
    ///   prints the rate.
    /// - `getJSON turns http://127.0.0.1:PORT 300`: the two transports taking turns, blocks of that many calls,
    ///   nine rounds after one untimed block each; prints each round's rates and the median ratio.
    static let variable = "KITE_BENCHMARK_OPENAPI_PROCESS"

    /// Runs the job and exits when ``variable`` is set; returns at once otherwise.
    static func runIfRequested() {
        ProcessJob.runIfRequested(Self.variable) { try await Self.perform($0) }
    }

    private static func perform(_ job: String) async throws {
        let words = job.split(separator: " ").map(String.init)
        guard words.count == 4, let operation = Operation(rawValue: words[0]), let count = Int(words[3]) else {
            throw HarnessError("not a job: \(job) (OPERATION TRANSPORT|turns SERVER_URL COUNT)")
        }
        let only = Transport(rawValue: words[1])
        guard only != nil || words[1] == "turns" else { throw HarnessError("no transport \(words[1])") }
        let clients: Set<Client> = only == .kite ? [.kite] : only == .ahc ? [.ahc] : [.kite, .ahc]
        let harness = try await Harness(serverURL: words[2], clients: clients)
        do {
            if let only {
                let rate = try await Self.block(operation, count: count, with: try Self.client(only, on: harness))
                print(String(format: "%@ %@: %d calls, %.0f req/s", operation.rawValue, only.rawValue, count, rate))
            } else {
                var clients: [Transport: GeneratedOpenAPIClient.Client] = [:]
                for transport in Transport.allCases {
                    let client = try Self.client(transport, on: harness)
                    clients[transport] = client
                    _ = try await Self.block(operation, count: count, with: client)
                }
                let rounds = try await Self.turns(operation, count: count, rounds: 9, clients: clients)
                for (index, rates) in rounds.enumerated() {
                    let kite = rates[.kite] ?? .nan
                    let ahc = rates[.ahc] ?? .nan
                    print(
                        String(
                            format: "round %d: KiteClientTransport %.0f req/s, AsyncHTTPClientTransport %.0f req/s, "
                                + "Kite at %.1f %%",
                            index + 1,
                            kite,
                            ahc,
                            100 * kite / ahc
                        )
                    )
                }
                let ratio = Self.median(rounds.map { 100 * ($0[.kite] ?? 0) / ($0[.ahc] ?? .nan) })
                print(String(format: "median: KiteClientTransport at %.1f %% of AsyncHTTPClientTransport", ratio))
            }
            try await harness.shutdown()
        } catch {
            try? await harness.shutdown()
            throw error
        }
    }
}
