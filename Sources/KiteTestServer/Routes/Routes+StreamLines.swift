import Hummingbird

/// `/stream-lines/{n}`: `n` text lines sent in small chunks that split lines at odd places.
///
/// Line `i` is `line <i> ` padded with `x` to `size` bytes (default 20, at most 65536; a longer
/// prefix is kept whole), followed by `\n`. The body is written in chunks of `chunk_size` bytes
/// (default 7, at most 1 MiB) regardless of where lines end, so clients that split lines must
/// handle lines spread over chunks. `n` is at most 100000. `/stream-lines/2?size=10` sends
/// `line 0 xxx\nline 1 xxx\n` as the chunks `line 0 `, `xxx\nlin`, `e 1 xxx` and `\n`.
extension Router<HTTPBinRequestContext> {
    /// The most lines `/stream-lines` sends.
    static let maximumLineCount = 100_000

    func addStreamLinesRoutes() {
        self.route("/stream-lines/:n") { request, context in
            let count = min(try context.count("n"), Self.maximumLineCount)
            let info = RequestInfo(request: request, context: context)
            let size = try info.args.number("size", default: 20)
            let chunkSize = try info.args.number("chunk_size", default: 7)
            guard size >= 0 else {
                throw HTTPBinError(.badRequest, "size must be a non-negative integer")
            }
            guard chunkSize > 0 else {
                throw HTTPBinError(.badRequest, "chunk_size must be a positive integer")
            }
            let lineSize = min(size, 65536)
            let pieceSize = min(chunkSize, 1 << 20)
            let body = ResponseBody { writer in
                var pending = ByteBuffer()
                for index in 0..<count {
                    let prefix = "line \(index) "
                    pending.writeString(prefix)
                    pending.writeRepeatingByte(UInt8(ascii: "x"), count: max(0, lineSize - prefix.utf8.count))
                    pending.writeInteger(UInt8(ascii: "\n"))
                    guard pending.readableBytes >= pieceSize else { continue }
                    while pending.readableBytes >= pieceSize, let piece = pending.readSlice(length: pieceSize) {
                        try await writer.write(piece)
                    }
                    // Keep only the unsent bytes (fewer than a piece) so memory stays constant.
                    pending.discardReadBytes()
                }
                if pending.readableBytes > 0 {
                    try await writer.write(pending)
                }
                try await writer.finish(nil)
            }
            return Response(status: .ok, headers: [.contentType: "text/plain; charset=utf-8"], body: body)
        }
    }
}
