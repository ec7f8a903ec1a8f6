import CMallocInfo
import Foundation

#if canImport(Glibc)
import Glibc

/// glibc's `malloc_trim` (in `<malloc.h>`, which Swift's Glibc module does not import).
@_silgen_name("malloc_trim")
private func mallocTrim(_ pad: Int) -> Int32
#endif

/// What the process holds at one moment, read from /proc.
struct ProcessSample: Sendable {
    /// Resident memory (VmRSS), KiB.
    var rssKiB: Int
    /// Open file descriptors (entries of /proc/self/fd, without the one listing them).
    var fds: Int
    /// Threads (Threads: in /proc/self/status).
    var threads: Int
    /// CPU time used so far (user and system), seconds.
    var cpuSeconds: Double
    /// What the allocator has handed out and not had back (glibc's `mallinfo2`), KiB: the live heap, which resident
    /// memory holds along with what the allocator keeps and the libraries' pages.
    var heapKiB: Int
    /// What the allocator keeps free inside its arenas, KiB.
    var heapFreeKiB: Int

    /// A sample after the allocator gave back the free memory it can (`malloc_trim(0)`): resident memory then
    /// counts what is live, not what glibc keeps for later. (One hour's run without it grew 232 → 381 MiB in nine
    /// minutes, and a `malloc_trim(0)` at that point brought it to 248 MiB.)
    static func trimmed() -> ProcessSample {
        #if canImport(Glibc)
        _ = mallocTrim(0)
        #endif
        return Self.now()
    }

    static func now() -> ProcessSample {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        func field(_ name: String) -> Int {
            for line in status.split(separator: "\n") where line.hasPrefix("\(name):") {
                return Int(line.dropFirst(name.count + 1).filter(\.isNumber)) ?? -1
            }
            return -1
        }
        let listed = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd"))?.count ?? 0
        let heap = kite_soak_heap()
        return ProcessSample(
            rssKiB: field("VmRSS"),
            fds: listed - 1,
            threads: field("Threads"),
            cpuSeconds: Self.cpuSeconds(),
            heapKiB: heap.inUse / 1024,
            heapFreeKiB: heap.free / 1024
        )
    }

    /// What each open descriptor points at: anonymous inodes and files by name, a TCP socket as
    /// `tcp <peer> <state>` (the peer named by `ports`, a port number otherwise), any other socket as `socket`.
    static func descriptorTargets(ports: [Int: String]) -> [String] {
        let sockets = Self.tcpSockets()
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return names.compactMap { name in
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(name)")
            else { return nil }
            guard target.hasPrefix("socket:[") else { return target }
            let inode = String(target.dropFirst("socket:[".count).dropLast())
            guard let socket = sockets[inode] else { return "socket" }
            return "tcp \(ports[socket.port] ?? "port \(socket.port)") \(socket.state)"
        }
        .sorted()
    }

    /// The TCP sockets of the process's network namespace by inode: the remote port and the state (/proc/net/tcp
    /// and tcp6: `sl local rem st … inode`, ports in hexadecimal).
    private static func tcpSockets() -> [String: (port: Int, state: String)] {
        let states = [
            "01": "ESTABLISHED", "02": "SYN_SENT", "03": "SYN_RECV", "04": "FIN_WAIT1", "05": "FIN_WAIT2",
            "06": "TIME_WAIT", "07": "CLOSE", "08": "CLOSE_WAIT", "09": "LAST_ACK", "0A": "LISTEN", "0B": "CLOSING",
        ]
        var sockets: [String: (port: Int, state: String)] = [:]
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            // Read to the end: the kernel hands these tables over a page at a time, and a single read
            // (`String(contentsOfFile:)`) stops after the first page.
            let data = (try? FileHandle(forReadingAtPath: table)?.readToEnd()) ?? nil
            let text = String(decoding: data ?? Data(), as: UTF8.self)
            for line in text.split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ")
                guard fields.count > 9, let colon = fields[2].lastIndex(of: ":"),
                    let port = Int(fields[2][fields[2].index(after: colon)...], radix: 16)
                else { continue }
                sockets[String(fields[9])] = (port, states[String(fields[3])] ?? String(fields[3]))
            }
        }
        return sockets
    }

    /// utime + stime from /proc/self/stat (fields 14 and 15, after the parenthesised name).
    private static func cpuSeconds() -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return -1 }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // fields[0] is the state (field 3), so utime (14) is fields[11] and stime (15) fields[12].
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return -1 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}
