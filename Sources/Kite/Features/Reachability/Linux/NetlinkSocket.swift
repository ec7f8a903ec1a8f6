#if os(Linux)
import Glibc

/// A `NETLINK_ROUTE` socket: the kernel's routing, link and address tables, read and watched without
/// sending any traffic. A socket belongs to the network namespace of the thread that made it, for life.
final class NetlinkSocket {
    /// Multicast groups to join: `RTMGRP_LINK`, `RTMGRP_IPV4_IFADDR`, `RTMGRP_IPV4_ROUTE`,
    /// `RTMGRP_IPV6_IFADDR`, `RTMGRP_IPV6_ROUTE` (linux/rtnetlink.h).
    static let changeGroups: UInt32 = 0x1 | 0x10 | 0x40 | 0x100 | 0x400

    let fileDescriptor: Int32
    private var sequence: UInt32 = 0
    /// Where `ask` receives replies: one buffer for the socket's life, not one per request (an evaluation asks
    /// three dumps and a route per address).
    private var replies = [UInt8](repeating: 0, count: 64 * 1024)

    /// `sockaddr_nl` (linux/netlink.h), which Swift's Glibc module does not export.
    private struct Address {
        var family = UInt16(AF_NETLINK)
        var pad: UInt16 = 0
        var portID: UInt32 = 0
        var groups: UInt32 = 0
    }

    /// Opens a socket in the calling thread's network namespace.
    ///
    /// - Parameters:
    ///   - groups: The multicast groups to join; 0 for a socket that only asks.
    ///   - receiveTimeoutSeconds: How long a `receive` may block; `nil` blocks until data arrives.
    init(groups: UInt32, receiveTimeoutSeconds: Int? = nil) throws(KiteError) {
        let descriptor = socket(AF_NETLINK, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw Self.failure("socket(AF_NETLINK)") }
        var address = Address(groups: groups)
        let bound = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<Address>.size))
            }
        }
        guard bound == 0 else {
            let error = Self.failure("bind(NETLINK_ROUTE, groups \(groups))")
            close(descriptor)
            throw error
        }
        // A larger buffer so a burst of changes does not overflow it (ENOBUFS is handled anyway).
        var size: Int32 = 1 << 20
        _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        if let receiveTimeoutSeconds {
            var timeout = timeval(tv_sec: receiveTimeoutSeconds, tv_usec: 0)
            _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }
        self.fileDescriptor = descriptor
    }

    deinit {
        close(self.fileDescriptor)
    }

    /// The next request sequence number.
    func nextSequence() -> UInt32 {
        self.sequence &+= 1
        return self.sequence
    }

    /// Sends a request to the kernel.
    func send(_ request: [UInt8]) throws(KiteError) {
        var address = Address()
        let sent = request.withUnsafeBytes { bytes in
            withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(
                        self.fileDescriptor,
                        bytes.baseAddress,
                        bytes.count,
                        0,
                        $0,
                        socklen_t(MemoryLayout<Address>.size)
                    )
                }
            }
        }
        guard sent == request.count else { throw Self.failure("sendto(NETLINK_ROUTE)") }
    }

    /// One datagram, or `nil` when none is waiting (`nonBlocking`), the receive timed out, or the kernel
    /// dropped messages (`ENOBUFS`: the caller re-reads the tables anyway).
    func receive(into buffer: inout [UInt8], nonBlocking: Bool = false) throws(KiteError) -> Int? {
        while true {
            let count = buffer.withUnsafeMutableBytes {
                recv(self.fileDescriptor, $0.baseAddress, $0.count, nonBlocking ? Int32(MSG_DONTWAIT) : 0)
            }
            if count >= 0 { return count }
            switch errno {
            case EINTR: continue
            case EAGAIN, ENOBUFS: return nil
            default: throw Self.failure("recv(NETLINK_ROUTE)")
            }
        }
    }

    /// The replies to `request` until `NLMSG_DONE`, an error, or (for a request that is not a dump) the
    /// first reply; messages of other sequences (changes the kernel multicasts) are skipped.
    func ask(_ request: (UInt32) -> [UInt8], dump: Bool) throws(KiteError) -> [NetlinkMessage] {
        let sequence = self.nextSequence()
        try self.send(request(sequence))
        // Taken out while used, so writing into it does not copy it.
        var buffer = self.replies
        self.replies = []
        defer { self.replies = buffer }
        var replies: [NetlinkMessage] = []
        // Bounded: a dump of a large routing table is at most a few thousand datagrams.
        for _ in 0..<10_000 {
            guard let count = try self.receive(into: &buffer) else {
                throw KiteError(
                    code: .connectionFailed,
                    message: "the kernel did not answer a netlink request (NETLINK_ROUTE) in time"
                )
            }
            let messages = buffer.withUnsafeBytes {
                NetlinkParser.messages(in: UnsafeRawBufferPointer(rebasing: $0[..<count]))
            }
            for (header, message) in messages where header.sequence == sequence {
                switch message {
                case .done: return replies
                case .error(let code) where code != 0 || !dump:
                    replies.append(message)
                    return replies
                default:
                    replies.append(message)
                    if !dump { return replies }
                }
            }
        }
        return replies
    }

    private static func failure(_ call: String) -> KiteError {
        let code = errno
        return KiteError(
            code: .connectionFailed,
            message: "\(call) failed: \(String(cString: strerror(code))) (errno \(code))"
        )
    }
}
#endif
