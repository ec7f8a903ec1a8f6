import Foundation
import KiteTestServer

/// One in-process test server for the whole test run, started on first use on a free port.
actor SharedTestServer {
    static let shared = SharedTestServer()

    private var server: KiteTestServer?

    func baseURL() async throws -> String {
        if let server { return server.baseURL }
        let server = try await KiteTestServer.start()
        self.server = server
        return server.baseURL
    }
}
