import Foundation
import Kite
import KiteTestServer
import NIOConcurrencyHelpers

// What the examples take as given, defined once: the session and the mock they use. Each example is a function of its own (Scripts/doc-examples.py), so a name an example defines itself
// shadows these.

/// The session the examples send with.
let session = Session.default

/// The mock transport of the testing examples.
let mock = MockTransport()

/// The URL an example sends to.
let url = "http://127.0.0.1:8080/get"

/// Where the examples' `http://127.0.0.1:8080` is: the in-process test server once DocExamplesTests started it.
enum DocServer {
    private static let box = NIOLockedValueBox("http://127.0.0.1:8080")

    static var base: String { self.box.withLockedValue { $0 } }

    static func use(_ base: String) {
        self.box.withLockedValue { $0 = base }
    }
}

extension DocServer {
    private static let server = ServerStart()

    /// Starts the in-process test server once and points the examples at it; makes the files the examples upload.
    static func start() async throws {
        try await self.server.start()
    }

    private actor ServerStart {
        /// The running server, kept for the whole test run (a released server stops).
        private var starting: Task<KiteTestServer, any Error>?

        func start() async throws {
            if self.starting == nil {
                self.starting = Task {
                    let server = try await KiteTestServer.start()
                    for (path, size) in [("/tmp/photo.png", 2_048), ("/tmp/video.mp4", 300_000)]
                    where !FileManager.default.fileExists(atPath: path) {
                        try Data(repeating: 0x2A, count: size).write(to: URL(fileURLWithPath: path))
                    }
                    DocServer.use(server.baseURL)
                    return server
                }
            }
            _ = try await self.starting?.value
        }
    }
}
