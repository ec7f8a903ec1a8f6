import Dispatch
import Foundation
import KiteTestServer
import NIOConcurrencyHelpers
import Testing

/// The built `kite` executable, run as a user runs it.
@Suite(.serialized) struct CommandLineTests {
    struct Run {
        let status: Int32
        let output: String
        let errors: String
    }

    /// `.build/<config>/kite`, next to the test bundle.
    static var executable: URL { ChildProcess.executable(named: "kite") }

    static func kite(_ arguments: String...) async throws -> Run {
        try await Self.kite(arguments: arguments)
    }

    static func kite(arguments: [String]) async throws -> Run {
        try await offThePool { try Self.run(arguments) }
    }

    /// Runs `kite` with `arguments` and waits for it (blocking the calling thread: call it off the pool).
    static func run(_ arguments: [String]) throws -> Run {
        let child = try ChildProcess.run(Self.executable, arguments)
        return Run(status: child.status, output: child.output, errors: child.errors)
    }

    @Test func theTourRunsOfflineAndExitsZero() async throws {
        let run = try await Self.kite("tour")
        #expect(run.status == 0, "\(run.output)\n\(run.errors)")
        #expect(run.output.contains("Tour complete: every step behaved as described."))
        #expect(run.output.contains("-> error (responseValidationFailed)"))
        #expect(run.output.contains("landed on http://127.0.0.1:"))
        #expect(run.output.contains("failed: the total timeout (1 s) expired"))
        #expect(run.output.contains("ids as they arrived: [0, 1, 2]"))
        #expect(run.output.contains("cancelled together by cancelAllRequests\n   cancelled, cancelled"))
        #expect(run.output.contains("-> 200, hit (age "))
        #expect(run.output.contains("-> 200, revalidated (304)"))
    }

    @Test func cacheKeepsResponsesOnDiskAcrossRunsAndProcesses() async throws {
        let server = try await KiteTestServer.start()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kite-cli-cache-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = UUID().uuidString
        let url = "\(server.baseURL)/cached/\(key)?Cache-Control=max-age%3D60"
        let first = try await Self.kite("--cache", directory.path, url)
        let second = try await Self.kite("--cache", directory.path, url)
        #expect(first.status == 0, "\(first.errors)")
        #expect(first.errors == "kite: cache: network\n")
        #expect(second.errors.hasPrefix("kite: cache: hit (age "), "\(second.errors)")
        #expect(second.output.contains("\nAge: "))
        #expect(Self.body(second.output) == Self.body(first.output), "the stored body, printed the same")
        #expect(Self.body(first.output).contains(#""count" : 1"#) || Self.body(first.output).contains(#""count": 1"#))
        // Four processes at once on one directory, two URLs: every run answers, each URL was fetched at most
        // once per process, and the directory then holds only complete entries.
        let urls = (0..<2).map { "\(server.baseURL)/cached/\(key)-\($0)?Cache-Control=max-age%3D60&_size=50000" }
        let runs = try await withThrowingTaskGroup(of: Run.self) { group in
            for index in 0..<4 {
                group.addTask { try await Self.kite("--cache", directory.path, urls[index % 2]) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(runs.allSatisfy { $0.status == 0 && $0.output.hasPrefix("HTTP 200 OK\n") }, "\(runs.map(\.errors))")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        let heads = names.filter { $0.hasSuffix(".head") }
        #expect(heads.count >= 3, "\(names)")
        for head in heads {
            struct Head: Decodable { let bodyLength: Int }
            let stored = try JSONDecoder().decode(
                Head.self,
                from: try Data(contentsOf: directory.appendingPathComponent(head))
            )
            let body = directory.appendingPathComponent(head.replacingOccurrences(of: ".head", with: ".body"))
            let size = try FileManager.default.attributesOfItem(atPath: body.path)[.size] as? Int
            #expect(size == stored.bodyLength, "\(head)")
        }
        #expect(!names.contains { $0.hasSuffix(".partial") }, "\(names)")
        let hit = try await Self.kite("--cache", directory.path, urls[0])
        #expect(hit.errors.hasPrefix("kite: cache: hit"), "\(hit.errors)")
        try await server.shutdown()
    }

    /// What `kite` printed after the header fields.
    static func body(_ output: String) -> Substring {
        output.range(of: "\n\n").map { output[$0.upperBound...] } ?? ""
    }

    @Test func oneRequestPrintsStatusHeadersAndPrettyJSON() async throws {
        let server = try await KiteTestServer.start()
        let run = try await Self.kite("GET", "\(server.baseURL)/get", "q==swift nio", "X-Trace:abc")
        try await server.shutdown()
        #expect(run.status == 0, "\(run.errors)")
        #expect(run.output.hasPrefix("HTTP 200 OK\n"))
        #expect(run.output.contains("Content-Type: application/json"))
        #expect(run.output.contains(#""q": "swift nio""#))
        #expect(run.output.contains(#""X-Trace": "abc""#))
        #expect(run.output.contains(#""url": "\#(server.baseURL)/get?q=swift%20nio""#))
    }

    @Test func dataItemsArePostedAsJSON() async throws {
        let server = try await KiteTestServer.start()
        let run = try await Self.kite("\(server.baseURL)/post", "name=kite", "size:=3", "tags:=[\"a\"]")
        try await server.shutdown()
        #expect(run.status == 0, "\(run.errors)")
        #expect(run.output.contains(#""data": "{\"name\":\"kite\",\"size\":3,\"tags\":[\"a\"]}""#))
    }

    @Test func aFailedRequestExitsOneWithTheErrorMessage() async throws {
        let port = try Self.refusingPort()
        let run = try await Self.kite("http://127.0.0.1:\(port)/x")
        #expect(run.status == 1)
        #expect(
            run.errors
                == "kite: GET http://127.0.0.1:\(port)/x failed: could not connect to 127.0.0.1:\(port): connection refused\n"
        )
    }

    @Test func checkStatusTurnsErrorStatusesIntoExitCodes() async throws {
        let server = try await KiteTestServer.start()
        let notFound = try await Self.kite("--check-status", "\(server.baseURL)/status/404")
        let plain = try await Self.kite("\(server.baseURL)/status/404")
        try await server.shutdown()
        #expect(notFound.status == 4)
        #expect(plain.status == 0)
        #expect(plain.output.hasPrefix("HTTP 404 Not Found\n"))
    }

    @Test func badItemsAreUsageErrors() async throws {
        let run = try await Self.kite("http://127.0.0.1:1/", "nosep")
        #expect(run.status == 64)
        #expect(run.errors.contains(#"item "nosep" has none of the separators"#))
    }

    @Test func serveListensUntilStopped() async throws {
        let text = try await Self.firstLineOfServe("serve", "--port", "0")
        #expect(
            text.wholeMatch(of: #/Kite test server listening on http://127\.0\.0\.1:\d+ \(Ctrl-C to stop\)/#) != nil,
            "\(text)"
        )
    }

    @Test func serveTLSNamesTheRootCertificateItWrote() async throws {
        let text = try await Self.firstLineOfServe("serve", "--tls", "--port", "0")
        #expect(text.hasPrefix("Kite test server listening on https://127.0.0.1:"))
        let match = text.wholeMatch(of: #/.+ https://127\.0\.0\.1:\d+ \(CA: (?<path>/.+/root\.pem); Ctrl-C to stop\)/#)
        let path = try #require(match?.output.path, "\(text)")
        let pem = try String(contentsOfFile: String(path), encoding: .utf8)
        #expect(pem.hasPrefix("-----BEGIN CERTIFICATE-----\n"))
        try FileManager.default.removeItem(atPath: URL(fileURLWithPath: String(path)).deletingLastPathComponent().path)
    }

    /// Runs `kite` with `arguments` and returns the first line it prints, then stops it.
    static func firstLineOfServe(_ arguments: String...) async throws -> String {
        try await offThePool { try Self.firstLineOfServe(arguments) }
    }

    private static func firstLineOfServe(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = Self.executable
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        defer {
            process.terminate()
            process.waitUntilExit()
        }
        // Read the first line on another thread; give up (and stop the server) after 20 s.
        let line = NIOLockedValueBox(Data())
        let done = DispatchSemaphore(value: 0)
        let handle = output.fileHandleForReading
        DispatchQueue.global().async {
            for _ in 0..<500 {
                let byte = handle.readData(ofLength: 1)
                if byte.isEmpty || byte == Data("\n".utf8) { break }
                line.withLockedValue { $0.append(byte) }
            }
            done.signal()
        }
        if done.wait(timeout: .now() + 20) == .timedOut {
            process.terminate()
            _ = done.wait(timeout: .now() + 5)
        }
        return String(decoding: line.withLockedValue { $0 }, as: UTF8.self)
    }

    /// A loopback port that refuses connections for the rest of the test process: bound, never
    /// listening, and kept open, so no server started meanwhile can be given it.
    static func refusingPort() throws -> Int {
        #if canImport(Glibc)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #else
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        // The descriptor is deliberately never closed.
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
