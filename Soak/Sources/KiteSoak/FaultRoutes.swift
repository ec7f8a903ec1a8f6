import Foundation
import Kite

/// The fault server's hostile behaviours (Tests/FaultServer/README.md), each as an operation: any response or any
/// `KiteError` is a right ending, except where the body is known, which must then be exact.
enum FaultRoutes {
    /// The fault server's deterministic body: byte i is i % 251.
    static func deterministic(_ count: Int) -> Data {
        Data((0..<count).lazy.map { UInt8($0 % 251) })
    }

    /// A GET of `path` with a total timeout, for routes that go silent.
    private static func get(
        _ workload: Workload,
        _ path: String,
        timeout: Duration = .seconds(5),
        check: @escaping @Sendable (Data) -> String? = { _ in nil }
    ) async -> Outcome {
        let response = await workload.plain.request(
            "\(workload.peers.fault)\(path)",
            requestModifier: { $0.timeout = timeout }
        )
        .serializingData(emptyResponseCodes: Set(100..<600))
        .response
        return .of(response.result) { data in check(data).map { "\(path): \($0)" } }
    }

    /// An upload of `size` bytes from memory to `path`.
    private static func upload(_ workload: Workload, _ path: String, size: Int) async -> Outcome {
        let response = await workload.plain.upload(
            Data(count: size),
            to: "\(workload.peers.fault)\(path)",
            requestModifier: { $0.timeout = .seconds(5) }
        )
        .serializingData(emptyResponseCodes: Set(100..<600))
        .response
        return .of(response.result) { _ in nil }
    }

    private static func route(
        _ name: String,
        weight: Int = 1,
        _ run: @escaping @Sendable (Workload) async -> Outcome
    ) -> Operation {
        Operation(name: "fault \(name)", weight: weight, run: run)
    }

    static let operations: [Operation] = [
        route("/ok") { await get($0, "/ok") { $0 == Data("ok".utf8) ? nil : "not ok" } },
        route("/close-after (fin, rst, stall, chunked)", weight: 2) { workload in
            let mode = ["fin", "rst", "stall"].randomElement()!
            return await get(workload, "/close-after?bytes=2048&mode=\(mode)&chunked=\(Int.random(in: 0...1))&max_s=10")
        },
        route("/garbage-status") { await get($0, "/garbage-status?kind=\(["status", "notHTTP"].randomElement()!)") },
        route("/silence (total timeout 1 s)") { await get($0, "/silence?max_s=10", timeout: .seconds(1)) },
        route("/dribble-headers") {
            await get($0, "/dribble-headers?delay_ms=3") { $0 == Data("hello".utf8) ? nil : "not hello" }
        },
        route("/huge-headers") { await get($0, "/huge-headers?size=\([1024, 65536, 1_048_576].randomElement()!)") },
        route("/gzip-bomb") { await get($0, "/gzip-bomb?mode=\(["chunked", "length"].randomElement()!)") },
        route("/gzip-zeros") {
            await get($0, "/gzip-zeros?size=1048576") { $0 == Data(count: 1_048_576) ? nil : "not zeros" }
        },
        route("/gzip-json") { workload in
            await get(workload, "/gzip-json?count=300") { data in
                let items = try? JSONSerialization.jsonObject(with: data) as? [Any]
                return items?.count == 300 ? nil : "not 300 items"
            }
        },
        route("/gzip-multi") {
            await get($0, "/gzip-multi?parts=3&size=1000") { $0 == deterministic(3000) ? nil : "wrong" }
        },
        route("/huge-body") {
            await get($0, "/huge-body?size=2097152") {
                $0 == deterministic(2_097_152) ? nil : "\($0.count) wrong bytes"
            }
        },
        route("/http10") {
            await get($0, "/http10?size=5000") { $0 == deterministic(5000) ? nil : "\($0.count) wrong bytes" }
        },
        route("/redirect-loop, -self, -scheme") { workload in
            let path = ["/redirect-loop", "/redirect-self", "/redirect-scheme?to=file:///etc/passwd"].randomElement()!
            return await get(workload, path)
        },
        route("/bad-chunk") { await get($0, "/bad-chunk?kind=\(["letters", "overflow"].randomElement()!)") },
        route("/cl-and-te") { await get($0, "/cl-and-te") },
        route("/informational") {
            await get($0, "/informational?codes=100,103") { $0 == Data("final".utf8) ? nil : "not final" }
        },
        route("/stray") { await get($0, "/stray?kind=\(["head", "204", "304", "extra"].randomElement()!)") },
        route("/stop-reading (upload, total timeout 5 s)") {
            await upload($0, "/stop-reading?max_s=10", size: 8 << 20)
        },
        route("/early-status (upload)") { workload in
            let then = ["close", "drain"].randomElement()!
            return await upload(workload, "/early-status?status=413&then=\(then)", size: 1 << 20)
        },
        route("/upload-ack?early=1 (upload)") { await upload($0, "/upload-ack?early=1", size: 256 << 10) },
    ]
}
