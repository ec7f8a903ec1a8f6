#if os(Linux)
/// Parses the datagrams a `NETLINK_ROUTE` socket receives into ``NetlinkMessage`` values.
///
/// The parser trusts nothing in the bytes: every length is checked against the bytes that are actually there
/// before it is used, nothing is allocated from a length field, and every loop advances by at least four bytes.
///
/// - A message whose `nlmsg_len` is below 16, beyond the bytes left, or too short for its fixed body
///   (`ifinfomsg`, `ifaddrmsg`, `rtmsg`, or the error code of `nlmsgerr`) is dropped and parsing stops there,
///   keeping the messages before it: past a bad length the next message cannot be found. An unaligned
///   `nlmsg_len` is accepted, as `NLMSG_OK` accepts it; the next message starts at the aligned offset.
/// - An attribute whose `rta_len` is below 4 or runs past its message (or, nested, past its parent attribute)
///   ends the walk of that message's (or parent's) attributes; the message keeps what was read before it.
/// - An attribute with a payload shorter than its type (a `u32` of 3 bytes) or an address whose length does not
///   match the family is ignored; a longer integer payload is read from its first bytes. When an attribute
///   repeats, the last one wins.
/// - Strings (`IFLA_IFNAME`, `IFLA_INFO_KIND`) end at their first NUL, or at the end of the payload when there
///   is none; a string that is not valid UTF-8 is `nil` rather than repaired, so two different names never
///   decode to the same string.
///
/// ```swift
/// let replies = NetlinkParser.messages(in: datagram)
/// for (header, message) in replies where header.sequence == sequence {
///     if case .link(let link) = message, link.isUp { print(link.name ?? "#\(link.index)") }
/// }
/// ```
enum NetlinkParser {
    /// Every well-formed message in one datagram, in order, with its header.
    ///
    /// - Parameters:
    ///   - bytes: One datagram as received.
    /// - Returns: The messages up to the first one whose length cannot be trusted.
    static func messages(in bytes: UnsafeRawBufferPointer) -> [(header: NetlinkHeader, message: NetlinkMessage)] {
        var messages: [(header: NetlinkHeader, message: NetlinkMessage)] = []
        var offset = 0
        while bytes.count - offset >= Netlink.headerSize {
            let header = NetlinkHeader(
                length: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self),
                type: bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt16.self),
                flags: bytes.loadUnaligned(fromByteOffset: offset + 6, as: UInt16.self),
                sequence: bytes.loadUnaligned(fromByteOffset: offset + 8, as: UInt32.self),
                portID: bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self)
            )
            // UInt32 always fits in Int on the 64-bit platforms Kite supports on Linux.
            let length = Int(header.length)
            guard length >= Netlink.headerSize, length <= bytes.count - offset else { break }
            let body = UnsafeRawBufferPointer(rebasing: bytes[(offset + Netlink.headerSize)..<(offset + length)])
            guard let message = Self.message(type: header.type, body: body) else { break }
            messages.append((header: header, message: message))
            offset += Netlink.aligned(length)
        }
        return messages
    }

    /// Every well-formed message in one datagram, in order, with its header.
    ///
    /// - Parameters:
    ///   - bytes: One datagram as received.
    /// - Returns: The messages up to the first one whose length cannot be trusted.
    static func messages(in bytes: [UInt8]) -> [(header: NetlinkHeader, message: NetlinkMessage)] {
        bytes.withUnsafeBytes { Self.messages(in: $0) }
    }

    /// The message of `type` in `body` (the bytes after the header), or `nil` when its fixed part does not fit.
    private static func message(type: UInt16, body: UnsafeRawBufferPointer) -> NetlinkMessage? {
        switch type {
        case Netlink.newLink, Netlink.deleteLink:
            return Self.link(in: body, isDeletion: type == Netlink.deleteLink).map { .link($0) }
        case Netlink.newAddress, Netlink.deleteAddress:
            return Self.address(in: body, isDeletion: type == Netlink.deleteAddress).map { .address($0) }
        case Netlink.newRoute, Netlink.deleteRoute:
            return Self.route(in: body, isDeletion: type == Netlink.deleteRoute).map { .route($0) }
        case Netlink.done:
            return .done
        case Netlink.error:
            guard body.count >= Netlink.errorCodeSize else { return nil }
            return .error(code: body.loadUnaligned(as: Int32.self))
        default:
            return .other(type: type)
        }
    }

    /// `struct ifinfomsg`: family (1), pad (1), type (2), index (4), flags (4), change (4).
    private static func link(in body: UnsafeRawBufferPointer, isDeletion: Bool) -> LinkMessage? {
        guard body.count >= Netlink.linkInfoSize else { return nil }
        var link = LinkMessage(
            isDeletion: isDeletion,
            index: body.loadUnaligned(fromByteOffset: 4, as: Int32.self),
            flags: body.loadUnaligned(fromByteOffset: 8, as: UInt32.self),
            name: nil,
            operationalState: nil,
            kind: nil,
            hardwareType: body.loadUnaligned(fromByteOffset: 2, as: UInt16.self)
        )
        for attribute in Attributes(body, from: Netlink.linkInfoSize) {
            switch attribute.type {
            case Netlink.linkName:
                link.name = Self.string(in: attribute.payload)
            case Netlink.linkOperationalState:
                if let state = attribute.payload.first { link.operationalState = state }
            case Netlink.linkInfo:
                for info in Attributes(attribute.payload, from: 0) where info.type == Netlink.linkInfoKind {
                    link.kind = Self.string(in: info.payload)
                }
            default:
                continue
            }
        }
        return link
    }

    /// `struct ifaddrmsg`: family (1), prefix length (1), flags (1), scope (1), index (4).
    private static func address(in body: UnsafeRawBufferPointer, isDeletion: Bool) -> AddressMessage? {
        guard body.count >= Netlink.addressInfoSize else { return nil }
        var message = AddressMessage(
            isDeletion: isDeletion,
            family: body[0],
            prefixLength: body[1],
            flags: UInt32(body[2]),
            scope: body[3],
            index: body.loadUnaligned(fromByteOffset: 4, as: UInt32.self),
            address: nil
        )
        var local: [UInt8]?
        var address: [UInt8]?
        for attribute in Attributes(body, from: Netlink.addressInfoSize) {
            switch attribute.type {
            case Netlink.addressAddress:
                address = Self.address(in: attribute.payload, family: message.family) ?? address
            case Netlink.addressLocal:
                local = Self.address(in: attribute.payload, family: message.family) ?? local
            case Netlink.addressFlags:
                if let flags = Self.uint32(in: attribute.payload) { message.flags = flags }
            default:
                continue
            }
        }
        message.address = local ?? address
        return message
    }

    /// `struct rtmsg`: family, destination length, source length, TOS, table, protocol, scope, type (1 each),
    /// flags (4).
    private static func route(in body: UnsafeRawBufferPointer, isDeletion: Bool) -> RouteMessage? {
        guard body.count >= Netlink.routeInfoSize else { return nil }
        var route = RouteMessage(
            isDeletion: isDeletion,
            family: body[0],
            destinationLength: body[1],
            table: UInt32(body[4]),
            protocolID: body[5],
            scope: body[6],
            type: body[7],
            destination: nil,
            gateway: nil,
            outputInterface: nil,
            priority: nil
        )
        for attribute in Attributes(body, from: Netlink.routeInfoSize) {
            switch attribute.type {
            case Netlink.routeDestination:
                route.destination = Self.address(in: attribute.payload, family: route.family) ?? route.destination
            case Netlink.routeGateway:
                route.gateway = Self.address(in: attribute.payload, family: route.family) ?? route.gateway
            case Netlink.routeOutputInterface:
                route.outputInterface =
                    Self.uint32(in: attribute.payload).map { Int32(bitPattern: $0) }
                    ?? route.outputInterface
            case Netlink.routePriority:
                route.priority = Self.uint32(in: attribute.payload) ?? route.priority
            case Netlink.routeTable:
                if let table = Self.uint32(in: attribute.payload) { route.table = table }
            default:
                continue
            }
        }
        return route
    }

    /// The bytes up to the first NUL as UTF-8, or `nil` when they are not valid UTF-8.
    private static func string(in payload: UnsafeRawBufferPointer) -> String? {
        let end = payload.firstIndex(of: 0) ?? payload.endIndex
        return String(validating: payload[..<end], as: UTF8.self)
    }

    /// A host-order `u32` payload, or `nil` when it is shorter than 4 bytes.
    private static func uint32(in payload: UnsafeRawBufferPointer) -> UInt32? {
        guard payload.count >= 4 else { return nil }
        return payload.loadUnaligned(as: UInt32.self)
    }

    /// An address payload, or `nil` when its length is wrong for `family` (4 for `AF_INET`, 16 for `AF_INET6`,
    /// at least 1 for any other family).
    private static func address(in payload: UnsafeRawBufferPointer, family: UInt8) -> [UInt8]? {
        switch family {
        case Netlink.familyIPv4: payload.count == 4 ? Array(payload) : nil
        case Netlink.familyIPv6: payload.count == 16 ? Array(payload) : nil
        default: payload.isEmpty ? nil : Array(payload)
        }
    }
}

/// The `struct rtattr` attributes in a buffer, each with its type (without `NLA_F_*` bits) and payload.
///
/// The walk ends at the first attribute whose `rta_len` is below 4 or runs past the buffer; trailing bytes too
/// few for an attribute header (padding) end it too.
private struct Attributes: Sequence, IteratorProtocol {
    private let bytes: UnsafeRawBufferPointer
    private var offset: Int

    /// The attributes of `bytes` that start at `offset`.
    init(_ bytes: UnsafeRawBufferPointer, from offset: Int) {
        self.bytes = bytes
        self.offset = offset
    }

    mutating func next() -> (type: UInt16, payload: UnsafeRawBufferPointer)? {
        guard self.bytes.count - self.offset >= Netlink.attributeHeaderSize else { return nil }
        let length = Int(self.bytes.loadUnaligned(fromByteOffset: self.offset, as: UInt16.self))
        let type = self.bytes.loadUnaligned(fromByteOffset: self.offset + 2, as: UInt16.self)
        guard length >= Netlink.attributeHeaderSize, length <= self.bytes.count - self.offset else {
            self.offset = self.bytes.count
            return nil
        }
        let payload = UnsafeRawBufferPointer(
            rebasing: self.bytes[(self.offset + Netlink.attributeHeaderSize)..<(self.offset + length)]
        )
        // At least 4 bytes forward; past the end when the last attribute lacks its padding.
        self.offset += Netlink.aligned(length)
        return (type: type & Netlink.attributeTypeMask, payload: payload)
    }
}
#endif
