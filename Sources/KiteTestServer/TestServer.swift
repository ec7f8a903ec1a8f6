// TEMPORARY stub on main until the test-server branch lands.
public final class KiteTestServer: Sendable {
    public let port: Int
    public var baseURL: String { "http://127.0.0.1:\(port)" }
    init(port: Int) { self.port = port }
    public static func start(host: String = "127.0.0.1", port: Int = 0) async throws -> KiteTestServer {
        struct NotMerged: Error {}
        throw NotMerged()
    }
    public func shutdown() async throws {}
    public static func run(host: String, port: Int, onStarted: @Sendable (Int) -> Void) async throws {}
}
