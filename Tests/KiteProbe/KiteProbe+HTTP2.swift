import Foundation
import Kite

/// Uploads for the HTTP/2 tests whose failure is a crash (`HTTP2HostileServerTests`):
///
/// - `h2-upload-until-head`: a `PUT` whose body is a stream of `--first` bytes (5 by default) that ends when the
///   response's head arrives, so its end is written after whatever the server sent before that head. The length is
///   unknown, or `--first` with `--length known`.
/// - `h2-put-bytes`: a `PUT` whose body is `--size` bytes (65,535 by default) in the request itself, which the
///   engine writes with its end in one go (at most 64 KiB: a larger one goes as an upload, in slices).
///
/// Each shuts its session down before it returns, so that a trap in the shutdown fails the probe too.
extension KiteProbe {
    static func runHTTP2(
        _ kind: String,
        _ url: String,
        configuration: Session.Configuration,
        options: [String: String]
    ) async -> String? {
        let monitor = ClosureEventMonitor()
        let session = Session(configuration: configuration, eventMonitors: [monitor])
        let line: String
        switch kind {
        case "h2-upload-until-head":
            let first = options["first"].flatMap { Int($0) } ?? 5
            let (body, writer) = AsyncStream<Data>.makeStream()
            writer.yield(Data(repeating: UInt8(ascii: "k"), count: first))
            monitor.requestDidReceiveResponse = { _, _ in writer.finish() }
            let length = options["length"] == "known" ? Int64(first) : nil
            let response = await session.upload(body, length: length, to: url, method: .put).serializingData().response
            line = Self.line(response.response?.status.code, response.data?.count, response.error)
        case "h2-put-bytes":
            let body = Data(count: options["size"].flatMap { Int($0) } ?? 65_535)
            let response = await session.request(url, method: .put, requestModifier: { $0.body = body })
                .serializingData()
                .response
            line = Self.line(response.response?.status.code, response.data?.count, response.error)
        default:
            line = "unknown kind \(kind)"
        }
        try? await session.shutdown()
        return line
    }
}
