#if os(Linux)
import Foundation
import Glibc
import NIOConcurrencyHelpers

/// Reachability from the kernel's tables: a `NETLINK_ROUTE` socket subscribed to link, address and route
/// changes, read by a thread that blocks in `poll` (no polling loop, no traffic sent). After each burst of
/// changes the tables are read again and the status recomputed.
final class NetlinkReachability: Sendable {
    enum Target: Sendable, Equatable {
        /// The default route: the internet in general.
        case defaultRoute
        /// A host name, resolved at each evaluation until it resolves.
        case host(String)
        /// Numeric addresses (4 or 16 bytes).
        case addresses([[UInt8]])
    }

    typealias SocketMaker =
        @Sendable (_ groups: UInt32, _ receiveTimeoutSeconds: Int?) throws(KiteError) -> NetlinkSocket

    let target: Target
    private let makeSocket: SocketMaker
    /// The write end of the running monitor's wake-up pipe, and its generation.
    private let running = NIOLockedValueBox<(generation: Int, wake: Int32?)>((0, nil))

    /// - Parameters:
    ///   - target: What to reach.
    ///   - makeSocket: Opens netlink sockets; tests open them inside a network namespace of their own.
    init(
        target: Target,
        makeSocket: @escaping SocketMaker = { try NetlinkSocket(groups: $0, receiveTimeoutSeconds: $1) }
    ) {
        self.target = target
        self.makeSocket = makeSocket
    }

    /// The status now, from one read of the kernel's tables; `.unknown` when they cannot be read.
    func currentStatus() -> NetworkReachabilityManager.NetworkReachabilityStatus {
        guard let socket = try? self.makeSocket(0, 2) else { return .unknown }
        return self.evaluate(using: socket)
    }

    /// Starts the monitor thread; it reports the status at once, then after every change.
    ///
    /// - Returns: `false` when the netlink socket cannot be opened.
    func start(_ report: @escaping @Sendable (NetworkReachabilityManager.NetworkReachabilityStatus) -> Void) -> Bool {
        self.stop()
        let changes: NetlinkSocket
        let queries: NetlinkSocket
        do {
            changes = try self.makeSocket(NetlinkSocket.changeGroups, nil)
            queries = try self.makeSocket(0, 2)
        } catch {
            return false
        }
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0 else { return false }
        _ = fcntl(pipeEnds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(pipeEnds[1], F_SETFD, FD_CLOEXEC)
        let generation = self.running.withLockedValue { running in
            running.generation += 1
            running.wake = pipeEnds[1]
            return running.generation
        }
        let monitor = Monitor(owner: self, changes: changes, queries: queries, wakeRead: pipeEnds[0])
        let thread = Thread {
            monitor.run { status in
                // A stopped monitor's last evaluation is not reported.
                guard self.running.withLockedValue({ $0.generation == generation && $0.wake != nil }) else { return }
                report(status)
            }
        }
        thread.name = "dev.kite.reachability"
        thread.start()
        return true
    }

    /// Stops the monitor thread (it closes its sockets as it exits); returns at once.
    func stop() {
        let wake = self.running.withLockedValue { running -> Int32? in
            defer { running.wake = nil }
            return running.wake
        }
        guard let wake else { return }
        var byte: UInt8 = 1
        _ = write(wake, &byte, 1)
        close(wake)
    }

    /// Reads the tables (and asks for the routes to the target's addresses) and computes the status.
    func evaluate(using socket: NetlinkSocket) -> NetworkReachabilityManager.NetworkReachabilityStatus {
        guard let state = try? KernelNetworkState.read(using: socket) else { return .unknown }
        let addresses: [[UInt8]]
        switch self.target {
        case .defaultRoute:
            let status = ReachabilityEvaluator.defaultRouteStatus(state)
            guard status == .notReachable, ReachabilityEvaluator.hasDefaultRouteWithoutInterface(state) else {
                return status
            }
            // A multipath (`nexthop … nexthop …`) or nexthop-object (`nhid`) default route names no interface:
            // ask the kernel which way it would send to documentation addresses, which only a default route
            // covers (RFC 5737, RFC 3849). Nothing is sent.
            addresses = [[192, 0, 2, 1], [0x20, 0x01, 0x0d, 0xb8] + [UInt8](repeating: 0, count: 11) + [1]]
        case .addresses(let numeric):
            addresses = numeric
        case .host(let name):
            addresses = Self.resolve(name)
        }
        var best = NetworkReachabilityManager.NetworkReachabilityStatus.notReachable
        for address in addresses {
            let route = try? KernelNetworkState.route(to: address, using: socket)
            let status = ReachabilityEvaluator.status(of: address, route: route ?? nil, in: state)
            if status == .reachable(.ethernetOrWiFi) { return status }
            if case .reachable = status { best = status }
        }
        return best
    }

    /// The IPv4 and IPv6 addresses of `host`, numeric addresses as they are; none when it does not resolve.
    static func resolve(_ host: String) -> [[UInt8]] {
        if let numeric = Self.numericAddress(host) { return [numeric] }
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &list) == 0, let first = list else { return [] }
        defer { freeaddrinfo(first) }
        var addresses: [[UInt8]] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let entry = cursor {
            if let address = entry.pointee.ai_addr {
                switch Int32(address.pointee.sa_family) {
                case AF_INET:
                    address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { ipv4 in
                        var value = ipv4.pointee.sin_addr
                        addresses.append(withUnsafeBytes(of: &value) { Array($0) })
                    }
                case AF_INET6:
                    address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { ipv6 in
                        var value = ipv6.pointee.sin6_addr
                        addresses.append(withUnsafeBytes(of: &value) { Array($0) })
                    }
                default:
                    break
                }
            }
            cursor = entry.pointee.ai_next
        }
        var seen = Set<[UInt8]>()
        return addresses.filter { seen.insert($0).inserted }
    }

    /// The bytes of an IPv4 or IPv6 literal (brackets allowed around IPv6), or `nil`.
    static func numericAddress(_ text: String) -> [UInt8]? {
        var literal = text
        if literal.hasPrefix("["), literal.hasSuffix("]") { literal = String(literal.dropFirst().dropLast()) }
        var ipv4 = in_addr()
        if inet_pton(AF_INET, literal, &ipv4) == 1 { return withUnsafeBytes(of: &ipv4) { Array($0) } }
        var ipv6 = in6_addr()
        if inet_pton(AF_INET6, literal, &ipv6) == 1 { return withUnsafeBytes(of: &ipv6) { Array($0) } }
        return nil
    }
}

extension NetlinkReachability {
    /// The monitor thread's work: owns its sockets and the read end of the wake-up pipe.
    private final class Monitor: @unchecked Sendable {
        // @unchecked: created on the starting thread, then used only by the monitor thread.
        let owner: NetlinkReachability
        let changes: NetlinkSocket
        let queries: NetlinkSocket
        let wakeRead: Int32

        init(owner: NetlinkReachability, changes: NetlinkSocket, queries: NetlinkSocket, wakeRead: Int32) {
            self.owner = owner
            self.changes = changes
            self.queries = queries
            self.wakeRead = wakeRead
        }

        func run(_ report: (NetworkReachabilityManager.NetworkReachabilityStatus) -> Void) {
            defer { close(self.wakeRead) }
            report(self.owner.evaluate(using: self.queries))
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            var descriptors = [
                pollfd(fd: self.changes.fileDescriptor, events: Int16(POLLIN), revents: 0),
                pollfd(fd: self.wakeRead, events: Int16(POLLIN), revents: 0),
            ]
            while true {
                let ready = poll(&descriptors, nfds_t(descriptors.count), -1)
                if ready < 0 {
                    if errno == EINTR { continue }
                    return
                }
                if descriptors[1].revents != 0 { return }
                guard descriptors[0].revents != 0 else { continue }
                if descriptors[0].revents & Int16(POLLNVAL) != 0 { return }
                // POLLERR is a dropped burst (ENOBUFS): the receive below clears it, the tables are read anyway.
                // Drain the burst; the contents do not matter, the tables are read again.
                var drained = 0
                while drained < 10_000, (try? self.changes.receive(into: &buffer, nonBlocking: true)) ?? nil != nil {
                    drained += 1
                }
                report(self.owner.evaluate(using: self.queries))
            }
        }
    }
}
#endif
