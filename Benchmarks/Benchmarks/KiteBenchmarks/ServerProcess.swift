import Foundation
import KiteTestServer
import Synchronization

/// The test server in a process of its own, as users run servers: this executable started again with
/// ``variable`` set, serving `KiteTestServer` on a free loopback port until its standard input closes.
///
/// An in-process server shares the cooperative pool and the event loops with the client it serves, and so
/// distorts exactly what the request cases measure: a client's own work per request. The cases named
/// "server in another process" use this one; the others keep the in-process server, labelled as such.
final class ServerProcess: Sendable {
    /// The environment variable that makes this executable a server process.
    static let variable = "KITE_BENCHMARK_SERVER_PROCESS"

    /// The server's base URL, `http://127.0.0.1:PORT`.
    let baseURL: String
    // Process is not Sendable; it is only kept to stop the child, under the lock.
    private let process: Mutex<Process?>
    private let input: Pipe

    /// Serves and exits when this process is a server process; returns at once otherwise.
    static func runIfRequested() {
        guard ProcessInfo.processInfo.environment[Self.variable] != nil else { return }
        let port = Mutex<Int?>(nil)
        // The server, kept alive until the process exits.
        let running = Mutex<KiteTestServer?>(nil)
        let ready = DispatchSemaphore(value: 0)
        Task.detached {
            do {
                let server = try await KiteTestServer.start()
                running.withLock { $0 = server }
                port.withLock { $0 = URL(string: server.baseURL)?.port }
            } catch {
                FileHandle.standardError.write(Data("server process: \(error)\n".utf8))
            }
            ready.signal()
        }
        ready.wait()
        guard let port = port.withLock({ $0 }) else { exit(1) }
        FileHandle.standardOutput.write(Data("PORT \(port)\n".utf8))
        // Serve until the parent closes our standard input (or dies).
        while let chunk = try? FileHandle.standardInput.read(upToCount: 4096), !chunk.isEmpty {}
        withExtendedLifetime(running) { exit(0) }
    }

    /// Starts the server process and waits for its port.
    static func start() throws -> ServerProcess {
        let executable = URL(
            fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        )
        var environment = ProcessInfo.processInfo.environment
        environment[Self.variable] = "1"
        environment.removeValue(forKey: ClientProcess.variable)
        let process = Process()
        process.executableURL = executable
        process.arguments = []
        process.environment = environment
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        var line = Data()
        while line.count < 64, let byte = try output.fileHandleForReading.read(upToCount: 1), !byte.isEmpty {
            if byte == Data("\n".utf8) { break }
            line.append(byte)
        }
        let text = String(decoding: line, as: UTF8.self)
        guard text.hasPrefix("PORT "), let port = Int(text.dropFirst(5)) else {
            process.terminate()
            throw HarnessError("the server process did not start (printed \"\(text)\")")
        }
        return ServerProcess(baseURL: "http://127.0.0.1:\(port)", process: process, input: input)
    }

    private init(baseURL: String, process: Process, input: Pipe) {
        self.baseURL = baseURL
        self.process = Mutex(process)
        self.input = input
    }

    /// Stops the server process.
    func stop() {
        try? self.input.fileHandleForWriting.close()
        self.process.withLock { process in
            if process?.isRunning == true { process?.terminate() }
            process = nil
        }
    }
}
