import Hummingbird

/// Generated-data endpoints: `/bytes/{n}`, `/stream-bytes/{n}` and `/drip`.
///
/// Bodies are produced piece by piece while they are sent, so large sizes use constant memory.
extension Router<HTTPBinRequestContext> {
    /// The largest body the generating endpoints produce (1 GiB); larger requests are clamped.
    static let maximumGeneratedBytes = 1 << 30

    /// The piece size used when the client does not ask for one.
    static let streamingPieceSize = 64 * 1024

    func addBytesRoutes() {
        self.route("/bytes/:n") { request, context in
            let count = min(try context.count("n"), Self.maximumGeneratedBytes)
            let info = RequestInfo(request: request, context: context)
            var stream = try RandomByteStream.forSeedOption(info.args.option("seed"))
            if count <= Self.streamingPieceSize {
                let body = ResponseBody(byteBuffer: stream.next(count))
                return Response(status: .ok, headers: [.contentType: "application/octet-stream"], body: body)
            }
            let generator = stream
            let body = ResponseBody(contentLength: count) { writer in
                var stream = generator
                var remaining = count
                while remaining > 0 {
                    let piece = min(remaining, Self.streamingPieceSize)
                    try await writer.write(stream.next(piece))
                    remaining -= piece
                }
                try await writer.finish(nil)
            }
            return Response(status: .ok, headers: [.contentType: "application/octet-stream"], body: body)
        }
        self.route("/stream-bytes/:n") { request, context in
            let count = min(try context.count("n"), Self.maximumGeneratedBytes)
            let info = RequestInfo(request: request, context: context)
            let generator = try RandomByteStream.forSeedOption(info.args.option("seed"))
            let chunkSize = max(1, try info.args.number("chunk_size", default: 10 * 1024))
            let body = ResponseBody { writer in
                var stream = generator
                var remaining = count
                while remaining > 0 {
                    let piece = min(remaining, chunkSize)
                    try await writer.write(stream.next(piece))
                    remaining -= piece
                }
                try await writer.finish(nil)
            }
            return Response(status: .ok, headers: [.contentType: "application/octet-stream"], body: body)
        }
        self.route("/drip") { request, context in
            try await Self.drip(RequestInfo(request: request, context: context))
        }
    }

    /// `/drip`: `numbytes` asterisks spread over `duration` seconds after `delay` seconds.
    private static func drip(_ info: RequestInfo) async throws -> Response {
        let duration = try Self.seconds(info, "duration", default: 2)
        let delay = try Self.seconds(info, "delay", default: 0)
        let count = min(try info.args.number("numbytes", default: 10), 10 * 1024 * 1024)
        let code = try info.args.number("code", default: 200)
        guard count > 0 else {
            throw HTTPBinError(.badRequest, "number of bytes must be positive")
        }
        guard (200...599).contains(code) else {
            throw HTTPBinError(.badRequest, "Invalid status code")
        }
        if delay > 0 {
            try await Task.sleep(for: .seconds(delay))
        }
        let pause = Duration.seconds(duration / Double(count))
        let body = ResponseBody(contentLength: count) { writer in
            // Byte i is due at start + i * pause; bytes that fall due together are sent together,
            // so tiny pauses do not turn into one write per byte.
            let clock = ContinuousClock()
            let start = clock.now
            var sent = 0
            while sent < count {
                let elapsed = start.duration(to: clock.now)
                let due = pause == .zero ? count : min(count, Int(elapsed / pause) + 1)
                if due > sent {
                    let piece = due - sent
                    try await writer.write(ByteBuffer(repeating: UInt8(ascii: "*"), count: piece))
                    sent = due
                }
                let next = start.advanced(by: pause * sent)
                try await Task.sleep(until: max(next, clock.now.advanced(by: .milliseconds(1))), clock: clock)
            }
            try await writer.finish(nil)
        }
        return Response(
            status: HTTPResponse.Status(code: code),
            headers: [.contentType: "application/octet-stream"],
            body: body
        )
    }

    /// A non-negative number of seconds from the query, or `defaultValue`.
    static func seconds(
        _ info: RequestInfo,
        _ name: String,
        default defaultValue: Double
    ) throws(HTTPBinError) -> Double {
        let value = try info.args.number(name, default: defaultValue)
        guard value.isFinite, value >= 0 else {
            throw HTTPBinError(.badRequest, "Invalid value for \(name)")
        }
        return value
    }
}
