import Foundation
import Testing

/// `kite reachability [HOST] [--watch]`.
@Suite(.serialized) struct ReachabilityCommandTests {
    @Test func aLoopbackAddressIsReachable() async throws {
        let run = try await TLSOptionsTests.kite("reachability", "127.0.0.1")
        #expect(run.status == 0, "\(run.errors)")
        #expect(run.output == "127.0.0.1: reachable(ethernetOrWiFi)\n")
    }

    @Test func anInvalidHostIsRefusedWithAMessage() async throws {
        let run = try await TLSOptionsTests.kite("reachability", "not a host")
        #expect(run.status != 0)
        #expect(run.errors.contains("\"not a host\" is not a host name or address"), "\(run.errors)")
    }

    @Test func theHelpListsTheCommand() async throws {
        let run = try await TLSOptionsTests.kite("--help")
        #expect(run.output.contains("kite reachability [HOST] [--watch]"))
    }
}
