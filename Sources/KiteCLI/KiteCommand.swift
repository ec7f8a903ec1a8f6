import ArgumentParser
import Kite

/// `kite`: Kite's command-line client.
@main
struct KiteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kite",
        abstract: "An HTTP client built on the Kite library.",
        discussion: """
            kite [METHOD] URL [items...] sends one request, httpie style:
              key=value    JSON string field     key:=json   raw JSON field
              key==value   query parameter       Header:value header field
            kite tour shows the library at work against a local test server.
            kite reachability [HOST] [--watch] prints whether the network (or HOST) is reachable.
            """,
        version: kiteVersion,
        subcommands: [RequestCommand.self, TourCommand.self, ServeCommand.self, ReachabilityCommand.self],
        defaultSubcommand: RequestCommand.self
    )
}
