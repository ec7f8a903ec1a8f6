import Benchmark
import Foundation
import Kite

// Kite against raw async-http-client and URLSession, side by side in one run, on the in-process
// KiteTestServer. Each benchmark runs in its own process (package-benchmark's default), so peak
// resident memory is per benchmark; it includes the in-process server, which is the same for
// every client. See BENCHMARKS.md for how to run them and the results.

/// One GiB, the size of the download and upload cases.
let gibibyte = 1 << 30

/// A small GET: 128 bytes from the in-process server.
let smallPath = "/bytes/128"

/// About 1 MB of JSON: 8,000 records.
let recordsPath = "/records/8000"

/// One record of `/records/{n}`.
struct Record: Decodable, Sendable {
    let id: Int
    let name: String
    let email: String
    let active: Bool
    let score: Double
    let tags: [String]
}

/// The clients compared.
enum Client: String, CaseIterable {
    case kite = "Kite"
    case ahc = "AHC"
    /// Raw AHC inside one `Task { }` per request that the caller awaits: the two task hops every design with
    /// a task per request pays (Kite has one so that `cancel()` works), so the ceiling shows in every run.
    case ahcInTask = "AHC in a Task"
    case urlSession = "URLSession"

    /// The clients of the transfer and decoding cases (3 to 5).
    static let transferClients: [Client] = [.kite, .ahc, .urlSession]
}

/// The benchmarks package-benchmark finds and runs.
let benchmarks: @Sendable () -> Void = {
    // Cases 4 and 5 start this executable again as a client process, and the "server in another process"
    // cases start it as a server process; either does its job and exits here.
    ClientProcess.runIfRequested()
    ServerProcess.runIfRequested()
    OpenAPICases.runIfRequested()

    // Temporary files in RAM when there is /dev/shm, as the scratch folder is (Harness): URLSession downloads into
    // a temporary file, as Kite did before it staged a download beside its destination, and the disk would be
    // measured, not the client (and Kite's move across file systems was a copy: 1 GiB from /tmp on disk to
    // /dev/shm took 1.1 s here).
    if FileManager.default.isWritableFile(atPath: "/dev/shm") {
        setenv("TMPDIR", "/dev/shm", 1)
    }

    Benchmark.setup = { try await Harness.start() }
    Benchmark.teardown = {
        try await CacheCases.stop()
        try await Harness.stop()
    }

    let requestMetrics: [BenchmarkMetric] = [.throughput, .wallClock, .mallocCountTotal, .peakMemoryResident]
    let transferMetrics: [BenchmarkMetric] = [.throughput, .wallClock, .peakMemoryResident]

    /// A client process's peak resident memory at most 64 MiB, checked by `swift package benchmark
    /// thresholds check` against the static thresholds in `Thresholds/`.
    let clientPeakMemoryLimit: [BenchmarkMetric: BenchmarkThresholds] = [
        ClientProcess.peakResident: BenchmarkThresholds(absolute: [.p90: 0])
    ]

    let requestConfiguration = Benchmark.Configuration(
        metrics: requestMetrics,
        warmupIterations: 10,
        maxDuration: .seconds(3),
        maxIterations: 20_000
    )

    // 1. Small GET, one at a time; 2. 64 in flight (one iteration is 64 concurrent requests). Each with the
    // server in another process (as users run servers) and with the in-process server.
    for remote in [true, false] {
        let server = remote ? "server in another process" : "in-process server"
        for client in Client.allCases {
            Benchmark("1 small GET, sequential, \(server) (\(client.rawValue))", configuration: requestConfiguration) {
                benchmark in
                let harness = remote ? try await Harness.remote : try Harness.shared
                benchmark.startMeasurement()
                for _ in benchmark.scaledIterations {
                    try await harness.smallGet(with: client)
                }
                benchmark.stopMeasurement()
            }
        }
        for client in Client.allCases {
            Benchmark("2 small GET, 64 in flight, \(server) (\(client.rawValue))", configuration: requestConfiguration)
            {
                benchmark in
                let harness = remote ? try await Harness.remote : try Harness.shared
                benchmark.startMeasurement()
                for _ in benchmark.scaledIterations {
                    try await harness.smallGets64(with: client)
                }
                benchmark.stopMeasurement()
            }
        }
    }

    // 1 and 2 again: Kite's (and AHC in a Task's) throughput as a percentage of raw AHC's, the clients taking
    // turns in one process.
    Interleaved.register()

    // 3. GET and decode 1 MB of JSON into Decodable values.
    for client in Client.transferClients {
        Benchmark("3 GET + decode 1 MB JSON (\(client.rawValue))", configuration: requestConfiguration) { benchmark in
            let harness = try Harness.shared
            for _ in benchmark.scaledIterations {
                let records: [Record]
                switch client {
                case .kite: records = try await harness.kiteDecode([Record].self, recordsPath)
                case .ahc: records = try await harness.ahcDecode([Record].self, recordsPath)
                case .urlSession: records = try await harness.urlSessionDecode([Record].self, recordsPath)
                case .ahcInTask: throw HarnessError("case 3 has no AHC-in-a-Task client")
                }
                guard records.count == 8000, records[7999].email == "user7999@example.com" else {
                    throw HarnessError("\(client): decoded \(records.count) records")
                }
                blackHole(records)
            }
        }
    }

    /// Cases 4 and 5; a client process's peak memory is a metric of its own, limited for Kite.
    func transferConfiguration(ownProcess: Bool, limited: Bool) -> Benchmark.Configuration {
        Benchmark.Configuration(
            metrics: ownProcess ? transferMetrics + [ClientProcess.peakResident] : transferMetrics,
            warmupIterations: 1,
            maxDuration: .seconds(20),
            maxIterations: 5,
            thresholds: ownProcess && limited ? clientPeakMemoryLimit : nil
        )
    }

    // 4. Download 1 GiB to a file. Kite and AHC run twice: in the benchmark process, and in a client
    // process of their own (as curl does), whose peak resident memory is theirs alone.
    let downloadPath = "/bytes/\(gibibyte)"
    let downloads: [(String, @Sendable (Harness) async throws -> (bytes: Int64, peakResident: Int?))] = [
        ("Kite", { (try await $0.download(downloadPath, with: .kite), nil) }),
        ("AHC FileDownloadDelegate", { (try await $0.download(downloadPath, with: .ahc), nil) }),
        ("Kite, own process", { try await ClientProcess.run(.download, with: .kite, downloadPath, on: $0) }),
        (
            "AHC FileDownloadDelegate, own process",
            { try await ClientProcess.run(.download, with: .ahc, downloadPath, on: $0) }
        ),
        ("curl -o", { (try await $0.curlDownload(downloadPath), nil) }),
        ("URLSession", { (try await $0.download(downloadPath, with: .urlSession), nil) }),
    ]
    // The same with the server in another process, as users run servers; AHC here streams the body into a
    // FileHandle (its async API), the plain way to download with it.
    let remoteDownloads: [(String, @Sendable (Harness) async throws -> Int64)] = [
        ("Kite", { try await $0.download(downloadPath, with: .kite) }),
        ("AHC streaming into a FileHandle", { try await $0.ahcStreamingDownload(downloadPath) }),
        ("curl -o", { try await $0.curlDownload(downloadPath) }),
    ]
    for (name, download) in remoteDownloads {
        Benchmark(
            "4 download 1 GiB to a file, server in another process (\(name))",
            configuration: transferConfiguration(ownProcess: false, limited: false)
        ) { benchmark in
            let harness = try await Harness.remote
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                let size = try await download(harness)
                guard size == gibibyte else { throw HarnessError("\(name): downloaded \(size) bytes") }
            }
            benchmark.stopMeasurement()
        }
    }
    for (name, download) in downloads {
        Benchmark(
            "4 download 1 GiB to a file (\(name))",
            configuration: transferConfiguration(
                ownProcess: name.hasSuffix("own process"),
                limited: name.hasPrefix("Kite")
            )
        ) { benchmark in
            let harness = try Harness.shared
            for _ in benchmark.scaledIterations {
                let (size, peakResident) = try await download(harness)
                guard size == gibibyte else { throw HarnessError("\(name): downloaded \(size) bytes") }
                if let peakResident {
                    benchmark.measurement(ClientProcess.peakResident, peakResident)
                }
            }
        }
    }

    // 5. Upload a 1 GiB file as a multipart part; the server reads it and hashes it (SHA-256).
    let uploads: [(String, @Sendable (Harness, URL) async throws -> (bytes: Int64, peakResident: Int?))] = [
        ("Kite", { (try await $0.upload($1, with: .kite), nil) }),
        ("AHC", { (try await $0.upload($1, with: .ahc), nil) }),
        ("Kite, own process", { try await ClientProcess.run(.upload, with: .kite, $1.path, on: $0) }),
        ("AHC, own process", { try await ClientProcess.run(.upload, with: .ahc, $1.path, on: $0) }),
    ]
    for (name, upload) in uploads {
        Benchmark(
            "5 multipart upload 1 GiB from a file (\(name))",
            configuration: transferConfiguration(
                ownProcess: name.hasSuffix("own process"),
                limited: name.hasPrefix("Kite")
            )
        ) { benchmark in
            let harness = try Harness.shared
            // A sparse file: 1 GiB long without 1 GiB on disk.
            let fileURL = harness.scratchFile("upload")
            guard FileManager.default.createFile(atPath: fileURL.path, contents: nil) else {
                throw HarnessError("cannot create \(fileURL.path)")
            }
            let handle = try FileHandle(forWritingTo: fileURL)
            try handle.truncate(atOffset: UInt64(gibibyte))
            try handle.close()
            defer { try? FileManager.default.removeItem(at: fileURL) }
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                let (size, peakResident) = try await upload(harness, fileURL)
                guard size == gibibyte else { throw HarnessError("\(name): server read \(size) bytes") }
                if let peakResident {
                    benchmark.measurement(ClientProcess.peakResident, peakResident)
                }
            }
            benchmark.stopMeasurement()
        }
    }

    // 6. Encoding without the network.
    let encodingConfiguration = Benchmark.Configuration(
        metrics: [.throughput, .wallClock, .mallocCountTotal, .peakMemoryResident],
        warmupIterations: 2,
        maxDuration: .seconds(3),
        maxIterations: 1_000
    )
    Benchmark("6 URL-encode 10,000 nested parameters (Kite)", configuration: encodingConfiguration) { benchmark in
        let parameters = nestedParameters()
        guard let url = URL(string: "http://127.0.0.1/search") else { throw HarnessError("bad URL") }
        let base = RequestDraft(url: url)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            let encoded = try URLEncoding.queryString.encode(base, with: parameters)
            blackHole(encoded.url)
        }
        benchmark.stopMeasurement()
    }
    Benchmark("6 multipart-encode 100 x 1 MB parts to memory (Kite)", configuration: encodingConfiguration) {
        benchmark in
        let parts = (0..<100).map { index in Data(repeating: UInt8(truncatingIfNeeded: index), count: 1_000_000) }
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            var form = MultipartFormData()
            for (index, part) in parts.enumerated() {
                form.append(part, withName: "part\(index)", fileName: "part\(index).bin")
            }
            let encoded = try form.encode()
            guard encoded.count == Int(form.contentLength) else {
                throw HarnessError("encoded \(encoded.count) bytes, contentLength \(form.contentLength)")
            }
            blackHole(encoded)
        }
        benchmark.stopMeasurement()
    }

    // 7. A small GET answered by the response cache (memory tier; disk tier alone, on disk and in RAM), beside the
    // same GET to the server in another process without a cache, and raw AHC; every answer's cache status checked.
    CacheCases.register(configuration: requestConfiguration)

    // 8. 1 GiB downloaded through the cache's disk tier and read back, by a client process of its own, whose peak
    // resident memory is limited to 64 MiB like case 4's. Against the in-process server, as case 4's client process.
    // Again with a 10 MiB memory tier in front of the disk tier (ResponseCache's default memory capacity), not limited:
    // it shows what the memory tier adds while large responses stream through it (BENCHMARKS.md).
    let fillCount = gibibyte / CacheCases.fillEntrySize
    let fills: [(name: String, memoryMiB: Int)] = [
        ("8 cache fill 1 GiB through the disk tier (Kite, own process)", 0),
        ("8 cache fill 1 GiB through the disk tier, 10 MiB memory tier in front (Kite, own process)", 10),
    ]
    for fill in fills {
        Benchmark(
            fill.name,
            configuration: Benchmark.Configuration(
                metrics: transferMetrics + [ClientProcess.peakResident],
                warmupIterations: 1,
                maxDuration: .seconds(90),
                maxIterations: 5,
                thresholds: fill.memoryMiB == 0 ? clientPeakMemoryLimit : nil
            )
        ) { benchmark in
            let harness = try Harness.shared
            for _ in benchmark.scaledIterations {
                let (size, peakResident) = try await ClientProcess.run(
                    .cacheFill,
                    with: .kite,
                    "\(fillCount) \(fill.memoryMiB)",
                    on: harness
                )
                guard size == gibibyte else { throw HarnessError("cache fill: stored \(size) bytes") }
                benchmark.measurement(ClientProcess.peakResident, peakResident)
            }
        }
    }

    // 9. The client swift-openapi-generator made from Scripts/openapi/openapi.yaml on KiteClientTransport and on
    // AsyncHTTPClientTransport, server in another process: each alone, and the two taking turns.
    OpenAPICases.register(configuration: requestConfiguration)
}

/// 10,000 leaf parameters: 1,000 users, each with 10 values in nested dictionaries and arrays.
func nestedParameters() -> Parameters {
    var parameters: Parameters = [:]
    for index in 0..<1_000 {
        let user: [String: any Sendable] = [
            "name": "user \(index)",
            "email": "user\(index)@example.com",
            "admin": index % 7 == 0,
            "address": ["street": "\(index) Main St", "city": "Zürich", "zip": 8000 + index] as [String: any Sendable],
            "roles": ["reader", "writer", "owner & co"],
            "score": Double(index) / 3,
        ]
        parameters["user\(index)"] = user
    }
    return parameters
}
