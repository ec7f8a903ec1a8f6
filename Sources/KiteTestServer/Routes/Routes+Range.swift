import Hummingbird

/// `/range/{n}`: `n` bytes of the alphabet repeated, with byte range support.
///
/// The body is generated while it is sent, so `n` can be large (up to 1 GiB) in constant memory.
extension Router<HTTPBinRequestContext> {
    func addRangeRoutes() {
        self.route("/range/:n") { request, context in
            let total = try context.count("n")
            let info = RequestInfo(request: request, context: context)
            let entityTag = "range\(total)"
            guard total > 0, total <= Self.maximumGeneratedBytes else {
                throw HTTPBinError(
                    .notFound,
                    "number of bytes must be in the range (0, \(Self.maximumGeneratedBytes)]",
                    headers: [.eTag: entityTag, .acceptRanges: "bytes"]
                )
            }
            let chunkSize = max(1, try info.args.number("chunk_size", default: 10 * 1024))
            let duration = try Self.seconds(info, "duration", default: 0)

            var range = 0...(total - 1)
            if let header = request.headers[.range], Self.ifRangeMatches(request, entityTag: entityTag) {
                switch ByteRange.parse(header, length: total) {
                case .satisfiable(let requested):
                    range = requested
                case .unsatisfiable:
                    return .empty(
                        status: .rangeNotSatisfiable,
                        headers: [
                            .eTag: entityTag, .acceptRanges: "bytes", .contentRange: "bytes */\(total)",
                            .contentLength: "0",
                        ]
                    )
                case .ignored:
                    break
                }
            }
            let headers: HTTPFields = [
                .contentType: "application/octet-stream",
                .eTag: entityTag,
                .acceptRanges: "bytes",
                .contentRange: "bytes \(range.lowerBound)-\(range.upperBound)/\(total)",
            ]
            let sentRange = range
            let isWhole = sentRange.count == total
            let pausePerByte = duration / Double(total)
            let body = ResponseBody(contentLength: sentRange.count) { writer in
                var position = sentRange.lowerBound
                while position <= sentRange.upperBound {
                    let piece = min(chunkSize, sentRange.upperBound - position + 1)
                    let buffer = Self.alphabet(from: position, count: piece)
                    if pausePerByte > 0 {
                        try await Task.sleep(for: .seconds(pausePerByte * Double(piece)))
                    }
                    try await writer.write(buffer)
                    position += piece
                }
                try await writer.finish(nil)
            }
            return Response(status: isWhole ? .ok : .partialContent, headers: headers, body: body)
        }
    }

    /// The alphabet repeated, long enough to copy typical pieces from in one go.
    private static let alphabetPattern: [UInt8] = Array(
        repeatElement(Array("abcdefghijklmnopqrstuvwxyz".utf8), count: 2521).joined()
    )

    /// Bytes `start..<start + count` of the endless alphabet stream.
    static func alphabet(from start: Int, count: Int) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.reserveCapacity(count)
        var position = start
        var remaining = count
        while remaining > 0 {
            let offset = position % 26
            let length = min(remaining, Self.alphabetPattern.count - offset)
            buffer.writeBytes(Self.alphabetPattern[offset..<offset + length])
            position += length
            remaining -= length
        }
        return buffer
    }

    /// Whether a Range header applies: true without If-Range, or when If-Range names the current
    /// entity tag (quoted or not).
    private static func ifRangeMatches(_ request: Request, entityTag: String) -> Bool {
        guard let ifRange = request.headers[.ifRange] else { return true }
        return EntityTags.parse(ifRange).contains(entityTag)
    }
}

/// A parsed `Range` header for a single byte range.
enum ByteRange: Equatable {
    /// The (clamped) range to send with 206.
    case satisfiable(ClosedRange<Int>)
    /// A valid range that starts beyond the end: answer 416.
    case unsatisfiable
    /// Not a single byte range this server understands: send the whole body.
    case ignored

    /// Parses `bytes=a-b`, `bytes=a-` and `bytes=-k` for a body of `length` bytes (RFC 9110).
    static func parse(_ header: String, length: Int) -> ByteRange {
        let trimmed = header.trimmingSpaces()
        guard trimmed.lowercased().hasPrefix("bytes=") else { return .ignored }
        let spec = trimmed.dropFirst("bytes=".count).trimmingSpaces()
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else { return .ignored }
        let first = spec[..<dash].trimmingSpaces()
        let last = spec[spec.index(after: dash)...].trimmingSpaces()
        if first.isEmpty {
            guard let suffix = Int(last), suffix >= 0 else { return .ignored }
            guard suffix > 0 else { return .unsatisfiable }
            return .satisfiable(max(0, length - suffix)...(length - 1))
        }
        guard let start = Int(first), start >= 0 else { return .ignored }
        var end = length - 1
        if !last.isEmpty {
            guard let parsed = Int(last) else { return .ignored }
            guard parsed >= start else { return .ignored }
            end = min(parsed, length - 1)
        }
        guard start < length else { return .unsatisfiable }
        return .satisfiable(start...end)
    }
}

/// Parsing of entity-tag lists such as `If-None-Match: "a", W/"b"`.
enum EntityTags {
    /// The tags in a comma-separated list, without `W/` and quotes (httpbin compares them this way).
    static func parse(_ header: String) -> [String] {
        header.split(separator: ",").map { part in
            var tag = Substring(part.trimmingSpaces())
            if tag.hasPrefix("W/") {
                tag = tag.dropFirst(2)
            }
            if tag.hasPrefix("\"") {
                tag = tag.dropFirst()
            }
            if tag.hasSuffix("\"") {
                tag = tag.dropLast()
            }
            return String(tag)
        }
    }
}
