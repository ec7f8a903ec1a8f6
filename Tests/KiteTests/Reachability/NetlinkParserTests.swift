#if os(Linux)
import Glibc
import Testing

@testable import Kite

struct NetlinkParserTests {
    // MARK: Captured messages (see NetlinkCaptures for how they were captured)

    @Test func namespaceLinkDumpReportsLoopbackAndBothVethEnds() {
        let parsed = NetlinkCaptures.namespaceLinks.map { NetlinkParser.messages(in: $0) }
        #expect(parsed.map { $0.map(\.header.length) } == [[1468, 1496], [1496], [20]])
        let messages = parsed.flatMap { $0 }
        #expect(messages.allSatisfy { $0.header.sequence == 101 && $0.header.flags == Netlink.multipartFlag })
        #expect(messages.map(\.message.kind) == ["link", "link", "link", "done"])
        let links = messages.compactMap(\.message.link)
        #expect(
            links == [
                Expected.link(1, flags: 0x8, "lo", state: 2, kind: nil, type: 772),
                Expected.link(2, flags: 0x11043, "wwan0", state: 6, kind: "veth", type: 1),
                Expected.link(3, flags: 0x11043, "veth0", state: 6, kind: "veth", type: 1),
            ]
        )
        // A new namespace's lo is down.
        #expect(links.map(\.isUp) == [false, true, true])
        #expect(links.map(\.hasCarrier) == [false, true, true])
        #expect(links.map(\.isLoopback) == [true, false, false])
    }

    @Test func vethWhosePeerIsDownIsUpWithoutCarrier() {
        let links = NetlinkCaptures.namespaceLinksPeerDown.flatMap { NetlinkParser.messages(in: $0) }
            .compactMap(\.message.link)
        // wwan0 is administratively down; veth0 is up, but neither RUNNING nor LOWER_UP, and LOWERLAYERDOWN.
        #expect(links.map(\.name) == ["lo", "wwan0", "veth0"])
        #expect(links.map(\.flags) == [0x8, 0x1002, 0x1003])
        #expect(links.map(\.operationalState) == [2, 2, 3])
        #expect(links.map(\.isUp) == [false, false, true])
        #expect(links.map(\.hasCarrier) == [false, false, false])
    }

    @Test func hostLinkDumpReportsLoopbackUpWithUnknownOperationalState() {
        let messages = NetlinkCaptures.hostLinks.flatMap { NetlinkParser.messages(in: $0) }
        #expect(messages.last?.message == .done)
        let links = messages.compactMap(\.message.link)
        #expect(links.map(\.name) == ["lo", "ifb0", "ifb1", "eth0"])
        #expect(links.map(\.index) == [1, 2, 3, 4])
        #expect(links.map(\.flags) == [0x10049, 0x82, 0x82, 0x11043])
        #expect(links.map(\.operationalState) == [0, 2, 2, 6])
        #expect(links.map(\.kind) == [nil, "ifb", "ifb", nil])
        #expect(links.map(\.hardwareType) == [772, 1, 1, 1])
        #expect(links.map(\.isUp) == [true, false, false, true])
        #expect(links.map(\.hasCarrier) == [true, false, false, true])
        #expect(links.map(\.isLoopback) == [true, false, false, false])
    }

    @Test func namespaceAddressDumpReportsIPv4IPv6AndLinkLocalAddresses() {
        let messages = NetlinkCaptures.namespaceAddresses.flatMap { NetlinkParser.messages(in: $0) }
        #expect(messages.map(\.message.kind) == ["address", "address", "address", "address", "done"])
        let fd001: [UInt8] = [0xFD, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]
        let linkLocal2: [UInt8] = [0xFE, 0x80, 0, 0, 0, 0, 0, 0, 0x48, 0x12, 0xE6, 0xFF, 0xFE, 0xBB, 0xCF, 0x8A]
        let linkLocal3: [UInt8] = [0xFE, 0x80, 0, 0, 0, 0, 0, 0, 0xE8, 0xF3, 0xF2, 0xFF, 0xFE, 0x5C, 0x7D, 0x20]
        #expect(
            messages.compactMap(\.message.address) == [
                Expected.address(2, prefix: 24, flags: 0x80, scope: 0, index: 3, [10, 77, 0, 1]),
                Expected.address(10, prefix: 64, flags: 0x80, scope: 253, index: 2, linkLocal2),
                // IFA_F_PERMANENT | IFA_F_NODAD, from IFA_FLAGS.
                Expected.address(10, prefix: 64, flags: 0x82, scope: 0, index: 3, fd001),
                Expected.address(10, prefix: 64, flags: 0x80, scope: 253, index: 3, linkLocal3),
            ]
        )
    }

    @Test func namespaceRouteDumpStartsWithTheDefaultRoute() throws {
        let messages = NetlinkCaptures.namespaceRoutes.flatMap { NetlinkParser.messages(in: $0) }
        #expect(messages.last?.message == .done)
        let routes = messages.compactMap(\.message.route)
        try #require(routes.count == 12)
        #expect(
            routes[0]
                == Expected.route(
                    2,
                    length: 0,
                    table: 254,
                    protocol: 3,
                    scope: 0,
                    type: 1,
                    nil,
                    via: [10, 77, 0, 2],
                    3
                )
        )
        #expect(routes[1].destination == [10, 77, 0, 0] && routes[1].scope == Netlink.scopeLink)
        #expect(routes[2].destination == [10, 77, 0, 1] && routes[2].scope == Netlink.scopeHost)
        #expect(routes.map(\.family) == [2, 2, 2, 2, 10, 10, 10, 10, 10, 10, 10, 10])
        #expect(routes.map(\.destinationLength) == [0, 24, 32, 32, 64, 64, 64, 128, 128, 128, 8, 8])
        #expect(routes.map(\.table) == [254, 254, 255, 255, 254, 254, 254, 255, 255, 255, 255, 255])
        // Unicast, local, broadcast (3), multicast (5).
        #expect(routes.map(\.type) == [1, 1, 2, 3, 1, 1, 1, 2, 2, 2, 5, 5])
        #expect(routes.map(\.outputInterface) == [3, 3, 3, 3, 3, 2, 3, 3, 2, 3, 2, 3])
        #expect(routes.map(\.priority) == [nil, nil, nil, nil, 256, 256, 256, 0, 0, 0, 256, 256])
        #expect(routes.allSatisfy { $0.gateway == nil || $0.destinationLength == 0 })
    }

    @Test func routeRepliesNameTheOutputInterfaceOrTheError() throws {
        let datagram = try #require(NetlinkCaptures.namespaceRouteFound.first)
        let found = NetlinkParser.messages(in: datagram)
        try #require(found.count == 1)
        #expect(found[0].header.type == Netlink.newRoute && found[0].header.flags == 0 && found[0].header.length == 112)
        let expected = Expected.route(
            2,
            length: 32,
            table: 254,
            protocol: 0,
            scope: 0,
            type: 1,
            [10, 99, 0, 5],
            via: [10, 77, 0, 2],
            3
        )
        #expect(found[0].message == .route(expected))
        let ipv6 = NetlinkCaptures.namespaceRouteFoundIPv6.flatMap { NetlinkParser.messages(in: $0) }
        let route6 = try #require(ipv6.first?.message.route)
        #expect(ipv6.count == 1 && route6.family == 10 && route6.destinationLength == 128)
        #expect(route6.destination == [0xFD, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5])
        #expect(route6.gateway == nil && route6.outputInterface == 3 && route6.priority == 256 && route6.table == 254)

        let unreachable = NetlinkCaptures.namespaceRouteUnreachable.flatMap { NetlinkParser.messages(in: $0) }
        #expect(unreachable.map(\.message) == [.error(code: -101)])
        #expect(unreachable.map(\.header.length) == [56])

        // The kernel answers for 127.0.0.1 with RTN_LOCAL through lo and reports the main table.
        let loopback = NetlinkCaptures.hostRouteToLoopback.flatMap { NetlinkParser.messages(in: $0) }
        let local = try #require(loopback.first?.message.route)
        #expect(local.type == Netlink.routeTypeLocal && local.outputInterface == 1 && local.table == 254)
        #expect(local.destination == [127, 0, 0, 1])
    }

    @Test func hostDumpsEndWithDoneAndHoldTheDefaultRoutes() {
        let addresses = NetlinkCaptures.hostAddresses.flatMap { NetlinkParser.messages(in: $0) }
        #expect(addresses.last?.message == .done)
        let hostAddresses = addresses.compactMap(\.message.address)
        #expect(hostAddresses.map(\.index) == [1, 4, 1, 4, 4])
        #expect(hostAddresses.map(\.prefixLength) == [8, 24, 128, 64, 64])
        #expect(hostAddresses.map(\.scope) == [254, 0, 254, 0, 253])
        #expect(hostAddresses.first?.address == [127, 0, 0, 1])
        #expect(hostAddresses.dropFirst().first?.address == [192, 0, 2, 2])

        let routes = NetlinkCaptures.hostRoutes.flatMap { NetlinkParser.messages(in: $0) }
        #expect(routes.last?.message == .done)
        let defaults = routes.compactMap(\.message.route).filter { $0.destinationLength == 0 }
        #expect(defaults.map(\.family) == [2, 10])
        #expect(defaults.map(\.gateway) == [[192, 0, 2, 1], [0xFD, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]])
        #expect(defaults.map(\.outputInterface) == [4, 4])
        #expect(defaults.map(\.priority) == [nil, 1024])
    }

    // MARK: Synthetic messages

    @Test func parsesEveryMessageOfADatagramInOrder() {
        let datagram =
            Build.message(Netlink.newLink, sequence: 5, Build.link(index: 7, flags: 0x41), Build.attribute(3, "em1\0"))
            + Build.message(Netlink.newAddress, sequence: 6, Build.address(family: 2, prefix: 16, flags: 0, index: 7))
            + Build.message(Netlink.newRoute, sequence: 7, Build.route(family: 2, destination: 0, table: 254, type: 1))
            + Build.message(0x40, sequence: 8, [1, 2, 3, 4]) + Build.message(Netlink.noop, sequence: 9, [])
            + Build.message(Netlink.error, sequence: 10, Build.u32(0) + Build.message(Netlink.getLink, []))
            + Build.message(Netlink.error, sequence: 11, Build.u32(UInt32(bitPattern: -101)))
            + Build.message(Netlink.done, flags: Netlink.multipartFlag, sequence: 12, Build.u32(0))
        let messages = NetlinkParser.messages(in: datagram)
        #expect(messages.map(\.header.sequence) == [5, 6, 7, 8, 9, 10, 11, 12])
        #expect(messages.map(\.header.length) == [40, 24, 28, 20, 16, 36, 20, 20])
        #expect(messages.last?.header.flags == Netlink.multipartFlag)
        #expect(messages.first?.message.link?.name == "em1")
        #expect(messages.first?.message.link?.hasCarrier == true)
        #expect(messages.dropFirst().first?.message.address?.prefixLength == 16)
        #expect(messages.dropFirst(2).first?.message.route?.table == 254)
        #expect(
            messages.dropFirst(3).map(\.message) == [
                .other(type: 0x40), .other(type: Netlink.noop), .error(code: 0), .error(code: -101), .done,
            ]
        )
    }

    @Test func deletionsAreMarked() {
        let datagram =
            Build.message(Netlink.deleteLink, Build.link(index: 2, flags: 0))
            + Build.message(Netlink.deleteAddress, Build.address(family: 2, prefix: 8, flags: 0, index: 2))
            + Build.message(Netlink.deleteRoute, Build.route(family: 2, destination: 0, table: 254, type: 1))
            + Build.message(Netlink.newLink, Build.link(index: 2, flags: 0))
        let messages = NetlinkParser.messages(in: datagram).map(\.message)
        #expect(messages.compactMap(\.link).map(\.isDeletion) == [true, false])
        #expect(messages.compactMap(\.address).map(\.isDeletion) == [true])
        #expect(messages.compactMap(\.route).map(\.isDeletion) == [true])
    }

    @Test func extendedFlagsAndTablesReplaceTheirOneByteFields() {
        let address = Build.address(family: 2, prefix: 24, flags: 0x80, index: 3)
        let addresses = NetlinkParser.messages(
            in: Build.message(Netlink.newAddress, address, Build.attribute(8, Build.u32(0x300)))
                + Build.message(Netlink.newAddress, address)
                + Build.message(Netlink.newAddress, address, Build.attribute(8, [1, 2, 3]))
        )
        // IFA_FLAGS replaces ifa_flags; a 3-byte IFA_FLAGS is ignored.
        #expect(addresses.compactMap(\.message.address).map(\.flags) == [0x300, 0x80, 0x80])

        let route = Build.route(family: 2, destination: 0, table: 252, type: 1)
        let routes = NetlinkParser.messages(
            in: Build.message(Netlink.newRoute, route, Build.attribute(15, Build.u32(1000)))
                + Build.message(Netlink.newRoute, route)
        )
        #expect(routes.compactMap(\.message.route).map(\.table) == [1000, 252])
    }

    @Test func localAddressWinsOverPrefixAddressAndWrongLengthsAreIgnored() {
        let body = Build.address(family: 2, prefix: 32, flags: 0, index: 9)
        let peer = Build.attribute(1, [10, 0, 0, 2])
        let local = Build.attribute(2, [10, 0, 0, 1])
        let datagram =
            Build.message(Netlink.newAddress, body, peer, local) + Build.message(Netlink.newAddress, body, local, peer)
            + Build.message(Netlink.newAddress, body, peer)
            + Build.message(Netlink.newAddress, body, Build.attribute(2, [10, 0, 0]), peer)
            + Build.message(Netlink.newAddress, body, Build.attribute(1, [UInt8](repeating: 1, count: 16)))
        #expect(
            NetlinkParser.messages(in: datagram).map(\.message.address?.address) == [
                [10, 0, 0, 1], [10, 0, 0, 1], [10, 0, 0, 2], [10, 0, 0, 2], nil,
            ]
        )
        let route = Build.route(family: 10, destination: 0, table: 254, type: 1)
        let routes = NetlinkParser.messages(
            in: Build.message(Netlink.newRoute, route, Build.attribute(5, [10, 0, 0, 1]), Build.attribute(4, [3, 0]))
        )
        #expect(routes.first?.message.route?.gateway == nil && routes.first?.message.route?.outputInterface == nil)
    }

    @Test func nestedLinkInfoIsReadEvenWithTheNestedFlag() {
        let info = Build.attribute(0x8000 | 18, Build.attribute(1, "wireguard\0") + Build.attribute(2, [0, 0, 0, 0]))
        let messages = NetlinkParser.messages(
            in: Build.message(Netlink.newLink, Build.link(index: 4, flags: 0x10041, type: 65534), info)
        )
        #expect(messages.first?.message.link?.kind == "wireguard")
        #expect(messages.first?.message.link?.hardwareType == 65534)
    }

    /// Carrier: IFF_RUNNING or IFF_LOWER_UP, unless IFLA_OPERSTATE says IF_OPER_DOWN.
    @Test(
        arguments: [
            (0x41, nil, true), (0x10001, nil, true), (0x10041, 0, true), (0x10041, 6, true), (0x41, 2, false),
            (0x10001, 2, false), (0x1, nil, false), (0x1, 6, false),
        ] as [(UInt32, UInt8?, Bool)]
    )
    func carrierNeedsRunningOrLowerUpAndNoDownState(flags: UInt32, state: UInt8?, hasCarrier: Bool) {
        let link = Expected.link(1, flags: flags, nil, state: state, kind: nil, type: 1)
        #expect(link.hasCarrier == hasCarrier)
        #expect(link.isUp && !link.isLoopback)
    }

    // MARK: Truncation and lies

    /// The rule: parsing the first `count` bytes of a datagram gives exactly the messages of the full parse that
    /// end (at `offset + nlmsg_len`, before padding) within those bytes, equal in header and content. A message
    /// cut by the end of the buffer is dropped whole, never returned with fewer attributes.
    @Test func everyPrefixOfEveryCaptureParsesToAPrefixOfTheFullParse() {
        for (name, datagram) in NetlinkCaptures.all {
            let full = NetlinkParser.messages(in: datagram)
            var ends: [Int] = []
            var offset = 0
            for (header, _) in full {
                ends.append(offset + Int(header.length))
                offset += (Int(header.length) + 3) & ~3
            }
            #expect(ends.last == datagram.count, "\(name) parses to its end")
            for count in 0..<datagram.count {
                let parsed = datagram.withUnsafeBytes {
                    NetlinkParser.messages(in: UnsafeRawBufferPointer(rebasing: $0[..<count]))
                }
                let expected = ends.filter { $0 <= count }.count
                #expect(parsed.count == expected, "\(name) cut at \(count)")
                for index in 0..<min(parsed.count, expected) where parsed[index] != full[index] {
                    Issue.record("\(name) cut at \(count): message \(index) differs")
                }
            }
        }
    }

    /// A message whose `nlmsg_len` claims less than the kernel wrote keeps the attributes that end within it.
    @Test func shortenedLinkMessageKeepsTheAttributesThatFit() throws {
        let datagram = try #require(NetlinkCaptures.namespaceLinks.dropFirst().first)
        let full = try #require(NetlinkParser.messages(in: datagram).first?.message.link)
        let ends = Build.attributeEnds(in: datagram, from: 32)
        let nameEnd = try #require(ends[3])
        let stateEnd = try #require(ends[16])
        let infoEnd = try #require(ends[18])
        for length in 16...datagram.count {
            var shortened = Array(datagram[..<length])
            shortened.replaceSubrange(0..<4, with: Build.u32(UInt32(length)))
            let messages = NetlinkParser.messages(in: shortened)
            guard length >= 32 else {
                #expect(messages.isEmpty, "length \(length)")
                continue
            }
            let link = try #require(messages.first?.message.link, "length \(length)")
            #expect(link.index == full.index && link.flags == full.flags && link.hardwareType == full.hardwareType)
            #expect(link.name == (length >= nameEnd ? "veth0" : nil), "length \(length)")
            #expect(link.operationalState == (length >= stateEnd ? 6 : nil), "length \(length)")
            #expect(link.kind == (length >= infoEnd ? "veth" : nil), "length \(length)")
        }
    }

    @Test(arguments: [0, 15] as [UInt32])
    func headerLengthBelowSixteenStopsParsing(length: UInt32) {
        let datagram = Build.message(Netlink.done, length: length, []) + Build.message(Netlink.done, [])
        #expect(NetlinkParser.messages(in: datagram).isEmpty)
    }

    @Test func unalignedHeaderLengthIsAcceptedAndTheNextMessageStartsAligned() {
        let other = Build.message(0x40, length: 17, [0xAA, 0, 0, 0])
        #expect(
            NetlinkParser.messages(in: other + Build.message(Netlink.done, [])).map(\.message) == [
                .other(type: 0x40), .done,
            ]
        )
        #expect(NetlinkParser.messages(in: Array(other[..<17])).map(\.message) == [.other(type: 0x40)])
        // 17 bytes leave no room for an ifinfomsg.
        let link = Build.message(Netlink.newLink, length: 17, Build.link(index: 1, flags: 1))
        #expect(NetlinkParser.messages(in: link + Build.message(Netlink.done, [])).isEmpty)
    }

    /// 48 bytes are left after the first message; the lying one claims more.
    @Test(arguments: [49, 64, 0x1_0000, 0xFFFF_FFFF] as [UInt32])
    func headerLengthPastTheBufferKeepsTheMessagesBefore(length: UInt32) {
        let lie = Build.message(Netlink.newLink, length: length, Build.link(index: 1, flags: 1))
        let datagram = Build.message(Netlink.done, []) + lie + Build.message(Netlink.done, [])
        #expect(NetlinkParser.messages(in: datagram).map(\.message) == [.done])
        #expect(NetlinkParser.messages(in: Array(datagram[..<36])).map(\.message) == [.done])
    }

    @Test func shortFixedBodiesAndTrailingBytesAreDropped() {
        let done = Build.message(Netlink.done, [])
        for (type, size) in [
            (Netlink.newLink, 16), (Netlink.newAddress, 8), (Netlink.newRoute, 12), (Netlink.error, 4),
        ] {
            let short = Build.message(type, [UInt8](repeating: 0, count: size - 1))
            #expect(NetlinkParser.messages(in: done + short + done).map(\.message) == [.done], "type \(type)")
        }
        #expect(NetlinkParser.messages(in: done + [16, 0, 0, 0, 3, 0, 0]).map(\.message) == [.done])
    }

    @Test(arguments: [0, 2, 3, 200] as [UInt16])
    func badAttributeLengthEndsTheAttributesButKeepsTheMessage(length: UInt16) {
        let lie = Build.u16(length) + Build.u16(16) + [6, 0, 0, 0]
        let datagram =
            Build.message(Netlink.newLink, Build.link(index: 5, flags: 1), Build.attribute(3, "eth9\0"), lie)
            + Build.message(Netlink.newLink, Build.link(index: 6, flags: 1), Build.attribute(16, [6]))
        let links = NetlinkParser.messages(in: datagram).compactMap(\.message.link)
        #expect(links.map(\.index) == [5, 6])
        #expect(links.map(\.name) == ["eth9", nil])
        #expect(links.map(\.operationalState) == [nil, 6])
    }

    @Test func lastAttributeWithoutPaddingIsRead() {
        // rta_len 10 and nlmsg_len 42: the attribute ends exactly at the message's end, with no padding.
        let message = Build.message(
            Netlink.newLink,
            length: 42,
            Build.link(index: 5, flags: 1),
            Build.attribute(3, "veth0\0")
        )
        let datagram = message + Array(message[..<42])
        #expect(NetlinkParser.messages(in: datagram).compactMap(\.message.link?.name) == ["veth0", "veth0"])
    }

    /// The inner payload is 12 bytes: rta_len 9 ("veth\0") and 12 (with padding) are true, the others lie.
    @Test(arguments: [0, 3, 9, 12, 13, 64] as [UInt16])
    func lyingNestedLengthLosesTheKindOnly(innerLength: UInt16) {
        let inner = Build.u16(innerLength) + Build.u16(1) + Array("veth\0\0\0\0".utf8)
        let datagram = Build.message(
            Netlink.newLink,
            Build.link(index: 3, flags: 0x11043),
            Build.attribute(18, inner),
            Build.attribute(16, [6])
        )
        let link = NetlinkParser.messages(in: datagram).first?.message.link
        #expect(link?.kind == (innerLength == 9 || innerLength == 12 ? "veth" : nil))
        #expect(link?.operationalState == 6)
    }

    /// Names end at the first NUL or at the payload's end; bytes that are not UTF-8 give `nil`, not a repair.
    @Test(
        arguments: [
            (Array("eth9".utf8), "eth9"), (Array("ab\0cd".utf8), "ab"), ([0xFF, 0xFE, 0], nil), ([], ""),
            ([0x65, 0xC3, 0x28, 0], nil), (Array("café\0".utf8), "café"),
        ] as [([UInt8], String?)]
    )
    func interfaceNamesStopAtNULAndRejectInvalidUTF8(payload: [UInt8], name: String?) {
        let datagram = Build.message(Netlink.newLink, Build.link(index: 1, flags: 0), Build.attribute(3, payload))
        let link = NetlinkParser.messages(in: datagram).first?.message.link
        #expect(link?.index == 1)
        #expect(link?.name == name)
    }

    // MARK: Fuzz

    @Test func mutatedAndTruncatedCapturesNeverTrapOrHang() async {
        var random = SplitMix64(seed: 0x4B69_7465_4E65_746C)
        let interesting: [UInt32] = [0, 1, 3, 4, 15, 16, 17, 20, 0xFF, 0xFFFF, 0x1_0000, 0xFFFF_FFFF]
        for (name, datagrams) in NetlinkCaptures.named {
            for iteration in 0..<5000 {
                await yieldNowAndThen(iteration, every: 250)
                var bytes = datagrams[iteration % datagrams.count]
                for _ in 0...random.next(below: 8) {
                    let position = random.next(below: bytes.count)
                    if random.next(below: 2) == 0 {
                        bytes[position] = UInt8(truncatingIfNeeded: random.next())
                    } else {
                        let value = Build.u32(interesting[random.next(below: interesting.count)])
                        for (index, byte) in value.enumerated() where position + index < bytes.count {
                            bytes[position + index] = byte
                        }
                    }
                }
                if random.next(below: 4) == 0 { bytes.removeLast(random.next(below: bytes.count + 1)) }
                let messages = NetlinkParser.messages(in: bytes)
                let consumed = messages.reduce(0) { $0 + ((Int($1.header.length) + 3) & ~3) }
                if messages.contains(where: { $0.header.length < 16 }) || consumed > bytes.count + 3 {
                    Issue.record("\(name) iteration \(iteration): impossible parse")
                }
            }
        }
    }

    // MARK: Requests

    @Test func dumpRequestsCarryTheFullFixedBody() {
        #expect(
            NetlinkRequest.dump(Netlink.getLink, family: 0, sequence: 7) == [
                32, 0, 0, 0, 18, 0, 0x01, 0x03, 7, 0, 0, 0, 0, 0, 0, 0,
                0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
            ]
        )
        #expect(
            NetlinkRequest.dump(Netlink.getAddress, family: 2, sequence: 8) == [
                24, 0, 0, 0, 22, 0, 0x01, 0x03, 8, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0,
            ]
        )
        #expect(
            NetlinkRequest.dump(Netlink.getRoute, family: 10, sequence: 0x0102_0304) == [
                28, 0, 0, 0, 26, 0, 0x01, 0x03, 4, 3, 2, 1, 0, 0, 0, 0, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
            ]
        )
    }

    @Test func routeRequestsCarryFamilyPrefixLengthAndDestination() {
        #expect(
            NetlinkRequest.route(to: [10, 99, 0, 5], sequence: 9) == [
                36, 0, 0, 0, 26, 0, 0x01, 0x00, 9, 0, 0, 0, 0, 0, 0, 0,
                2, 32, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                8, 0, 1, 0, 10, 99, 0, 5,
            ]
        )
        let fd005: [UInt8] = [0xFD, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5]
        #expect(
            NetlinkRequest.route(to: fd005, sequence: 10)
                == [
                    48, 0, 0, 0, 26, 0, 0x01, 0x00, 10, 0, 0, 0, 0, 0, 0, 0,
                    10, 128, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                    20, 0, 1, 0,
                ] + fd005
        )
        #expect(NetlinkRequest.route(to: [10, 99, 0], sequence: 1).isEmpty)
        #expect(NetlinkRequest.route(to: [], sequence: 1).isEmpty)
    }

    @Test func kernelAnswersTheRequestsWithLoopback() throws {
        let socket = try LiveSocket()
        let links = try socket.exchange(NetlinkRequest.dump(Netlink.getLink, family: 0, sequence: 1), sequence: 1)
        #expect(links.last == .done)
        let loopback = try #require(links.compactMap(\.link).first { $0.name == "lo" })
        #expect(loopback.isLoopback && loopback.hardwareType == Netlink.hardwareLoopback)

        let addresses = try socket.exchange(
            NetlinkRequest.dump(Netlink.getAddress, family: 0, sequence: 2),
            sequence: 2
        )
        #expect(addresses.last == .done)
        #expect(
            addresses.compactMap(\.address).contains { $0.address == [127, 0, 0, 1] && $0.index == loopback.index }
        )

        let routes = try socket.exchange(NetlinkRequest.dump(Netlink.getRoute, family: 0, sequence: 3), sequence: 3)
        #expect(routes.last == .done)
        #expect(!routes.compactMap(\.route).isEmpty)

        let reply = try socket.exchange(NetlinkRequest.route(to: [127, 0, 0, 1], sequence: 4), sequence: 4)
        let route = try #require(reply.first?.route)
        #expect(reply.count == 1)
        #expect(route.type == Netlink.routeTypeLocal && route.outputInterface == loopback.index)
        #expect(route.destination == [127, 0, 0, 1])
    }
}

// MARK: - Helpers

extension NetlinkMessage {
    fileprivate var link: LinkMessage? { if case .link(let link) = self { link } else { nil } }
    fileprivate var address: AddressMessage? { if case .address(let address) = self { address } else { nil } }
    fileprivate var route: RouteMessage? { if case .route(let route) = self { route } else { nil } }
    fileprivate var kind: String {
        switch self {
        case .link: "link"
        case .address: "address"
        case .route: "route"
        case .done: "done"
        case .error: "error"
        case .other: "other"
        }
    }
}

/// Expected values, positional so that tables of them stay short.
private enum Expected {
    static func link(
        _ index: Int32,
        flags: UInt32,
        _ name: String?,
        state: UInt8?,
        kind: String?,
        type: UInt16
    ) -> LinkMessage {
        LinkMessage(
            isDeletion: false,
            index: index,
            flags: flags,
            name: name,
            operationalState: state,
            kind: kind,
            hardwareType: type
        )
    }

    static func address(
        _ family: UInt8,
        prefix: UInt8,
        flags: UInt32,
        scope: UInt8,
        index: UInt32,
        _ address: [UInt8]
    ) -> AddressMessage {
        AddressMessage(
            isDeletion: false,
            family: family,
            prefixLength: prefix,
            flags: flags,
            scope: scope,
            index: index,
            address: address
        )
    }

    static func route(
        _ family: UInt8,
        length: UInt8,
        table: UInt32,
        protocol protocolID: UInt8,
        scope: UInt8,
        type: UInt8,
        _ destination: [UInt8]?,
        via gateway: [UInt8]?,
        _ outputInterface: Int32?
    ) -> RouteMessage {
        RouteMessage(
            isDeletion: false,
            family: family,
            destinationLength: length,
            table: table,
            protocolID: protocolID,
            scope: scope,
            type: type,
            destination: destination,
            gateway: gateway,
            outputInterface: outputInterface,
            priority: nil
        )
    }
}

/// Builds netlink messages byte by byte, with lies where a test asks for them.
private enum Build {
    /// A header (with `length`, or the true length) followed by `body` and already padded attributes.
    static func message(
        _ type: UInt16,
        flags: UInt16 = 0,
        sequence: UInt32 = 1,
        length: UInt32? = nil,
        _ body: [UInt8],
        _ attributes: [UInt8]...
    ) -> [UInt8] {
        var payload = body + attributes.flatMap { $0 }
        payload += [UInt8](repeating: 0, count: (4 - payload.count % 4) % 4)
        let trueLength = UInt32(16 + body.count + attributes.reduce(0) { $0 + $1.count })
        return Self.u32(length ?? trueLength) + Self.u16(type) + Self.u16(flags) + Self.u32(sequence) + Self.u32(0)
            + payload
    }

    static func attribute(_ type: UInt16, _ payload: [UInt8]) -> [UInt8] {
        Self.u16(UInt16(4 + payload.count)) + Self.u16(type) + payload
            + [UInt8](repeating: 0, count: (4 - payload.count % 4) % 4)
    }

    static func attribute(_ type: UInt16, _ string: String) -> [UInt8] {
        Self.attribute(type, Array(string.utf8))
    }

    /// `ifinfomsg`.
    static func link(index: Int32, flags: UInt32, type: UInt16 = 1) -> [UInt8] {
        [0, 0] + Self.u16(type) + Self.u32(UInt32(bitPattern: index)) + Self.u32(flags) + Self.u32(0)
    }

    /// `ifaddrmsg`.
    static func address(family: UInt8, prefix: UInt8, flags: UInt8, index: UInt32) -> [UInt8] {
        [family, prefix, flags, 0] + Self.u32(index)
    }

    /// `rtmsg`.
    static func route(family: UInt8, destination: UInt8, table: UInt8, type: UInt8) -> [UInt8] {
        [family, destination, 0, 0, table, 4, 0, type] + Self.u32(0)
    }

    static func u16(_ value: UInt16) -> [UInt8] { withUnsafeBytes(of: value.littleEndian) { Array($0) } }
    static func u32(_ value: UInt32) -> [UInt8] { withUnsafeBytes(of: value.littleEndian) { Array($0) } }

    /// The end offset (before padding) of the first attribute of each type in a single-message datagram.
    static func attributeEnds(in datagram: [UInt8], from start: Int) -> [UInt16: Int] {
        var ends: [UInt16: Int] = [:]
        var offset = start
        while offset + 4 <= datagram.count {
            let length = Int(datagram[offset]) | Int(datagram[offset + 1]) << 8
            let type = UInt16(datagram[offset + 2]) | UInt16(datagram[offset + 3]) << 8
            guard length >= 4 else { break }
            if ends[type] == nil { ends[type] = offset + length }
            offset += (length + 3) & ~3
        }
        return ends
    }
}

extension NetlinkParserTests {
    /// SplitMix64 (Steele, Lea, Flood 2014): a tiny seeded generator, so a fuzz failure can be replayed. Nested
    /// here so it does not clash with the test target's other `SplitMix64`.
    fileprivate struct SplitMix64 {
        var state: UInt64

        init(seed: UInt64) { self.state = seed }

        mutating func next() -> UInt64 {
            self.state &+= 0x9E37_79B9_7F4A_7C15
            var mixed = self.state
            mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
            mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
            return mixed ^ (mixed >> 31)
        }

        /// A number in `0..<bound`; 0 when `bound` is 0.
        mutating func next(below bound: Int) -> Int {
            bound > 0 ? Int(self.next() % UInt64(bound)) : 0
        }
    }
}

/// A `NETLINK_ROUTE` socket for the live test: 2-second receive timeout, so a bug cannot hang the test.
private final class LiveSocket {
    struct Failure: Error, CustomStringConvertible {
        var call: String
        var code: Int32
        var description: String { "\(self.call) failed: errno \(self.code)" }
    }

    /// `sockaddr_nl` (linux/netlink.h), which Swift's Glibc module does not export.
    private struct Address {
        var family = UInt16(AF_NETLINK)
        var pad: UInt16 = 0
        var portID: UInt32 = 0
        var groups: UInt32 = 0
    }

    private let descriptor: Int32

    init() throws {
        // Protocol 0 is NETLINK_ROUTE.
        self.descriptor = socket(AF_NETLINK, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard self.descriptor >= 0 else { throw Failure(call: "socket", code: errno) }
        var timeout = timeval(tv_sec: 2, tv_usec: 0)
        guard setsockopt(self.descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size)) == 0
        else { throw Failure(call: "setsockopt", code: errno) }
    }

    deinit { close(self.descriptor) }

    /// Sends `request` and returns the replies with `sequence`, up to and including `NLMSG_DONE`, an error, or the
    /// first reply of a request that is not a dump.
    func exchange(_ request: [UInt8], sequence: UInt32) throws -> [NetlinkMessage] {
        var address = Address()
        let sent = request.withUnsafeBytes { bytes in
            withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(
                        self.descriptor,
                        bytes.baseAddress,
                        bytes.count,
                        0,
                        $0,
                        socklen_t(MemoryLayout<Address>.size)
                    )
                }
            }
        }
        guard sent == request.count else { throw Failure(call: "sendto", code: errno) }
        let isDump = request.count > 7 && request[7] & 0x03 == 0x03
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var replies: [NetlinkMessage] = []
        for _ in 0..<1000 {
            let count = buffer.withUnsafeMutableBytes { recv(self.descriptor, $0.baseAddress, $0.count, 0) }
            guard count >= 0 else { throw Failure(call: "recv", code: errno) }
            for (header, message) in NetlinkParser.messages(in: Array(buffer[..<count]))
            where header.sequence == sequence {
                replies.append(message)
                switch message {
                case .done, .error: return replies
                default: if !isDump { return replies }
                }
            }
        }
        return replies
    }
}
#endif
