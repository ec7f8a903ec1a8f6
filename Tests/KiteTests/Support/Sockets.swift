import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Loopback listeners made with plain POSIX sockets, for failures no HTTP server produces.
enum Sockets {
    /// A listener on 127.0.0.1 that completes TCP handshakes (in the kernel's backlog) but never
    /// reads or writes: a TLS handshake against it never finishes.
    final class BlackHole: Sendable {
        let port: Int
        private let descriptor: Int32

        init() throws {
            (self.descriptor, self.port) = try Sockets.listeningLoopback()
        }

        deinit {
            close(self.descriptor)
        }
    }

    /// A loopback port that refuses every connection for the rest of the test process: its socket is
    /// bound and never listens, and it stays open, so no server started by a concurrent test can be given
    /// the same port. (A port that was bound and closed again could be; a proxy test started on it once
    /// answered a request meant to be refused.) Without `SO_REUSEADDR` on this socket, Linux refuses
    /// every other bind to the port, `SO_REUSEADDR` or not. The descriptor is deliberately never closed.
    static func refusingPort() throws -> Int {
        try Self.bindLoopback().1
    }

    /// A listener on 127.0.0.1 that answers each connection before reading a byte of its request, as a server that
    /// refuses a huge request head does: after `delay` it writes `head`, then reads and drops the request until the
    /// client closes or pauses (50 ms), writes `rest`, and closes. One thread per connection, never the pool's.
    final class EarlyAnswer: Sendable {
        let port: Int
        private let descriptor: Int32

        init(head: String, rest: String, delay: Duration) throws {
            let (descriptor, port) = try Sockets.listeningLoopback()
            self.descriptor = descriptor
            self.port = port
            let (head, rest) = (Array(head.utf8), Array(rest.utf8))
            let microseconds = useconds_t(
                delay.components.seconds * 1_000_000 + delay.components.attoseconds / 1_000_000_000_000
            )
            Thread.detachNewThread {
                while true {
                    let client = accept(descriptor, nil, nil)
                    guard client >= 0 else { return }
                    Thread.detachNewThread {
                        usleep(microseconds)
                        _ = head.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                        var timeout = timeval(tv_sec: 0, tv_usec: 50_000)
                        setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                        var buffer = [UInt8](repeating: 0, count: 1 << 16)
                        while recv(client, &buffer, buffer.count, 0) > 0 {}
                        _ = rest.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                        close(client)
                    }
                }
            }
        }

        deinit {
            shutdown(self.descriptor, Int32(SHUT_RDWR))
            close(self.descriptor)
        }
    }

    /// A loopback port that is free now (bound, then closed), for a server a test starts on it.
    static func freePort() throws -> Int {
        let (descriptor, port) = try Self.bindLoopback()
        close(descriptor)
        return port
    }

    /// A socket bound to a free loopback port and listening, and the port.
    private static func listeningLoopback() throws -> (Int32, Int) {
        let (descriptor, port) = try Self.bindLoopback()
        guard listen(descriptor, 16) == 0 else {
            close(descriptor)
            throw POSIXError(.EADDRINUSE)
        }
        return (descriptor, port)
    }

    private static func bindLoopback() throws -> (Int32, Int) {
        #if canImport(Glibc)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #else
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw POSIXError(.EMFILE) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else {
            close(descriptor)
            throw POSIXError(.EADDRINUSE)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        return (descriptor, Int(UInt16(bigEndian: address.sin_port)))
    }
}
