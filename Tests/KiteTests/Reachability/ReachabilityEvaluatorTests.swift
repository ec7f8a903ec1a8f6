#if os(Linux)
import Testing

@testable import Kite

/// The evaluator's rules on synthetic kernel tables: no sockets, no namespaces.
struct ReachabilityEvaluatorTests {
    // MARK: Fixtures

    /// `IFF_UP | IFF_BROADCAST | IFF_RUNNING | IFF_MULTICAST | IFF_LOWER_UP`: what `ip link` shows as
    /// `<BROADCAST,MULTICAST,UP,LOWER_UP>`.
    static let upWithCarrier: UInt32 = 0x11043
    /// `IFF_UP | IFF_BROADCAST | IFF_MULTICAST`: up, but no cable or peer (`NO-CARRIER`).
    static let upWithoutCarrier: UInt32 = 0x1003
    /// `IFF_BROADCAST | IFF_MULTICAST`: administratively down.
    static let down: UInt32 = 0x1002
    /// `IFF_UP | IFF_LOOPBACK | IFF_RUNNING | IFF_LOWER_UP`: `lo` when up.
    static let loopbackUp: UInt32 = 0x10049
    /// `IFF_LOOPBACK`: `lo` when down.
    static let loopbackDown: UInt32 = 0x8

    static func link(
        _ index: Int32,
        _ name: String?,
        flags: UInt32 = upWithCarrier,
        operationalState: UInt8? = 6,
        hardwareType: UInt16 = 1
    ) -> LinkMessage {
        LinkMessage(
            isDeletion: false,
            index: index,
            flags: flags,
            name: name,
            operationalState: operationalState,
            kind: nil,
            hardwareType: hardwareType
        )
    }

    static func loopback(index: Int32 = 1, flags: UInt32 = loopbackUp) -> LinkMessage {
        Self.link(index, "lo", flags: flags, operationalState: 0, hardwareType: 772)
    }

    static func address(
        on index: UInt32,
        _ bytes: [UInt8],
        scope: UInt8 = 0,
        flags: UInt32 = 0x80
    ) -> AddressMessage {
        AddressMessage(
            isDeletion: false,
            family: bytes.count == 4 ? 2 : 10,
            prefixLength: bytes.count == 4 ? 24 : 64,
            flags: flags,
            scope: scope,
            index: index,
            address: bytes
        )
    }

    /// 127.0.0.1, host scope, on `lo`.
    static func loopbackAddress(on index: UInt32 = 1) -> AddressMessage {
        Self.address(on: index, [127, 0, 0, 1], scope: 254)
    }

    static func route(
        via index: Int32?,
        destinationLength: UInt8 = 0,
        table: UInt32 = 254,
        type: UInt8 = 1,
        metric: UInt32? = nil
    ) -> RouteMessage {
        RouteMessage(
            isDeletion: false,
            family: 2,
            destinationLength: destinationLength,
            table: table,
            protocolID: 4,
            scope: 0,
            type: type,
            destination: nil,
            gateway: destinationLength == 0 ? [192, 0, 2, 1] : nil,
            outputInterface: index,
            priority: metric
        )
    }

    static func state(
        _ links: [LinkMessage],
        _ addresses: [AddressMessage],
        _ routes: [RouteMessage] = []
    )
        -> KernelNetworkState
    {
        KernelNetworkState(
            links: Dictionary(uniqueKeysWithValues: links.map { ($0.index, $0) }),
            addresses: addresses,
            routes: routes
        )
    }

    /// `lo` (1) up with 127.0.0.1 and `eth0` (2) up with a carrier and 192.0.2.10.
    static func machine(routes: [RouteMessage] = [], eth0Flags: UInt32 = upWithCarrier) -> KernelNetworkState {
        Self.state(
            [Self.loopback(), Self.link(2, "eth0", flags: eth0Flags)],
            [Self.loopbackAddress(), Self.address(on: 2, [192, 0, 2, 10])],
            routes
        )
    }

    static let remote: [UInt8] = [198, 51, 100, 7]
    static let localhost: [UInt8] = [127, 0, 0, 1]

    // MARK: Usable interfaces

    @Test func linkUpWithCarrierAndGlobalAddressIsUsable() {
        let state = Self.state([Self.link(2, "eth0")], [Self.address(on: 2, [192, 0, 2, 10])])
        #expect(ReachabilityEvaluator.isUsable(2, in: state))
    }

    @Test func globalIPv6AddressAloneMakesALinkUsable() {
        let global: [UInt8] = [0x20, 0x01, 0x0d, 0xb8] + Array(repeating: 0, count: 11) + [1]
        let state = Self.state([Self.link(2, "eth0")], [Self.address(on: 2, global)])
        #expect(ReachabilityEvaluator.isUsable(2, in: state))
    }

    @Test func linkWithoutCarrierIsNotUsable() {
        let state = Self.state(
            [Self.link(2, "eth0", flags: Self.upWithoutCarrier, operationalState: 2)],
            [Self.address(on: 2, [192, 0, 2, 10])]
        )
        #expect(!ReachabilityEvaluator.isUsable(2, in: state))
    }

    @Test func linkWhoseOperationalStateIsDownHasNoCarrierDespiteRunningFlags() {
        let state = Self.state(
            [Self.link(2, "eth0", operationalState: 2)],
            [Self.address(on: 2, [192, 0, 2, 10])]
        )
        #expect(!ReachabilityEvaluator.isUsable(2, in: state))
    }

    @Test func linkThatIsDownIsNotUsable() {
        let state = Self.state(
            [Self.link(2, "eth0", flags: Self.down, operationalState: 2)],
            [Self.address(on: 2, [192, 0, 2, 10])]
        )
        #expect(!ReachabilityEvaluator.isUsable(2, in: state))
    }

    @Test func linkWithoutAnyAddressIsNotUsable() {
        let state = Self.state([Self.link(2, "eth0")], [Self.address(on: 3, [192, 0, 2, 10])])
        #expect(!ReachabilityEvaluator.isUsable(2, in: state))
        #expect(!ReachabilityEvaluator.isUsable(4, in: state))
    }

    @Test func linkWithOnlyALinkLocalIPv6AddressIsNotUsable() {
        let linkLocal: [UInt8] = [0xfe, 0x80] + Array(repeating: 0, count: 13) + [1]
        let state = Self.state([Self.link(2, "eth0")], [Self.address(on: 2, linkLocal, scope: 253)])
        #expect(!ReachabilityEvaluator.isUsable(2, in: state))
    }

    // Tentative, DAD failed, and each with IFA_F_PERMANENT (0x80).
    @Test(arguments: [0x40, 0x08, 0xC0, 0x88] as [UInt32])
    func tentativeOrDuplicateIPv6AddressIsNotUsable(flags: UInt32) {
        let global: [UInt8] = [0x20, 0x01, 0x0d, 0xb8] + Array(repeating: 0, count: 11) + [1]
        let state = Self.state([Self.link(2, "eth0")], [Self.address(on: 2, global, flags: flags)])
        #expect(!ReachabilityEvaluator.isUsable(2, in: state))
    }

    @Test func loopbackLinkWithHostScopeAddressIsUsable() {
        let state = Self.state([Self.loopback()], [Self.loopbackAddress()])
        #expect(ReachabilityEvaluator.isUsable(1, in: state))
    }

    @Test func loopbackLinkThatIsDownIsNotUsable() {
        let state = Self.state([Self.loopback(flags: Self.loopbackDown)], [Self.loopbackAddress()])
        #expect(!ReachabilityEvaluator.isUsable(1, in: state))
    }

    // MARK: Default route

    @Test func defaultRouteThroughUsableEthernetIsReachable() {
        let state = Self.machine(routes: [Self.route(via: 2, metric: 100)])
        #expect(ReachabilityEvaluator.defaultRouteStatus(state) == .reachable(.ethernetOrWiFi))
    }

    @Test func defaultRouteThroughUnusableLinkIsNotReachable() {
        let state = Self.machine(routes: [Self.route(via: 2, metric: 100)], eth0Flags: Self.upWithoutCarrier)
        #expect(ReachabilityEvaluator.defaultRouteStatus(state) == .notReachable)
    }

    @Test func noDefaultRouteIsNotReachable() {
        let state = Self.machine(routes: [Self.route(via: 2, destinationLength: 24)])
        #expect(ReachabilityEvaluator.defaultRouteStatus(state) == .notReachable)
    }

    @Test func defaultRouteThroughLoopbackIsIgnored() {
        let state = Self.machine(routes: [Self.route(via: 1)])
        #expect(ReachabilityEvaluator.defaultRouteStatus(state) == .notReachable)
    }

    @Test func defaultRouteWithLowestMetricDecidesTheConnectionType() {
        let links = [Self.loopback(), Self.link(2, "eth0"), Self.link(3, "wwan0")]
        let addresses = [
            Self.loopbackAddress(), Self.address(on: 2, [192, 0, 2, 10]), Self.address(on: 3, [10, 64, 0, 2]),
        ]
        let cellularFirst = Self.state(
            links,
            addresses,
            [Self.route(via: 2, metric: 600), Self.route(via: 3, metric: 100)]
        )
        #expect(ReachabilityEvaluator.defaultRouteStatus(cellularFirst) == .reachable(.cellular))
        let ethernetFirst = Self.state(
            links,
            addresses,
            [Self.route(via: 2, metric: 100), Self.route(via: 3, metric: 600)]
        )
        #expect(ReachabilityEvaluator.defaultRouteStatus(ethernetFirst) == .reachable(.ethernetOrWiFi))
    }

    @Test(arguments: [255, 100, 253] as [UInt32])
    func defaultRouteOutsideTheMainTableIsIgnored(table: UInt32) {
        let alone = Self.machine(routes: [Self.route(via: 2, table: table)])
        #expect(ReachabilityEvaluator.defaultRouteStatus(alone) == .notReachable)
    }

    @Test(arguments: [7, 6, 8, 2] as [UInt8])
    func nonUnicastDefaultRouteIsIgnored(type: UInt8) {
        let alone = Self.machine(routes: [Self.route(via: 2, type: type, metric: 0)])
        #expect(ReachabilityEvaluator.defaultRouteStatus(alone) == .notReachable)
        // With a unicast default through a modem at a higher metric, the modem decides.
        let state = Self.state(
            [Self.loopback(), Self.link(2, "eth0"), Self.link(3, "wwan0")],
            [Self.loopbackAddress(), Self.address(on: 2, [192, 0, 2, 10]), Self.address(on: 3, [10, 64, 0, 2])],
            [Self.route(via: 2, type: type, metric: 0), Self.route(via: 3, metric: 1000)]
        )
        #expect(ReachabilityEvaluator.defaultRouteStatus(state) == .reachable(.cellular))
    }

    // MARK: Routes to one address

    @Test func unicastRouteThroughUsableEthernetIsReachable() {
        let state = Self.machine()
        let status = ReachabilityEvaluator.status(of: Self.remote, route: Self.route(via: 2), in: state)
        #expect(status == .reachable(.ethernetOrWiFi))
    }

    @Test func unicastRouteThroughModemIsReachableOnCellular() {
        let state = Self.state([Self.link(3, "wwan0")], [Self.address(on: 3, [10, 64, 0, 2])])
        let status = ReachabilityEvaluator.status(of: Self.remote, route: Self.route(via: 3), in: state)
        #expect(status == .reachable(.cellular))
    }

    @Test func unicastRouteThroughUnusableLinkIsNotReachable() {
        let state = Self.machine(eth0Flags: Self.down)
        let status = ReachabilityEvaluator.status(of: Self.remote, route: Self.route(via: 2), in: state)
        #expect(status == .notReachable)
    }

    @Test func hostRouteThroughLoopbackReachesOnlyLoopbackTargets() {
        let state = Self.machine()
        let throughLoopback = Self.route(via: 1, destinationLength: 32)
        #expect(ReachabilityEvaluator.status(of: Self.remote, route: throughLoopback, in: state) == .notReachable)
        #expect(
            ReachabilityEvaluator.status(of: Self.localhost, route: throughLoopback, in: state)
                == .reachable(.ethernetOrWiFi)
        )
    }

    @Test func loopbackTargetRoutedThroughEthernetIsNotReachable() {
        // With lo down the kernel routes 127.0.0.1 out of the default route, where nothing answers it.
        let state = Self.machine()
        #expect(ReachabilityEvaluator.status(of: Self.localhost, route: Self.route(via: 2), in: state) == .notReachable)
        let ipv6Loopback = Array(repeating: UInt8(0), count: 15) + [1]
        #expect(ReachabilityEvaluator.status(of: ipv6Loopback, route: Self.route(via: 2), in: state) == .notReachable)
    }

    @Test func localRouteIsReachableWhileLoopbackIsUp() {
        let own: [UInt8] = [192, 0, 2, 10]
        let local = Self.route(via: 1, destinationLength: 32, table: 255, type: 2)
        let up = Self.machine()
        #expect(ReachabilityEvaluator.status(of: own, route: local, in: up) == .reachable(.ethernetOrWiFi))
        let loopbackDown = Self.state(
            [Self.loopback(flags: Self.loopbackDown), Self.link(2, "eth0")],
            [Self.loopbackAddress(), Self.address(on: 2, own)]
        )
        #expect(ReachabilityEvaluator.status(of: own, route: local, in: loopbackDown) == .notReachable)
    }

    @Test func missingRouteIsNotReachable() {
        #expect(ReachabilityEvaluator.status(of: Self.remote, route: nil, in: Self.machine()) == .notReachable)
        let withoutInterface = Self.route(via: nil, destinationLength: 32)
        #expect(
            ReachabilityEvaluator.status(of: Self.remote, route: withoutInterface, in: Self.machine()) == .notReachable
        )
    }

    @Test(arguments: [7, 6, 8] as [UInt8])
    func unreachableBlackholeOrProhibitRouteIsNotReachable(type: UInt8) {
        let route = Self.route(via: 2, destinationLength: 32, type: type)
        #expect(ReachabilityEvaluator.status(of: Self.remote, route: route, in: Self.machine()) == .notReachable)
    }

    // MARK: Connection types

    @Test(arguments: ["wwan0", "wwp0s20f0u6", "ppp0", "rmnet0", "rmnet_data0", "ccmni0", "qmimux0", "mhi_hwip0"])
    func modemInterfaceNamesAreCellular(name: String) {
        #expect(ReachabilityEvaluator.connectionType(of: Self.link(3, name)) == .cellular)
    }

    @Test(arguments: [512, 519] as [UInt16])
    func pppAndRawIPLinksAreCellular(hardwareType: UInt16) {
        #expect(
            ReachabilityEvaluator.connectionType(of: Self.link(3, "modem0", hardwareType: hardwareType)) == .cellular
        )
        #expect(ReachabilityEvaluator.connectionType(of: Self.link(3, nil, hardwareType: hardwareType)) == .cellular)
    }

    @Test(arguments: ["eth0", "wlan0", "enp3s0", "usb0", "lo", "wg0", "tun0"])
    func otherInterfacesAreEthernetOrWiFi(name: String) {
        #expect(ReachabilityEvaluator.connectionType(of: Self.link(2, name)) == .ethernetOrWiFi)
    }

    @Test func unknownOrUnnamedLinkIsEthernetOrWiFi() {
        #expect(ReachabilityEvaluator.connectionType(of: nil) == .ethernetOrWiFi)
        #expect(ReachabilityEvaluator.connectionType(of: Self.link(2, nil)) == .ethernetOrWiFi)
    }

    // MARK: Numeric addresses

    @Test func bracketedIPv6LoopbackParsesToSixteenBytes() throws {
        let bytes = try #require(NetlinkReachability.numericAddress("[::1]"))
        #expect(bytes == Array(repeating: 0, count: 15) + [1])
        #expect(ReachabilityEvaluator.isLoopback(bytes))
    }

    @Test func ipv4LiteralParsesToNetworkOrder() {
        #expect(NetlinkReachability.numericAddress("192.0.2.1") == [192, 0, 2, 1])
        #expect(
            NetlinkReachability.numericAddress("2001:db8::1") == [0x20, 0x01, 0x0d, 0xb8]
                + Array(repeating: 0, count: 11) + [1]
        )
    }

    @Test(arguments: ["10.0.0.256", "example.com", "", "[10.0.0.1", "::1]", "1.2.3"])
    func nonNumericAddressIsNil(text: String) {
        #expect(NetlinkReachability.numericAddress(text) == nil)
    }

    @Test func resolvingANumericAddressReturnsItWithoutDNS() {
        #expect(NetlinkReachability.resolve("127.0.0.1") == [[127, 0, 0, 1]])
        #expect(NetlinkReachability.resolve("[::1]") == [Array(repeating: 0, count: 15) + [1]])
    }

    @Test func loopbackAddressesAreRecognised() {
        #expect(ReachabilityEvaluator.isLoopback([127, 1, 2, 3]))
        #expect(!ReachabilityEvaluator.isLoopback([128, 0, 0, 1]))
        #expect(!ReachabilityEvaluator.isLoopback(Array(repeating: 0, count: 16)))
        #expect(!ReachabilityEvaluator.isLoopback([1] + Array(repeating: 0, count: 14) + [1]))
    }
}
#endif
