#if os(Linux)
/// Builds the rtnetlink requests Kite sends on a `NETLINK_ROUTE` socket, in host byte order.
///
/// The header's port ID is 0 (the kernel fills in the sender); the caller chooses the sequence number and
/// matches replies by it.
///
/// ```swift
/// let request = NetlinkRequest.dump(Netlink.getLink, family: Netlink.familyUnspecified, sequence: 1)
/// // send `request`, then read replies with sequence 1 until `.done`
/// ```
enum NetlinkRequest {
    /// A dump request: every link, address or route the kernel has.
    ///
    /// The body is the full fixed structure of the request type, zeroed except for its family byte:
    /// `ifinfomsg` for `RTM_GETLINK`, `ifaddrmsg` for `RTM_GETADDR`, `rtmsg` for `RTM_GETROUTE`, and a padded
    /// `rtgenmsg` for any other type. The flags are `NLM_F_REQUEST | NLM_F_DUMP`.
    ///
    /// - Parameters:
    ///   - type: `Netlink.getLink`, `Netlink.getAddress` or `Netlink.getRoute`.
    ///   - family: `AF_UNSPEC` (0) for all families, or `AF_INET`/`AF_INET6` to narrow an address or route dump.
    ///   - sequence: The sequence number the replies will carry.
    /// - Returns: The request's bytes.
    static func dump(_ type: UInt16, family: UInt8, sequence: UInt32) -> [UInt8] {
        let size: Int
        switch type {
        case Netlink.getLink: size = Netlink.linkInfoSize
        case Netlink.getAddress: size = Netlink.addressInfoSize
        case Netlink.getRoute: size = Netlink.routeInfoSize
        default: size = Netlink.genericInfoSize
        }
        // The family is the first byte of ifinfomsg, ifaddrmsg, rtmsg and rtgenmsg alike.
        var body = [UInt8](repeating: 0, count: size)
        body[0] = family
        return Self.message(type: type, flags: Netlink.requestFlag | Netlink.dumpFlags, sequence: sequence, body: body)
    }

    /// A request for the route the kernel would use to reach `address` (what `ip route get` sends).
    ///
    /// An `RTM_GETROUTE` with `NLM_F_REQUEST` only: an `rtmsg` with the family (`AF_INET` for a 4-byte address,
    /// `AF_INET6` for 16 bytes) and a destination length of 32 or 128, followed by an `RTA_DST` attribute. The
    /// kernel answers with one `RTM_NEWROUTE`, or an `NLMSG_ERROR` such as `-ENETUNREACH` (-101).
    ///
    /// - Parameters:
    ///   - address: The destination in network byte order: 4 or 16 bytes.
    ///   - sequence: The sequence number the reply will carry.
    /// - Returns: The request's bytes, or an empty array when `address` is neither 4 nor 16 bytes long.
    static func route(to address: [UInt8], sequence: UInt32) -> [UInt8] {
        let family: UInt8
        switch address.count {
        case 4: family = Netlink.familyIPv4
        case 16: family = Netlink.familyIPv6
        default: return []
        }
        var body = [UInt8](repeating: 0, count: Netlink.routeInfoSize)
        body[0] = family
        body[1] = UInt8(address.count * 8)
        body += Self.attribute(type: Netlink.routeDestination, payload: address)
        return Self.message(type: Netlink.getRoute, flags: Netlink.requestFlag, sequence: sequence, body: body)
    }

    /// A `struct nlmsghdr` followed by `body`, padded to `NLMSG_ALIGNTO`.
    private static func message(type: UInt16, flags: UInt16, sequence: UInt32, body: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Netlink.headerSize + Netlink.aligned(body.count))
        Self.append(UInt32(Netlink.headerSize + body.count), to: &bytes)
        Self.append(type, to: &bytes)
        Self.append(flags, to: &bytes)
        Self.append(sequence, to: &bytes)
        Self.append(UInt32(0), to: &bytes)
        bytes += body
        bytes += repeatElement(0, count: Netlink.aligned(bytes.count) - bytes.count)
        return bytes
    }

    /// A `struct rtattr` with `payload`, padded to `RTA_ALIGNTO`.
    private static func attribute(type: UInt16, payload: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = []
        Self.append(UInt16(Netlink.attributeHeaderSize + payload.count), to: &bytes)
        Self.append(type, to: &bytes)
        bytes += payload
        bytes += repeatElement(0, count: Netlink.aligned(bytes.count) - bytes.count)
        return bytes
    }

    /// Appends `value` in host byte order, as the kernel reads netlink headers and attributes.
    private static func append(_ value: some FixedWidthInteger, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value) { bytes += $0 }
    }
}
#endif
