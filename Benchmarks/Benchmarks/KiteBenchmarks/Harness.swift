import AsyncHTTPClient
import Foundation
import HTTPTypes
import Kite
import KiteTestServer
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What every benchmark process shares: the in-process test server on loopback and the three
/// clients, configured alike.
///
/// package-benchmark runs each benchmark in its own process, so `start()` runs once per benchmark.
/// A client process (``ClientProcess``) makes a harness with one client and no server of its own.
final class Harness: Sendable {
    /// The in-process test server; `nil` in a client process, which uses its parent's.
    let server: KiteTestServer?
    /// The server's base URL, `http://127.0.0.1:PORT`.
    let baseURL: String
    private let kiteSession: Session?
    private let ahcClient: HTTPClient?
    private let urlSessionClient: URLSession?
    /// The header fields Kite sends by default, sent by the raw AHC and URLSession requests too
    /// so that every client puts the same request on the wire.
    let defaultHeaders: HTTPHeaders
    /// A folder for downloaded and uploaded files, removed by `stop()`.
    let scratch: URL

    private static let current = Mutex<Harness?>(nil)
    /// The harness whose server is in another process, made on first use.
    private static let currentRemote = Mutex<(harness: Harness, server: ServerProcess)?>(nil)

    /// The harness of the cases with the server in another process (``ServerProcess``): its own clients,
    /// configured as this one's, against a server started on first use and stopped by `stop()`.
    static var remote: Harness {
        get async throws {
            if let remote = currentRemote.withLock({ $0 }) { return remote.harness }
            let server = try ServerProcess.start()
            let harness = try await Harness(serverURL: server.baseURL)
            return currentRemote.withLock { current in
                if let existing = current {
                    server.stop()
                    return existing.harness
                }
                current = (harness, server)
                return harness
            }
        }
    }

    /// The harness started by `start()`.
    static var shared: Harness {
        get throws {
            guard let harness = current.withLock({ $0 }) else {
                throw HarnessError("the harness was not started (Benchmark.setup did not run)")
            }
            return harness
        }
    }

    /// Kite, with its own connection pool.
    var kite: Session {
        get throws { try Self.made(self.kiteSession, .kite) }
    }

    /// Raw async-http-client with the configuration Kite gives its engine.
    var ahc: HTTPClient {
        get throws { try Self.made(self.ahcClient, .ahc) }
    }

    /// URLSession from FoundationNetworking (swift-corelibs-foundation on Linux).
    var urlSession: URLSession {
        get throws { try Self.made(self.urlSessionClient, .urlSession) }
    }

    private static func made<C>(_ client: C?, _ name: Client) throws -> C {
        guard let client else { throw HarnessError("this process made no \(name.rawValue) client") }
        return client
    }

    /// Starts a server in this process unless `serverURL` names one, and makes `clients`.
    init(serverURL: String? = nil, clients: Set<Client> = Set(Client.allCases)) async throws {
        if let serverURL {
            self.server = nil
            self.baseURL = serverURL
        } else {
            let server = try await KiteTestServer.start()
            self.server = server
            self.baseURL = server.baseURL
        }
        let configuration = Session.Configuration.default
        self.kiteSession = clients.contains(.kite) ? Session(configuration: configuration) : nil
        self.ahcClient =
            clients.contains(.ahc) || clients.contains(.ahcInTask)
            ? HTTPClient(
                eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
                configuration: Self.ahcConfiguration(like: configuration)
            ) : nil
        if clients.contains(.urlSession) {
            let urlConfiguration = URLSessionConfiguration.ephemeral
            urlConfiguration.httpMaximumConnectionsPerHost = configuration.maximumConnectionsPerHost
            urlConfiguration.timeoutIntervalForRequest = 60
            self.urlSessionClient = URLSession(configuration: urlConfiguration)
        } else {
            self.urlSessionClient = nil
        }
        var headers = HTTPHeaders()
        for field in configuration.headers {
            headers.add(name: field.name.rawName, value: field.value)
        }
        self.defaultHeaders = headers
        // Files go to RAM (/dev/shm) when there is one, so the transfer cases measure the clients, not the disk.
        let ram = URL(fileURLWithPath: "/dev/shm")
        let folder = FileManager.default.isWritableFile(atPath: ram.path) ? ram : FileManager.default.temporaryDirectory
        self.scratch = folder.appendingPathComponent("kite-benchmarks-\(ProcessInfo.processInfo.processIdentifier)")
        try FileManager.default.createDirectory(at: self.scratch, withIntermediateDirectories: true)
    }

    /// The AHC configuration Kite's engine uses for `configuration` (see `AHCTransport`).
    static func ahcConfiguration(like configuration: Session.Configuration) -> HTTPClient.Configuration {
        var config = HTTPClient.Configuration()
        config.timeout = HTTPClient.Configuration.Timeout(
            connect: .seconds(Int64(configuration.timeouts.connect.components.seconds)),
            read: configuration.timeouts.idleRead.map { .seconds(Int64($0.components.seconds)) }
        )
        config.redirectConfiguration = .disallow
        config.decompression = .enabled(limit: .ratio(100))
        config.connectionPool.retryConnectionEstablishment = false
        config.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = configuration.maximumConnectionsPerHost
        config.connectionPool.idleTimeout = .seconds(Int64(configuration.connectionIdleTimeout.components.seconds))
        return config
    }

    /// Starts the server and the clients; `Benchmark.setup` calls it.
    static func start() async throws {
        let harness = try await Harness()
        current.withLock { $0 = harness }
    }

    /// Stops the clients and the server and removes the scratch folder; `Benchmark.teardown` calls it.
    static func stop() async throws {
        guard
            let harness = current.withLock({ state in
                defer { state = nil }
                return state
            })
        else { return }
        try await harness.shutdown()
        if let remote = currentRemote.withLock({ state in
            defer { state = nil }
            return state
        }) {
            try await remote.harness.shutdown()
            remote.server.stop()
        }
    }

    /// Stops the clients and the server this harness made and removes its scratch folder.
    func shutdown() async throws {
        self.urlSessionClient?.invalidateAndCancel()
        try await self.kiteSession?.shutdown()
        try await self.ahcClient?.shutdown()
        try await self.server?.shutdown()
        try? FileManager.default.removeItem(at: self.scratch)
    }

    /// The URL of `path` on the test server.
    func url(_ path: String) -> String {
        self.baseURL + path
    }

    /// A raw AHC request for `path` with Kite's default header fields.
    func ahcRequest(_ path: String, method: HTTPMethod = .GET) -> HTTPClientRequest {
        var request = HTTPClientRequest(url: self.url(path))
        request.method = method
        request.headers = self.defaultHeaders
        return request
    }

    /// A URLRequest for `path` with Kite's default header fields.
    func urlRequest(_ path: String) throws -> URLRequest {
        guard let url = URL(string: self.url(path)) else {
            throw HarnessError("not a URL: \(self.url(path))")
        }
        var request = URLRequest(url: url)
        for header in self.defaultHeaders {
            request.setValue(header.value, forHTTPHeaderField: header.name)
        }
        return request
    }

    /// A new file URL in the scratch folder.
    func scratchFile(_ name: String) -> URL {
        self.scratch.appendingPathComponent("\(name)-\(UUID().uuidString)")
    }
}

/// A benchmark that could not do its work.
struct HarnessError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}

/// A job this executable does instead of registering benchmarks, named by an environment variable (a client
/// process's transfer, case 9's profiling job).
enum ProcessJob {
    /// When the environment has `variable`, runs `perform` with its value on the cooperative pool and exits: with
    /// status 0 when it returns, 1 when it throws (the error on standard error). Returns at once otherwise.
    ///
    /// package-benchmark registers benchmarks synchronously, so this thread blocks until the job is done.
    static func runIfRequested(_ variable: String, _ perform: @escaping @Sendable (String) async throws -> Void) {
        guard let job = ProcessInfo.processInfo.environment[variable] else { return }
        let done = DispatchSemaphore(value: 0)
        let status = Mutex<Int32>(1)
        Task.detached {
            do {
                try await perform(job)
                status.withLock { $0 = 0 }
            } catch {
                FileHandle.standardError.write(Data("\(variable) (\(job)): \(error)\n".utf8))
            }
            done.signal()
        }
        done.wait()
        exit(status.withLock { $0 })
    }
}
