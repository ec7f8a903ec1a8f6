#if os(Linux)
import Glibc

/// The kernel's links, addresses and routes at one moment, read with netlink dumps.
struct KernelNetworkState: Sendable {
    var links: [Int32: LinkMessage] = [:]
    var addresses: [AddressMessage] = []
    var routes: [RouteMessage] = []

    /// Reads the three tables.
    static func read(using socket: NetlinkSocket) throws(KiteError) -> KernelNetworkState {
        var state = KernelNetworkState()
        for message in try socket.ask({ NetlinkRequest.dump(Netlink.getLink, family: 0, sequence: $0) }, dump: true) {
            if case .link(let link) = message, !link.isDeletion { state.links[link.index] = link }
        }
        for message in try socket.ask({ NetlinkRequest.dump(Netlink.getAddress, family: 0, sequence: $0) }, dump: true)
        {
            if case .address(let address) = message, !address.isDeletion { state.addresses.append(address) }
        }
        for message in try socket.ask({ NetlinkRequest.dump(Netlink.getRoute, family: 0, sequence: $0) }, dump: true) {
            if case .route(let route) = message, !route.isDeletion { state.routes.append(route) }
        }
        return state
    }

    /// The route the kernel would use to reach `address`, or `nil` when it has none (an error such as
    /// `ENETUNREACH`).
    static func route(to address: [UInt8], using socket: NetlinkSocket) throws(KiteError) -> RouteMessage? {
        for message in try socket.ask({ NetlinkRequest.route(to: address, sequence: $0) }, dump: false) {
            if case .route(let route) = message { return route }
        }
        return nil
    }
}

/// Turns kernel state into a reachability status. Pure, so it is tested with synthetic tables.
enum ReachabilityEvaluator {
    /// `IFA_F_DADFAILED` and `IFA_F_TENTATIVE` (linux/if_addr.h): IPv6 addresses not usable yet or at all.
    private static let unusableAddressFlags: UInt32 = 0x08 | 0x40
    /// `ARPHRD_PPP` and `ARPHRD_RAWIP` (linux/if_arp.h): the link types of modems.
    private static let cellularHardwareTypes: Set<UInt16> = [512, 519]
    /// Name prefixes of cellular interfaces: `wwan` (the kernel's WWAN framework and ModemManager), `wwp`
    /// (systemd's predictable names for WWAN devices), `ppp`, `rmnet`/`rmnet_data` (Qualcomm), `ccmni`
    /// (MediaTek), `qmimux`, `mhi_hwip`.
    private static let cellularPrefixes = ["wwan", "wwp", "ppp", "rmnet", "ccmni", "qmimux", "mhi_hwip"]

    /// Whether the interface is up, has a carrier and holds an address that can carry traffic beyond the link:
    /// not host or link scope (so `fe80::` alone does not count), not tentative or failed duplicate detection.
    static func isUsable(_ index: Int32, in state: KernelNetworkState) -> Bool {
        guard let link = state.links[index], link.isUp, link.hasCarrier || link.isLoopback else { return false }
        return state.addresses.contains { address in
            guard Int64(address.index) == Int64(index), address.address != nil else { return false }
            if link.isLoopback { return true }
            return address.flags & Self.unusableAddressFlags == 0 && address.scope < 253
        }
    }

    /// The connection type of an interface: cellular for modems, else Ethernet or Wi-Fi.
    static func connectionType(
        of link: LinkMessage?
    ) -> NetworkReachabilityManager.NetworkReachabilityStatus.ConnectionType {
        guard let link else { return .ethernetOrWiFi }
        if Self.cellularHardwareTypes.contains(link.hardwareType) { return .cellular }
        if let name = link.name, Self.cellularPrefixes.contains(where: { name.hasPrefix($0) }) { return .cellular }
        return .ethernetOrWiFi
    }

    /// Reachability of the internet in general: a default route in the main table through a usable, non-loopback
    /// interface; the route with the lowest metric decides the connection type.
    static func defaultRouteStatus(_ state: KernelNetworkState) -> NetworkReachabilityManager.NetworkReachabilityStatus
    {
        let candidates = state.routes.filter { route in
            route.destinationLength == 0 && route.table == 254 && route.type == 1
                && route.outputInterface.map { index in
                    state.links[index]?.isLoopback == false && Self.isUsable(index, in: state)
                } == true
        }
        guard let best = candidates.min(by: { ($0.priority ?? 0) < ($1.priority ?? 0) }),
            let index = best.outputInterface
        else { return .notReachable }
        return .reachable(Self.connectionType(of: state.links[index]))
    }

    /// Whether the main table has a unicast default route that names no output interface (multipath or a
    /// nexthop object), which ``defaultRouteStatus(_:)`` cannot judge from the table alone.
    static func hasDefaultRouteWithoutInterface(_ state: KernelNetworkState) -> Bool {
        state.routes.contains {
            $0.destinationLength == 0 && $0.table == 254 && $0.type == 1 && $0.outputInterface == nil
        }
    }

    /// Reachability of one address, given the route the kernel chose for it (`nil`: no route).
    ///
    /// A loopback route counts only for a loopback target, so a host that resolves to a remote address is not
    /// reachable through `lo` alone.
    static func status(
        of target: [UInt8],
        route: RouteMessage?,
        in state: KernelNetworkState
    ) -> NetworkReachabilityManager.NetworkReachabilityStatus {
        guard let route, let index = route.outputInterface else { return .notReachable }
        // RTN_LOCAL: one of this machine's own addresses, delivered through `lo`, which must be up.
        if route.type == 2 {
            return state.links[index]?.isUp == true ? .reachable(.ethernetOrWiFi) : .notReachable
        }
        guard route.type == 1, Self.isUsable(index, in: state) else { return .notReachable }
        let link = state.links[index]
        // A remote target is not reachable through `lo` alone, and a loopback target only through `lo` (with `lo`
        // down the kernel routes 127.0.0.1 out of the default route, where nothing answers it).
        if (link?.isLoopback == true) != Self.isLoopback(target) { return .notReachable }
        return .reachable(Self.connectionType(of: link))
    }

    /// Whether an address is 127.0.0.0/8 or ::1.
    static func isLoopback(_ address: [UInt8]) -> Bool {
        if address.count == 4 { return address[0] == 127 }
        return address.count == 16 && address.dropLast().allSatisfy { $0 == 0 } && address[15] == 1
    }
}
#endif
