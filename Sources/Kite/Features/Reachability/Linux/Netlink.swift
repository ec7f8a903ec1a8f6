#if os(Linux)
/// Numeric constants of the rtnetlink protocol (`NETLINK_ROUTE`), checked against the kernel's UAPI headers.
///
/// Swift's Glibc module does not export `linux/netlink.h` or `linux/rtnetlink.h`, so the values are written out
/// here; each comment names the kernel macro and its header.
enum Netlink {
    // MARK: Message types (nlmsg_type)

    /// `NLMSG_NOOP` (linux/netlink.h).
    static let noop: UInt16 = 1
    /// `NLMSG_ERROR` (linux/netlink.h): a `struct nlmsgerr`; error 0 is an acknowledgement.
    static let error: UInt16 = 2
    /// `NLMSG_DONE` (linux/netlink.h): the end of a dump.
    static let done: UInt16 = 3
    /// `RTM_NEWLINK` (linux/rtnetlink.h).
    static let newLink: UInt16 = 16
    /// `RTM_DELLINK` (linux/rtnetlink.h).
    static let deleteLink: UInt16 = 17
    /// `RTM_GETLINK` (linux/rtnetlink.h).
    static let getLink: UInt16 = 18
    /// `RTM_NEWADDR` (linux/rtnetlink.h).
    static let newAddress: UInt16 = 20
    /// `RTM_DELADDR` (linux/rtnetlink.h).
    static let deleteAddress: UInt16 = 21
    /// `RTM_GETADDR` (linux/rtnetlink.h).
    static let getAddress: UInt16 = 22
    /// `RTM_NEWROUTE` (linux/rtnetlink.h).
    static let newRoute: UInt16 = 24
    /// `RTM_DELROUTE` (linux/rtnetlink.h).
    static let deleteRoute: UInt16 = 25
    /// `RTM_GETROUTE` (linux/rtnetlink.h).
    static let getRoute: UInt16 = 26

    // MARK: Header flags (nlmsg_flags)

    /// `NLM_F_REQUEST` (linux/netlink.h).
    static let requestFlag: UInt16 = 0x1
    /// `NLM_F_MULTI` (linux/netlink.h): part of a multipart reply, ended by `NLMSG_DONE`.
    static let multipartFlag: UInt16 = 0x2
    /// `NLM_F_ACK` (linux/netlink.h).
    static let acknowledgeFlag: UInt16 = 0x4
    /// `NLM_F_DUMP` = `NLM_F_ROOT | NLM_F_MATCH` (linux/netlink.h).
    static let dumpFlags: UInt16 = 0x300

    // MARK: Layout

    /// `sizeof(struct nlmsghdr)` (linux/netlink.h).
    static let headerSize = 16
    /// `NLMSG_ALIGNTO` (linux/netlink.h) and `RTA_ALIGNTO` (linux/rtnetlink.h).
    static let alignment = 4
    /// `sizeof(struct ifinfomsg)` (linux/rtnetlink.h).
    static let linkInfoSize = 16
    /// `sizeof(struct ifaddrmsg)` (linux/if_addr.h).
    static let addressInfoSize = 8
    /// `sizeof(struct rtmsg)` (linux/rtnetlink.h).
    static let routeInfoSize = 12
    /// `sizeof(struct rtgenmsg)` (linux/rtnetlink.h), padded to `NLMSG_ALIGNTO`.
    static let genericInfoSize = 4
    /// `sizeof(int)`: the error code at the start of `struct nlmsgerr` (linux/netlink.h).
    static let errorCodeSize = 4
    /// `sizeof(struct rtattr)` (linux/rtnetlink.h).
    static let attributeHeaderSize = 4
    /// `NLA_TYPE_MASK` (linux/netlink.h): an attribute type without `NLA_F_NESTED` and `NLA_F_NET_BYTEORDER`.
    static let attributeTypeMask: UInt16 = 0x3FFF

    /// `NLMSG_ALIGN` and `RTA_ALIGN`: `length` rounded up to a multiple of 4.
    static func aligned(_ length: Int) -> Int {
        (length + Self.alignment - 1) & ~(Self.alignment - 1)
    }

    // MARK: Link attributes (linux/if_link.h)

    /// `IFLA_IFNAME`: the interface name, NUL-terminated.
    static let linkName: UInt16 = 3
    /// `IFLA_OPERSTATE`: a `u8`, RFC 2863 state (`IF_OPER_*`).
    static let linkOperationalState: UInt16 = 16
    /// `IFLA_LINKINFO`: nested `IFLA_INFO_*` attributes.
    static let linkInfo: UInt16 = 18
    /// `IFLA_INFO_KIND` inside `IFLA_LINKINFO`: the driver kind, NUL-terminated ("veth", "wireguard").
    static let linkInfoKind: UInt16 = 1

    // MARK: Address attributes (linux/if_addr.h)

    /// `IFA_ADDRESS`: the prefix address; the peer's address on point-to-point links.
    static let addressAddress: UInt16 = 1
    /// `IFA_LOCAL`: the local address.
    static let addressLocal: UInt16 = 2
    /// `IFA_FLAGS`: a `u32` that replaces the `u8` `ifa_flags`.
    static let addressFlags: UInt16 = 8

    // MARK: Route attributes (linux/rtnetlink.h)

    /// `RTA_DST`.
    static let routeDestination: UInt16 = 1
    /// `RTA_OIF`: an `int` interface index.
    static let routeOutputInterface: UInt16 = 4
    /// `RTA_GATEWAY`.
    static let routeGateway: UInt16 = 5
    /// `RTA_PRIORITY`: a `u32` metric.
    static let routePriority: UInt16 = 6
    /// `RTA_TABLE`: a `u32` that replaces the `u8` `rtm_table`.
    static let routeTable: UInt16 = 15

    // MARK: Interface flags (linux/if.h)

    /// `IFF_UP`: administratively up.
    static let interfaceUp: UInt32 = 0x1
    /// `IFF_LOOPBACK`.
    static let interfaceLoopback: UInt32 = 0x8
    /// `IFF_RUNNING`: RFC 2863 `OPER_UP`.
    static let interfaceRunning: UInt32 = 0x40
    /// `IFF_LOWER_UP`: the driver signals a carrier.
    static let interfaceLowerUp: UInt32 = 0x10000

    // MARK: Operational states (linux/if.h)

    /// `IF_OPER_UNKNOWN`: what `lo` and many virtual links report.
    static let operationalStateUnknown: UInt8 = 0
    /// `IF_OPER_DOWN`.
    static let operationalStateDown: UInt8 = 2
    /// `IF_OPER_LOWERLAYERDOWN`: up, but the layer below is down (a veth whose peer is down).
    static let operationalStateLowerLayerDown: UInt8 = 3
    /// `IF_OPER_UP`.
    static let operationalStateUp: UInt8 = 6

    // MARK: Route types, tables and scopes (linux/rtnetlink.h)

    /// `RTN_UNICAST`: a gateway or direct route.
    static let routeTypeUnicast: UInt8 = 1
    /// `RTN_LOCAL`: the destination is an address of this host.
    static let routeTypeLocal: UInt8 = 2
    /// `RTN_BLACKHOLE`.
    static let routeTypeBlackhole: UInt8 = 6
    /// `RTN_UNREACHABLE`.
    static let routeTypeUnreachable: UInt8 = 7
    /// `RTN_PROHIBIT`.
    static let routeTypeProhibit: UInt8 = 8
    /// `RT_TABLE_MAIN`.
    static let mainTable: UInt32 = 254
    /// `RT_TABLE_LOCAL`.
    static let localTable: UInt32 = 255
    /// `RT_SCOPE_UNIVERSE`.
    static let scopeUniverse: UInt8 = 0
    /// `RT_SCOPE_LINK`.
    static let scopeLink: UInt8 = 253
    /// `RT_SCOPE_HOST`.
    static let scopeHost: UInt8 = 254

    // MARK: Address families (bits/socket.h)

    /// `AF_UNSPEC`.
    static let familyUnspecified: UInt8 = 0
    /// `AF_INET`.
    static let familyIPv4: UInt8 = 2
    /// `AF_INET6`.
    static let familyIPv6: UInt8 = 10

    // MARK: Hardware types (linux/if_arp.h)

    /// `ARPHRD_ETHER`.
    static let hardwareEthernet: UInt16 = 1
    /// `ARPHRD_PPP`.
    static let hardwarePPP: UInt16 = 512
    /// `ARPHRD_RAWIP`.
    static let hardwareRawIP: UInt16 = 519
    /// `ARPHRD_LOOPBACK`.
    static let hardwareLoopback: UInt16 = 772
    /// `ARPHRD_NONE`: no link-layer header (WireGuard, tun).
    static let hardwareNone: UInt16 = 65534
}

/// `struct nlmsghdr` (linux/netlink.h), in host byte order.
struct NetlinkHeader: Equatable, Sendable {
    /// `nlmsg_len`: the message's length including this header, before padding.
    var length: UInt32
    /// `nlmsg_type`.
    var type: UInt16
    /// `nlmsg_flags`: `NLM_F_*`.
    var flags: UInt16
    /// `nlmsg_seq`: the sequence number of the request a reply answers; 0 for multicast notifications.
    var sequence: UInt32
    /// `nlmsg_pid`: in replies from the kernel, the port ID of the receiving socket.
    var portID: UInt32
}

/// An `RTM_NEWLINK` or `RTM_DELLINK` message: `struct ifinfomsg` and the attributes Kite reads.
struct LinkMessage: Equatable, Sendable {
    /// Whether this is an `RTM_DELLINK`.
    var isDeletion: Bool
    /// `ifi_index`.
    var index: Int32
    /// `ifi_flags`: `IFF_*`.
    var flags: UInt32
    /// `IFLA_IFNAME` up to its first NUL; `nil` when absent or not valid UTF-8.
    var name: String?
    /// `IFLA_OPERSTATE`: `IF_OPER_*` (`Netlink.operationalStateUp` and neighbours).
    var operationalState: UInt8?
    /// `IFLA_INFO_KIND` inside `IFLA_LINKINFO` ("veth", "wireguard"); `nil` for links without a kind
    /// (physical devices, `lo`) or when it is not valid UTF-8.
    var kind: String?
    /// `ifi_type`: `ARPHRD_*` (1 Ethernet, 772 loopback, 512 PPP, 519 raw IP, 65534 none).
    var hardwareType: UInt16

    /// Whether the interface is administratively up (`IFF_UP`).
    var isUp: Bool {
        self.flags & Netlink.interfaceUp != 0
    }

    /// Whether the interface has a carrier: `IFF_RUNNING` or `IFF_LOWER_UP`, unless `IFLA_OPERSTATE` says
    /// `IF_OPER_DOWN`.
    var hasCarrier: Bool {
        self.flags & (Netlink.interfaceRunning | Netlink.interfaceLowerUp) != 0
            && self.operationalState != Netlink.operationalStateDown
    }

    /// Whether the interface is a loopback (`IFF_LOOPBACK`).
    var isLoopback: Bool {
        self.flags & Netlink.interfaceLoopback != 0
    }
}

/// An `RTM_NEWADDR` or `RTM_DELADDR` message: `struct ifaddrmsg` and the attributes Kite reads.
struct AddressMessage: Equatable, Sendable {
    /// Whether this is an `RTM_DELADDR`.
    var isDeletion: Bool
    /// `ifa_family`: `AF_INET` or `AF_INET6`.
    var family: UInt8
    /// `ifa_prefixlen`.
    var prefixLength: UInt8
    /// `IFA_F_*`: `IFA_FLAGS` when present, else `ifa_flags`.
    var flags: UInt32
    /// `ifa_scope`: `RT_SCOPE_*`.
    var scope: UInt8
    /// `ifa_index`: the interface's index.
    var index: UInt32
    /// `IFA_LOCAL` when present, else `IFA_ADDRESS`, in network byte order. An attribute whose length does not
    /// match the family (4 bytes for `AF_INET`, 16 for `AF_INET6`) is ignored.
    var address: [UInt8]?
}

/// An `RTM_NEWROUTE` or `RTM_DELROUTE` message: `struct rtmsg` and the attributes Kite reads.
struct RouteMessage: Equatable, Sendable {
    /// Whether this is an `RTM_DELROUTE`.
    var isDeletion: Bool
    /// `rtm_family`: `AF_INET` or `AF_INET6`.
    var family: UInt8
    /// `rtm_dst_len`: 0 for a default route.
    var destinationLength: UInt8
    /// `RTA_TABLE` when present, else `rtm_table` (`RT_TABLE_MAIN` = 254, `RT_TABLE_LOCAL` = 255).
    var table: UInt32
    /// `rtm_protocol`: `RTPROT_*` (2 kernel, 3 boot, 4 static).
    var protocolID: UInt8
    /// `rtm_scope`: `RT_SCOPE_*`.
    var scope: UInt8
    /// `rtm_type`: `RTN_*`.
    var type: UInt8
    /// `RTA_DST` in network byte order; ignored when its length does not match the family.
    var destination: [UInt8]?
    /// `RTA_GATEWAY` in network byte order; ignored when its length does not match the family.
    var gateway: [UInt8]?
    /// `RTA_OIF`: the output interface's index.
    var outputInterface: Int32?
    /// `RTA_PRIORITY`: the metric.
    var priority: UInt32?
}

/// One parsed rtnetlink message.
enum NetlinkMessage: Equatable, Sendable {
    /// `RTM_NEWLINK` or `RTM_DELLINK`.
    case link(LinkMessage)
    /// `RTM_NEWADDR` or `RTM_DELADDR`.
    case address(AddressMessage)
    /// `RTM_NEWROUTE` or `RTM_DELROUTE`.
    case route(RouteMessage)
    /// `NLMSG_DONE`: the end of a dump.
    case done
    /// `NLMSG_ERROR`: a negative errno, or 0 for an acknowledgement.
    case error(code: Int32)
    /// Any other type (`NLMSG_NOOP`, `NLMSG_OVERRUN`, other rtnetlink families); callers skip it.
    case other(type: UInt16)
}
#endif
