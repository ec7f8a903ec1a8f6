import ArgumentParser
import Foundation
import KiteTestServer

/// `kite serve`: runs the httpbin-compatible test server until interrupted.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run Kite's httpbin-compatible test server on 127.0.0.1."
    )

    @Option(name: .shortAndLong, help: "The port to listen on; 0 picks a free one.")
    var port = 8080

    func run() async throws {
        try await KiteTestServer.run(host: "127.0.0.1", port: self.port) { port in
            // Unbuffered: a program reading this line through a pipe must see it at once.
            let line = "Kite test server listening on http://127.0.0.1:\(port) (Ctrl-C to stop)\n"
            FileHandle.standardOutput.write(Data(line.utf8))
        }
    }
}
