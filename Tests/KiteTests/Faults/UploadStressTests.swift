import Foundation
import Kite
import NIOConcurrencyHelpers
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Many uploads to a server that answers as soon as it has the body (or before), and many requests
/// cancelled at random moments: no crash, every handler exactly once, no connection left open.
@Suite struct UploadStressTests {
    /// Calls exactly once per request, recorded by index.
    final class CallCounter: Sendable {
        private let counts: NIOLockedValueBox<[Int]>

        init(_ count: Int) {
            self.counts = NIOLockedValueBox(Array(repeating: 0, count: count))
        }

        /// Records a call; `true` for the first.
        func record(_ index: Int) -> Bool {
            self.counts.withLockedValue { counts in
                counts[index] += 1
                return counts[index] == 1
            }
        }

        var all: [Int] { self.counts.withLockedValue { $0 } }
    }

    /// Runs `count` jobs with at most `width` in flight.
    static func inFlight(_ count: Int, width: Int, _ job: @escaping @Sendable (Int) async -> Void) async {
        await withTaskGroup(of: Void.self) { group in
            var next = 0
            while next < min(width, count) {
                let index = next
                group.addTask { await job(index) }
                next += 1
            }
            while await group.next() != nil, next < count {
                let index = next
                group.addTask { await job(index) }
                next += 1
            }
        }
    }

    /// Waits for the request's completion handler (called on a concurrent queue) and counts its calls.
    static func response(
        of request: DataRequest,
        index: Int,
        calls: CallCounter
    ) async -> DataResponse<Data, KiteError> {
        await withCheckedContinuation { continuation in
            request.responseData(queue: .global()) { response in
                if calls.record(index) { continuation.resume(returning: response) }
            }
        }
    }

    #if os(Linux)
    /// This process's open sockets connected to `port` on loopback (from /proc/self/fd and /proc/net/tcp).
    static func openSockets(toPort port: Int) -> Int {
        let fdFolder = "/proc/self/fd"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: fdFolder)) ?? []
        var inodes = Set<String>()
        for name in names {
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "\(fdFolder)/\(name)"),
                target.hasPrefix("socket:[")
            else { continue }
            inodes.insert(String(target.dropFirst(8).dropLast()))
        }
        let table = (try? String(contentsOfFile: "/proc/net/tcp", encoding: .utf8)) ?? ""
        let portHex = String(format: ":%04X", port)
        var count = 0
        for line in table.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ")
            guard fields.count > 9, fields[2].hasSuffix(portHex), inodes.contains(String(fields[9])) else { continue }
            count += 1
        }
        return count
    }

    /// Waits (at most 5 s, checking every 20 ms) until no socket of this process is connected to
    /// `port`: the engine's shutdown closes its channels, and their descriptors go a moment later.
    static func socketsClose(toPort port: Int) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(5)
        while Self.openSockets(toPort: port) > 0 {
            guard ContinuousClock.now < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return true
    }
    #endif

    /// Shuts the session down and checks what every stress run promises: no unexpected outcome, every
    /// handler exactly once, no connection left open; then stops the server.
    static func finish(_ session: Session, server: FaultServer, problems: [String], calls: CallCounter) async throws {
        try await session.shutdown()
        #expect(problems.isEmpty, "\(problems.prefix(5))")
        #expect(calls.all.allSatisfy { $0 == 1 }, "every completion handler runs exactly once")
        #if os(Linux)
        let port = try #require(await server.port)
        #expect(await Self.socketsClose(toPort: port), "no connection stays open after shutdown")
        #endif
        await server.stop()
    }

    @Test func aThousandUploadsToAServerThatAnswersAtOnce() async throws {
        let server = FaultServer()
        let base = try await server.baseURL()
        let folder = try DownloadTests.makeFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("small.bin")
        try FaultInjectionTests.deterministicBody(1000).write(to: file)
        let data = Data(count: 256 * 1024)

        var configuration = Session.Configuration()
        configuration.maximumConnectionsPerHost = 64
        let session = Session(configuration: configuration)
        let count = 1000
        let calls = CallCounter(count)
        let failures = NIOLockedValueBox<[String]>([])
        await Self.inFlight(count, width: 64) { index in
            // Alternate Data and file bodies, answered after the body or before reading it.
            let early = index % 4 >= 2
            let url = base + (early ? "/upload-ack?early=1" : "/upload-ack")
            let request = index % 2 == 0 ? session.upload(data, to: url) : session.upload(file, to: url)
            let response = await Self.response(of: request, index: index, calls: calls)
            let expected = index % 2 == 0 ? data.count : 1000
            let ok =
                response.error == nil && response.response?.status.code == 200
                && (early || response.data == Data(#"{"received":\#(expected)}"#.utf8))
            if !ok {
                failures.withLockedValue { $0.append("#\(index): \(String(describing: response.error))") }
            }
        }
        try await Self.finish(session, server: server, problems: failures.withLockedValue { $0 }, calls: calls)
    }

    @Test func fiveHundredRequestsCancelledAtRandomMoments() async throws {
        let server = FaultServer()
        let base = try await server.baseURL()
        var configuration = Session.Configuration()
        configuration.maximumConnectionsPerHost = 64
        let session = Session(configuration: configuration)
        let count = 500
        let calls = CallCounter(count)
        let unexpected = NIOLockedValueBox<[String]>([])
        let data = Data(count: 512 * 1024)
        await Self.inFlight(count, width: 64) { index in
            let request: DataRequest =
                switch index % 3 {
                case 0: session.upload(data, to: base + "/upload-ack")
                case 1: session.upload(data, to: base + "/upload-ack?early=1")
                default: session.request(base + "/huge-body?size=2000000")
                }
            async let response = Self.response(of: request, index: index, calls: calls)
            // The stimulus, not synchronisation: cancel somewhere between before the start and the end.
            try? await Task.sleep(for: .microseconds(Int.random(in: 0..<20_000)))
            request.cancel()
            let result = await response
            if let error = result.error, error.code != .cancelled {
                unexpected.withLockedValue { $0.append("#\(index): \(error)") }
            }
        }
        try await Self.finish(session, server: server, problems: unexpected.withLockedValue { $0 }, calls: calls)
    }
}
