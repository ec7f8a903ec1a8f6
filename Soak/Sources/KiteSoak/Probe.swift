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

    /// What each open descriptor points at (sockets and anonymous inodes by kind, without their numbers).
    static func descriptorTargets() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return names.compactMap { name in
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(name)")
            else { return nil }
            return target.hasPrefix("socket:") ? "socket" : target
        }
        .sorted()
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
