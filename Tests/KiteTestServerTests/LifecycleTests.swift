import AsyncHTTPClient
import KiteTestServer
import NIOCore
import Testing

@Suite("Server lifecycle")
struct LifecycleTests {
    @Test("start binds an ephemeral port and baseURL points at it")
    func startOnEphemeralPort() async throws {
        let server = try await KiteTestServer.start()
        #expect(server.port > 0)
        #expect(server.baseURL == "http://127.0.0.1:\(server.port)")
        #expect(!server.baseURL.hasSuffix("/"))
        try await server.shutdown()
    }

    @Test("two servers run side by side on different ports")
    func twoServers() async throws {
        try await withHarness { first in
            let second = try await KiteTestServer.start()
            #expect(second.port != first.server.port)
            let fromFirst = try await first.fetch("/get?server=1")
            let fromSecond = try await Harness(server: second, client: first.client).fetch("/get?server=2")
            #expect(try fromFirst.json()["url"] == .string("http://127.0.0.1:\(first.server.port)/get?server=1"))
            #expect(try fromSecond.json()["url"] == .string("http://127.0.0.1:\(second.port)/get?server=2"))
            try await second.shutdown()
        }
    }

    @Test("shutdown stops listening and can be called again")
    func shutdownIsIdempotent() async throws {
        let server = try await KiteTestServer.start()
        let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup)
        let harness = Harness(server: server, client: client)
        #expect(try await harness.fetch("/get").status == 200)
        // The client keeps its connection open; shutting down must not wait for it.
        let clock = ContinuousClock()
        let start = clock.now
        try await server.shutdown()
        #expect(start.duration(to: clock.now) < .seconds(5))
        try await server.shutdown()
        await #expect(throws: (any Error).self) {
            _ = try await harness.fetch("/get", timeout: .seconds(1))
        }
        try await client.shutdown()
    }

    @Test("starting on a port that is in use fails")
    func portInUse() async throws {
        let server = try await KiteTestServer.start()
        await #expect(throws: (any Error).self) {
            let clash = try await KiteTestServer.start(host: "127.0.0.1", port: server.port)
            try await clash.shutdown()
        }
        try await server.shutdown()
    }

    @Test("start on an explicit port uses that port")
    func explicitPort() async throws {
        // Find a free port by binding an ephemeral one and releasing it.
        let probe = try await KiteTestServer.start()
        let port = probe.port
        try await probe.shutdown()
        let server = try await KiteTestServer.start(host: "127.0.0.1", port: port)
        #expect(server.port == port)
        #expect(server.baseURL == "http://127.0.0.1:\(port)")
        try await server.shutdown()
    }

    @Test("run serves until its task is cancelled")
    func runUntilCancelled() async throws {
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let task = Task {
            try await KiteTestServer.run(host: "127.0.0.1", port: 0) { port in
                continuation.yield(port)
            }
        }
        var iterator = ports.makeAsyncIterator()
        let port = try #require(await iterator.next())
        let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup)
        let response = try await client.execute(
            HTTPClientRequest(url: "http://127.0.0.1:\(port)/ip"),
            timeout: .seconds(10)
        )
        #expect(response.status == .ok)
        _ = try await response.body.collect(upTo: 1024)
        task.cancel()
        _ = await task.result
        await #expect(throws: (any Error).self) {
            _ = try await client.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)/ip"), timeout: .seconds(1))
        }
        try await client.shutdown()
        continuation.finish()
    }
}
