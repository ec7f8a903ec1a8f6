import Foundation
import NIOConcurrencyHelpers
import Testing

/// A real forward proxy in a child process, on a free loopback port: tinyproxy (Debian's package) for HTTP
/// proxies with `CONNECT` and Basic authentication, Squid (Debian's package, its default configuration) as users
/// meet it, pproxy (PyPI, in `.venv`) for SOCKS5. Each test starts its own, so the proxy's log holds that test's
/// requests only. `.ci/run` installs all three; elsewhere the suites are skipped when one is missing, unless
/// `KITE_REQUIRE_PROXIES=1` (as in CI) makes that a failure.
final class ProxyProcess: Sendable {
    enum Kind: Sendable {
        /// tinyproxy, asking for `user`/`password` when given; with `connectPorts`, `CONNECT` is allowed to those
        /// ports only (its sample configuration's `ConnectPort 443` and `ConnectPort 563`), else to every port.
        case tinyproxy(user: String?, password: String?, connectPorts: [Int] = [])
        /// pproxy serving SOCKS5.
        case socks5
        /// Squid with Debian's default configuration (`/etc/squid/squid.conf`: `CONNECT` to port 443 only, plain
        /// `http` to "safe" ports, clients on localhost only), listening on a free loopback port instead of 3128,
        /// its files in the proxy's folder.
        case squid
        /// nginx (Debian's package) as an origin server, not a proxy: serves the files of `root` with its defaults
        /// (`ETag`, `Last-Modified`, conditional requests answered with `304`).
        case nginx(root: URL)
    }

    let port: Int
    private let process: ProcessBox
    private let output: OutputLines

    // @unchecked: the Process is only started; it is kept for the life of the proxy.
    private struct ProcessBox: @unchecked Sendable {
        let process: Process
        let directory: URL
    }

    /// The proxy runs under a shell that kills it when ``stop()`` removes the proxy's folder, or when this
    /// process is gone (the shell's parent changes). A test process may end without running deinitializers,
    /// and signals cannot stop the shell: it inherits the signal mask of the thread that started it, where
    /// SIGTERM is blocked. The shell checks five times a second. It asks the server to stop first (SIGTERM, which
    /// nginx unblocks and answers by stopping its workers; a server that keeps it blocked gets SIGKILL 2 s later):
    /// SIGKILL alone left nginx's workers running after their master, two more with every test run.
    private static let watcher =
        "\"$0\" \"$@\" & child=$!; parent=$PPID; "
        + "while [ -d \"$KITE_PROXY_FOLDER\" ] && [ \"$(cut -d' ' -f4 /proc/$$/stat)\" = \"$parent\" ]; "
        + "do sleep 0.2; done; kill $child; (sleep 2; kill -9 $child 2>/dev/null) & wait $child"

    static var tinyproxyPath: String? {
        ["/usr/bin/tinyproxy", "/usr/sbin/tinyproxy", "/usr/local/bin/tinyproxy"].first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }

    static var nginxPath: String? {
        ["/usr/sbin/nginx", "/usr/bin/nginx"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    static var squidPath: String? {
        ["/usr/sbin/squid", "/usr/bin/squid"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    static var pproxyPath: String? {
        // The file itself, not a link to it (TSan/Package.swift compiles this folder through a link).
        let path = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
            .deletingLastPathComponent()  // Support
            .deletingLastPathComponent()  // KiteTests
            .deletingLastPathComponent()  // Tests
            .deletingLastPathComponent()  // package
            .appendingPathComponent(".venv/bin/pproxy").path
        return FileManager.default.isExecutableFile(atPath: path) ? path : nil
    }

    /// Whether the proxy tests run: the programs exist, or CI requires them (and then they fail loudly).
    static var tinyproxyAvailable: Bool { Self.tinyproxyPath != nil || Self.required }
    static var pproxyAvailable: Bool { Self.pproxyPath != nil || Self.required }
    static var squidAvailable: Bool { Self.squidPath != nil || Self.required }
    static var nginxAvailable: Bool { Self.nginxPath != nil || Self.required }
    private static var required: Bool { ProcessInfo.processInfo.environment["KITE_REQUIRE_PROXIES"] == "1" }

    /// Starts the proxy and waits until it accepts connections (its own "ready" line, at most 10 s).
    static func start(_ kind: Kind) async throws -> ProxyProcess {
        // A free port can be taken between choosing it and the proxy's bind: try a few.
        var lastError: (any Error)?
        for _ in 0..<3 {
            do {
                return try await ProxyProcess(kind, port: try Sockets.freePort())
            } catch {
                lastError = error
            }
        }
        throw lastError ?? ProxyProcessError(message: "the proxy did not start")
    }

    private init(_ kind: Kind, port: Int) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kite-proxy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let process = Process()
        let ready: String
        switch kind {
        case .tinyproxy(let user, let password, let connectPorts):
            let path = try #require(Self.tinyproxyPath, "tinyproxy is not installed (apt-get install tinyproxy)")
            var lines = [
                "Port \(port)", "Listen 127.0.0.1", "Timeout 30", "LogLevel Info", "MaxClients 64",
                "Allow 127.0.0.1", "DisableViaHeader Yes",
            ]
            if let user, let password { lines.append("BasicAuth \(user) \(password)") }
            lines += connectPorts.map { "ConnectPort \($0)" }
            let configuration = directory.appendingPathComponent("tinyproxy.conf")
            try (lines.joined(separator: "\n") + "\n").write(to: configuration, atomically: true, encoding: .utf8)
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            // -d: stay in the foreground and log to standard error.
            process.arguments = ["-c", Self.watcher, path, "-d", "-c", configuration.path]
            ready = "Starting main loop"
        case .squid:
            let path = try #require(Self.squidPath, "squid is not installed (apt-get install squid)")
            // Squid drops root for its `proxy` user, which must write the folder; its access log goes there (it
            // cannot reopen this process's pipe as that user).
            try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: directory.path)
            let debian = try String(contentsOfFile: "/etc/squid/squid.conf", encoding: .utf8)
            let lines = debian.split(separator: "\n", omittingEmptySubsequences: false).map { line in
                line.hasPrefix("http_port ") ? "http_port 127.0.0.1:\(port)" : String(line)
            }
            let folder = directory.path
            let own = [
                "pid_filename \(folder)/squid.pid", "access_log stdio:\(folder)/access.log",
                "cache_log stdio:\(folder)/cache.log", "coredump_dir \(folder)",
            ]
            let configuration = directory.appendingPathComponent("squid.conf")
            let text = (lines + own).joined(separator: "\n") + "\n"
            try text.write(to: configuration, atomically: true, encoding: .utf8)
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            // -N: stay in the foreground; -d 1: say on standard error when it accepts connections.
            process.arguments = ["-c", Self.watcher, path, "-N", "-d", "1", "-f", configuration.path]
            ready = "Accepting HTTP Socket connections"
        case .nginx(let root):
            let path = try #require(Self.nginxPath, "nginx is not installed (apt-get install nginx)")
            // Its workers run as `nobody` when started by root: the folder must be theirs to read and write.
            try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: directory.path)
            let folder = directory.path
            let text = """
                worker_processes 1;
                pid \(folder)/nginx.pid;
                error_log stderr notice;
                events { worker_connections 256; }
                http {
                    access_log off;
                    client_body_temp_path \(folder)/body;
                    proxy_temp_path \(folder)/proxy;
                    fastcgi_temp_path \(folder)/fastcgi;
                    uwsgi_temp_path \(folder)/uwsgi;
                    scgi_temp_path \(folder)/scgi;
                    server {
                        listen 127.0.0.1:\(port);
                        root \(root.path);
                    }
                }

                """
            let configuration = directory.appendingPathComponent("nginx.conf")
            try text.write(to: configuration, atomically: true, encoding: .utf8)
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = [
                "-c", Self.watcher, path, "-p", folder, "-e", "stderr", "-c", configuration.path, "-g", "daemon off;",
            ]
            ready = "start worker process"
        case .socks5:
            let path = try #require(Self.pproxyPath, "pproxy is not installed (.venv/bin/pip install pproxy)")
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", Self.watcher, path, "-l", "socks5://127.0.0.1:\(port)", "-v"]
            process.environment = ["PYTHONUNBUFFERED": "1", "PATH": "/usr/bin:/bin"]
            ready = "Serving on"
        }
        var environment = process.environment ?? ProcessInfo.processInfo.environment
        environment["KITE_PROXY_FOLDER"] = directory.path
        process.environment = environment
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = FileHandle.nullDevice
        let output = OutputLines(pipe.fileHandleForReading)
        try process.runAndReap()
        self.port = port
        self.process = ProcessBox(process: process, directory: directory)
        self.output = output
        do {
            _ = try await output.waitForLine(containing: ready, times: 1, timeout: .seconds(10))
        } catch {
            self.stop()
            throw ProxyProcessError(message: "the proxy did not start: \(output.text)")
        }
    }

    deinit {
        self.stop()
    }

    /// Everything the proxy has logged so far.
    var log: String { self.output.text }

    /// Waits until the proxy's log has a line containing `text` (at most `timeout`), and returns that line.
    @discardableResult
    func waitForLog(containing text: String, times: Int = 1, timeout: Duration = .seconds(10)) async throws -> String {
        try await self.output.waitForLine(containing: text, times: times, timeout: timeout)
    }

    /// How many lines of the log so far contain `text`.
    func logLines(containing text: String) -> Int {
        OutputLines.lines(in: self.log, containing: text).count
    }

    /// Stops the proxy: its shell sees the folder gone and kills it.
    func stop() {
        try? FileManager.default.removeItem(at: self.process.directory)
    }
}

struct ProxyProcessError: Error, CustomStringConvertible {
    let message: String
    var description: String { self.message }
}

/// A child's output, read as it comes; waiters are resumed by the line they wait for, not by polling.
private final class OutputLines: Sendable {
    private typealias Waiter = (
        id: UUID, needle: String, times: Int, continuation: CheckedContinuation<String, any Error>
    )

    private struct State {
        var text = ""
        var waiters: [Waiter] = []
        var closed = false
        /// Waiters whose timeout fired before they were registered.
        var expired: Set<UUID> = []
    }

    private let state = NIOLockedValueBox(State())

    init(_ handle: FileHandle) {
        handle.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            guard let self else { return }
            if data.isEmpty {
                handle.readabilityHandler = nil
                self.close()
                return
            }
            self.append(String(decoding: data, as: UTF8.self))
        }
    }

    var text: String { self.state.withLockedValue { $0.text } }

    private func append(_ chunk: String) {
        let resumed = self.state.withLockedValue { state -> [(CheckedContinuation<String, any Error>, String)] in
            state.text += chunk
            var resumed: [(CheckedContinuation<String, any Error>, String)] = []
            state.waiters.removeAll { waiter in
                guard let line = Self.line(in: state.text, containing: waiter.needle, times: waiter.times) else {
                    return false
                }
                resumed.append((waiter.continuation, line))
                return true
            }
            return resumed
        }
        for (continuation, line) in resumed { continuation.resume(returning: line) }
    }

    private func close() {
        let waiters = self.state.withLockedValue { state in
            state.closed = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters {
            waiter.continuation.resume(throwing: ProxyProcessError(message: "the proxy exited"))
        }
    }

    private func fail(_ id: UUID) {
        let waiter = self.state.withLockedValue { state -> Waiter? in
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else {
                state.expired.insert(id)
                return nil
            }
            return state.waiters.remove(at: index)
        }
        guard let waiter else { return }
        waiter.continuation.resume(throwing: ProxyProcessError(message: "no log line with \"\(waiter.needle)\""))
    }

    func waitForLine(containing needle: String, times: Int, timeout: Duration) async throws -> String {
        let id = UUID()
        let timer = Task {
            try await Task.sleep(for: timeout)
            self.fail(id)
        }
        defer { timer.cancel() }
        return try await withCheckedThrowingContinuation { continuation in
            let immediate = self.state.withLockedValue { state -> Result<String, any Error>? in
                if let line = Self.line(in: state.text, containing: needle, times: times) { return .success(line) }
                if state.closed { return .failure(ProxyProcessError(message: "the proxy exited")) }
                if state.expired.contains(id) {
                    return .failure(ProxyProcessError(message: "no log line with \"\(needle)\""))
                }
                state.waiters.append((id, needle, times, continuation))
                return nil
            }
            if let immediate { continuation.resume(with: immediate) }
        }
    }

    /// The lines of `text` that contain `needle`.
    static func lines(in text: String, containing needle: String) -> [Substring] {
        text.split(separator: "\n").filter { $0.contains(needle) }
    }

    /// The `times`th line of `text` that contains `needle`, if there are that many.
    private static func line(in text: String, containing needle: String, times: Int) -> String? {
        let lines = Self.lines(in: text, containing: needle)
        return lines.count >= times ? String(lines[times - 1]) : nil
    }
}
