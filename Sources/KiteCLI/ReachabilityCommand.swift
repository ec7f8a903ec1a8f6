import ArgumentParser
import Foundation
import Kite

/// `kite reachability [HOST] [--watch]`: the reachability of the network or a host, once or at every change.
struct ReachabilityCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reachability",
        abstract: "Print whether the network (or HOST) is reachable; --watch prints every change."
    )

    @Argument(help: "A host name or address; without it, the default route (the internet in general).")
    var host: String?

    @Flag(help: "Keep watching and print each change until interrupted.")
    var watch = false

    func run() async throws {
        let manager = self.host.map { NetworkReachabilityManager(host: $0) } ?? NetworkReachabilityManager()
        guard let manager else {
            if let host = self.host, !host.isEmpty, !host.contains(where: { $0.isWhitespace || $0 == "/" }) {
                throw ValidationError("reachability is not available on this platform")
            }
            throw ValidationError(
                self.host.map { "\"\($0)\" is not a host name or address" }
                    ?? "reachability is not available on this platform"
            )
        }
        let target = self.host ?? "network"
        guard self.watch else {
            let status = manager.status
            print("\(target): \(status)")
            if status == .notReachable { throw ExitCode(1) }
            return
        }
        for await status in manager.statusUpdates {
            // Unbuffered, so a pipe sees each change as it happens.
            let line = "\(ISO8601DateFormatter().string(from: Date())) \(target): \(status)\n"
            FileHandle.standardOutput.write(Data(line.utf8))
        }
    }
}
