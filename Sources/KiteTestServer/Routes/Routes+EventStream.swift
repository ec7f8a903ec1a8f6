import Hummingbird

/// `/sse`: a Server-Sent Events stream, each event written (and flushed) as its own chunk.
///
/// Query options: `count` events (default 3, at most 1000), `interval` seconds between events
/// (default 0, at most 10), `retry` milliseconds to announce, and `crlf=1` or `cr=1` to end lines
/// with CRLF or CR instead of LF. `/sse?count=2&retry=500` sends:
///
/// ```
/// : kite test stream
///
/// retry: 500
///
/// id: 0
/// event: tick
/// data: {"index": 0}
/// data: line two of 0
///
/// id: 1
/// event: tock
/// data: {"index": 1}
/// data: line two of 1
///
/// data: done
///
/// ```
extension Router<HTTPBinRequestContext> {
    /// The most events `/sse` sends.
    static let maximumEventCount = 1000

    func addEventStreamRoutes() {
        self.route("/sse") { request, context in
            try Self.eventStream(RequestInfo(request: request, context: context))
        }
    }

    private static func eventStream(_ info: RequestInfo) throws(HTTPBinError) -> Response {
        let count = try info.args.number("count", default: 3)
        guard count >= 0 else {
            throw HTTPBinError(.badRequest, "count must be a non-negative integer")
        }
        let interval = min(try Self.seconds(info, "interval", default: 0), 10)
        let retry = try Self.retryOption(info)
        let crlf = try Self.flag(info, "crlf")
        let cr = try Self.flag(info, "cr")
        guard !(crlf && cr) else {
            throw HTTPBinError(.badRequest, "crlf and cr cannot both be set")
        }
        let eol = crlf ? "\r\n" : cr ? "\r" : "\n"
        let events = min(count, Self.maximumEventCount)
        let body = ResponseBody { writer in
            try await writer.write(ByteBuffer(string: ": kite test stream" + eol + eol))
            if let retry {
                try await writer.write(ByteBuffer(string: "retry: \(retry)" + eol + eol))
            }
            for index in 0..<events {
                if index > 0, interval > 0 {
                    try await Task.sleep(for: .seconds(interval))
                }
                let lines = [
                    "id: \(index)",
                    "event: \(index.isMultiple(of: 2) ? "tick" : "tock")",
                    "data: {\"index\": \(index)}",
                    "data: line two of \(index)",
                ]
                try await writer.write(ByteBuffer(string: lines.map { $0 + eol }.joined() + eol))
            }
            if events > 0, interval > 0 {
                try await Task.sleep(for: .seconds(interval))
            }
            try await writer.write(ByteBuffer(string: "data: done" + eol + eol))
            try await writer.finish(nil)
        }
        return Response(
            status: .ok,
            headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"],
            body: body
        )
    }

    /// The optional `retry` query option: a non-negative number of milliseconds.
    private static func retryOption(_ info: RequestInfo) throws(HTTPBinError) -> Int? {
        guard info.args.option("retry") != nil else { return nil }
        let milliseconds = try info.args.number("retry", default: 0)
        guard milliseconds >= 0 else {
            throw HTTPBinError(.badRequest, "retry must be a non-negative number of milliseconds")
        }
        return milliseconds
    }

    /// A boolean query option: absent, `0` or `false` is false; `1` or `true` is true.
    private static func flag(_ info: RequestInfo, _ name: String) throws(HTTPBinError) -> Bool {
        switch info.args.option(name)?.trimmingSpaces().lowercased() {
        case nil, "0", "false":
            return false
        case "1", "true":
            return true
        case let other?:
            throw HTTPBinError(.badRequest, "Invalid value for \(name): \(other)")
        }
    }
}
