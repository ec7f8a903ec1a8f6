#if os(Linux)
import Foundation
import Glibc
import Testing

@testable import Kite

/// A network namespace made for one test, with real kernel state driven by `ip`: `veth0` (10.77.0.1/24) paired
/// with `peer0`, both up, `lo` up and a default route via 10.77.0.2. Netlink sockets for the manager are opened
/// inside it, from a thread that joins it with `setns`.
final class NetworkNamespace: Sendable {
    let name: String

    private static let ipPath = ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    /// `setns(2)`, which Swift's Glibc module does not export.
    private typealias SetNamespace = @convention(c) (Int32, Int32) -> Int32
    private static let setns: SetNamespace? = dlsym(nil, "setns").map { unsafeBitCast($0, to: SetNamespace.self) }
    private static let newNetworkNamespace: Int32 = 0x4000_0000  // CLONE_NEWNET

    /// Whether this machine lets the test make namespaces: root, `ip`, and `setns`.
    static let isAvailable = getuid() == 0 && ipPath != nil && setns != nil

    /// Why namespace tests are skipped here.
    static let skipReason: Comment =
        "needs root, iproute2 (ip) and setns(2) to create network namespaces; CI runs as root with iproute2"

    private init(name: String) {
        self.name = name
    }

    /// Runs `body` with a new namespace and always deletes it afterwards.
    static func with<T: Sendable>(
        peerName: String = "peer0",
        _ body: (NetworkNamespace) async throws -> T
    ) async throws -> T {
        let namespace = NetworkNamespace(name: "kite-\(UInt32.random(in: 0...UInt32.max))")
        try await Self.ip(["netns", "add", namespace.name])
        do {
            try await namespace.ip("link", "set", "lo", "up")
            try await namespace.ip("link", "add", "veth0", "type", "veth", "peer", "name", peerName)
            try await namespace.ip("addr", "add", "10.77.0.1/24", "dev", "veth0")
            try await namespace.ip("link", "set", "veth0", "up")
            try await namespace.ip("link", "set", peerName, "up")
            try await namespace.ip("route", "add", "default", "via", "10.77.0.2", "dev", "veth0")
            let result = try await body(namespace)
            try? await Self.ip(["netns", "del", namespace.name])
            return result
        } catch {
            try? await Self.ip(["netns", "del", namespace.name])
            throw error
        }
    }

    /// Runs `ip -n NAME args…` and waits for it without blocking a thread.
    func ip(_ arguments: String...) async throws {
        try await Self.ip(["-n", self.name] + arguments)
    }

    private static func ip(_ arguments: [String]) async throws {
        guard let ipPath else { throw KiteError(code: .invalidRequest, message: "no ip command") }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: ipPath)
            process.arguments = arguments
            let errors = Pipe()
            process.standardError = errors
            process.standardOutput = FileHandle.nullDevice
            process.terminationHandler = { process in
                let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                if process.terminationStatus == 0 {
                    continuation.resume()
                } else {
                    continuation.resume(
                        throwing: KiteError(
                            code: .invalidRequest,
                            message: "ip \(arguments.joined(separator: " ")) failed: \(message)"
                        )
                    )
                }
            }
            do {
                try process.runAndReap()
            } catch {
                continuation.resume(throwing: error)
            }
        }
    }

    /// Opens netlink sockets inside this namespace: on a new thread that joins it first (a socket stays in the
    /// namespace it was made in).
    var socketMaker: NetlinkReachability.SocketMaker {
        let path = "/var/run/netns/\(self.name)"
        return { groups, timeout throws(KiteError) in
            let result = LockedBox<SocketResult?>(nil)
            let done = DispatchSemaphore(value: 0)
            let thread = Thread {
                defer { done.signal() }
                let descriptor = open(path, O_RDONLY | O_CLOEXEC)
                guard descriptor >= 0, let setns = Self.setns, setns(descriptor, Self.newNetworkNamespace) == 0 else {
                    result.set(
                        SocketResult(.failure(KiteError(code: .connectionFailed, message: "setns(\(path)) failed")))
                    )
                    return
                }
                close(descriptor)
                do throws(KiteError) {
                    result.set(
                        SocketResult(.success(try NetlinkSocket(groups: groups, receiveTimeoutSeconds: timeout)))
                    )
                } catch {
                    result.set(SocketResult(.failure(error)))
                }
            }
            thread.start()
            done.wait()
            guard let outcome = result.value else {
                throw KiteError(code: .connectionFailed, message: "the namespace thread made no socket")
            }
            return try outcome.result.get()
        }
    }

    /// A socket handed from the namespace thread to the caller, once.
    private struct SocketResult: @unchecked Sendable {
        let result: Result<NetlinkSocket, KiteError>
        init(_ result: Result<NetlinkSocket, KiteError>) { self.result = result }
    }
}

/// Statuses as one source delivered them, with a bounded wait for the next ones.
final class StatusRecorder: @unchecked Sendable {
    // @unchecked: every field is guarded by `lock`.
    private let lock = NSLock()
    private var seen: [NetworkReachabilityManager.NetworkReachabilityStatus] = []
    private var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

    var statuses: [NetworkReachabilityManager.NetworkReachabilityStatus] { self.lock.withLock { self.seen } }

    func record(_ status: NetworkReachabilityManager.NetworkReachabilityStatus) {
        let ready = self.lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            self.seen.append(status)
            let ready = self.waiters.filter { $0.count <= self.seen.count }.map(\.continuation)
            self.waiters.removeAll { $0.count <= self.seen.count }
            return ready
        }
        for continuation in ready { continuation.resume() }
    }

    /// The statuses once there are at least `count`, or when `timeout` passes (then fewer).
    func statuses(
        count: Int,
        within timeout: Duration = .seconds(10)
    ) async -> [NetworkReachabilityManager.NetworkReachabilityStatus] {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await withCheckedContinuation { continuation in
                    let now = self.lock.withLock { () -> Bool in
                        if self.seen.count >= count { return true }
                        self.waiters.append((count, continuation))
                        return false
                    }
                    if now { continuation.resume() }
                }
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
            }
            await group.next()
            group.cancelAll()
            self.releaseWaiters()
        }
        return self.statuses
    }

    private func releaseWaiters() {
        let pending = self.lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            defer { self.waiters.removeAll() }
            return self.waiters.map(\.continuation)
        }
        for continuation in pending { continuation.resume() }
    }
}
#endif
