import Foundation
import Testing

/// The fault-injection server (`Tests/FaultServer/fault_server.py`, python's standard library only):
/// one route per misbehaviour a hostile or unlucky server shows. Started once per test run as a
/// child process on a free loopback port; it exits when its standard input closes, so it dies with
/// the test process. ``shared`` serves most tests; a test that counts connections starts its own.
actor FaultServer {
    static let shared = FaultServer()

    /// The port, once started.
    private(set) var port: Int?

    private var starting: Task<Started, any Error>?

    // @unchecked: set once at start and never mutated afterwards; Process is only kept alive.
    private struct Started: @unchecked Sendable {
        let baseURL: String
        let port: Int
        // Kept so the pipe (and the server's standard input) stays open for the whole run.
        let process: Process
        let input: Pipe
    }

    /// The base URL without a trailing slash, such as `http://127.0.0.1:54321`.
    func baseURL() async throws -> String {
        let starting = self.starting ?? Task { try await Self.startOffThePool() }
        self.starting = starting
        let started = try await starting.value
        self.port = started.port
        return started.baseURL
    }

    /// Stops the server process (the shared one lives as long as the test process).
    func stop() async {
        guard let started = try? await self.starting?.value else { return }
        // The server exits when its standard input closes; terminate() is the fallback. Not
        // waitUntilExit(): on Linux it spins a run loop, which can block a cooperative thread.
        try? started.input.fileHandleForWriting.close()
        started.process.terminate()
    }

    /// `base + path`.
    static func url(_ path: String) async throws -> String {
        try await Self.shared.baseURL() + path
    }

    private static var scriptURL: URL {
        // The file itself, not a link to it (KiteOpenAPITests and TSan/Package.swift compile it through links).
        URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
            .deletingLastPathComponent()  // Support
            .deletingLastPathComponent()  // KiteTests
            .deletingLastPathComponent()  // Tests
            .appendingPathComponent("FaultServer/fault_server.py")
    }

    /// Runs ``start()`` on a thread of its own. It waits for the server's first line with blocking reads, and python
    /// takes seconds to start on a loaded machine: on the cooperative pool, the shared server's start and a test's
    /// own held both of its threads (two on CI), and every other test stood still, its timeouts reported 10–60 s
    /// late (a stack dump of a parallel run, 2026-11-29).
    private static func startOffThePool() async throws -> Started {
        try await offThePool { try Self.start() }
    }

    private static func start() throws -> Started {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", Self.scriptURL.path]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.runAndReap()
        // The first line is `PORT <n>`; read it byte by byte (bounded) so nothing more is consumed.
        var line = Data()
        let handle = output.fileHandleForReading
        while line.count < 64 {
            guard let byte = try handle.read(upToCount: 1), !byte.isEmpty else { break }
            if byte == Data("\n".utf8) { break }
            line.append(byte)
        }
        let text = String(decoding: line, as: UTF8.self)
        guard text.hasPrefix("PORT "), let port = Int(text.dropFirst(5)) else {
            process.terminate()
            throw FaultServerError(message: "the fault server did not start (printed \"\(text)\")")
        }
        return Started(baseURL: "http://127.0.0.1:\(port)", port: port, process: process, input: input)
    }
}

struct FaultServerError: Error, CustomStringConvertible {
    let message: String
    var description: String { self.message }
}
