import AsyncHTTPClient
import KiteTestServer
import NIOCore
import NIOFoundationCompat

/// A fetched response: status, headers and the whole body.
struct Fetched: Sendable {
    var status: Int
    var headers: [(name: String, value: String)]
    var body: [UInt8]

    /// The single value of header `name`, or `nil` when absent.
    func header(_ name: String) -> String? {
        self.headers(name).first
    }

    /// All values of header `name`, in order.
    func headers(_ name: String) -> [String] {
        self.headers.filter { $0.name.lowercased() == name.lowercased() }.map(\.value)
    }

    /// The body parsed as JSON.
    func json() throws -> JSON {
        try JSON(bytes: self.body)
    }

    /// The body as UTF-8 text.
    var text: String {
        String(decoding: self.body, as: UTF8.self)
    }
}

/// A running server and a client that does not follow redirects, for one test.
struct Harness: Sendable {
    let server: KiteTestServer
    let client: HTTPClient

    /// Sends a request to `path` on the server and collects the whole response.
    func fetch(
        _ path: String,
        method: String = "GET",
        headers: [(String, String)] = [],
        body: [UInt8]? = nil,
        client: HTTPClient? = nil,
        timeout: TimeAmount = .seconds(30)
    ) async throws -> Fetched {
        var request = HTTPClientRequest(url: self.server.baseURL + path)
        request.method = .init(rawValue: method)
        for (name, value) in headers {
            request.headers.add(name: name, value: value)
        }
        if let body {
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        let response = try await (client ?? self.client).execute(request, timeout: timeout)
        let collected = try await response.body.collect(upTo: 512 * 1024 * 1024)
        return Fetched(
            status: Int(response.status.code),
            headers: response.headers.map { ($0.name, $0.value) },
            body: Array(collected.readableBytesView)
        )
    }

    /// Sends `text` as the body with the given content type.
    func fetch(_ path: String, method: String, contentType: String, text: String) async throws -> Fetched {
        try await self.fetch(path, method: method, headers: [("Content-Type", contentType)], body: Array(text.utf8))
    }
}

/// Runs `body` with a fresh server and client, shutting both down afterwards.
func withHarness(
    configuration: HTTPClient.Configuration = HTTPClient.Configuration(redirectConfiguration: .disallow),
    _ body: (Harness) async throws -> Void
) async throws {
    let server = try await KiteTestServer.start()
    let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    do {
        try await body(Harness(server: server, client: client))
    } catch {
        try? await client.shutdown()
        try? await server.shutdown()
        throw error
    }
    try await client.shutdown()
    try await server.shutdown()
}
