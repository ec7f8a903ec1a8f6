#if !os(Linux)
import Dispatch
import NIOConcurrencyHelpers

#if canImport(Network)
import Darwin
import Network

/// Reachability on Apple platforms, from `NWPathMonitor`: reachable when the path is satisfied, cellular when
/// it uses a cellular interface. `NWPathMonitor` watches the device's path, not one host, so a host manager
/// reports the path the host's traffic would take in general.
final class PathMonitorReachability: NetworkReachabilityManager.Backend {
    private let monitor = NIOLockedValueBox<NWPathMonitor?>(nil)

    static func make(host: String?) -> (any NetworkReachabilityManager.Backend)? {
        PathMonitorReachability()
    }

    /// A backend for a numeric address; `nil` when `address` is not an IPv4 or IPv6 literal.
    static func make(address: String) -> (any NetworkReachabilityManager.Backend)? {
        var ipv4 = in_addr()
        var ipv6 = in6_addr()
        guard inet_pton(AF_INET, address, &ipv4) == 1 || inet_pton(AF_INET6, address, &ipv6) == 1 else { return nil }
        return PathMonitorReachability()
    }

    func currentStatus() -> NetworkReachabilityManager.NetworkReachabilityStatus {
        guard let path = self.monitor.withLockedValue({ $0?.currentPath }) else { return .unknown }
        return Self.status(of: path)
    }

    func start(_ report: @escaping @Sendable (NetworkReachabilityManager.NetworkReachabilityStatus) -> Void) -> Bool {
        let monitor = NWPathMonitor()
        monitor.pathUpdateHandler = { path in report(Self.status(of: path)) }
        monitor.start(queue: DispatchQueue(label: "dev.kite.reachability"))
        self.monitor.withLockedValue { $0 = monitor }
        return true
    }

    func stop() {
        self.monitor.withLockedValue { monitor in
            monitor?.cancel()
            monitor = nil
        }
    }

    static func status(of path: NWPath) -> NetworkReachabilityManager.NetworkReachabilityStatus {
        guard path.status == .satisfied else { return .notReachable }
        return path.usesInterfaceType(.cellular) ? .reachable(.cellular) : .reachable(.ethernetOrWiFi)
    }
}
#else
/// Platforms without netlink or the Network framework have no reachability: the managers are `nil`.
enum PathMonitorReachability {
    static func make(host: String?) -> (any NetworkReachabilityManager.Backend)? { nil }
    static func make(address: String) -> (any NetworkReachabilityManager.Backend)? { nil }
}
#endif
#endif
