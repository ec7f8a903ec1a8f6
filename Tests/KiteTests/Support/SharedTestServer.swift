import Foundation
import KiteTestServer

/// One in-process test server for the whole test run, started on first use on a free port.
actor SharedTestServer {
    static let shared = SharedTestServer()

    /// A task, not the server, so concurrent first callers share one start (actors are reentrant).
    private var starting: Task<KiteTestServer, any Error>?

    func baseURL() async throws -> String {
        if let starting {
            return try await starting.value.baseURL
        }
        let task = Task { try await KiteTestServer.start() }
        self.starting = task
        return try await task.value.baseURL
    }
}
