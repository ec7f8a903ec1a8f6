import Foundation

/// One input of the whole-client targets, read: the request Kite makes and the conversation the fake server plays.
///
/// The input's first four bytes choose the request; the rest is a list of steps, each a type byte and its operands
/// (lengths are one byte, so a mutation that changes one stays local). Unknown types are skipped.
///
/// | byte | meaning |
/// |---|---|
/// | 0 | the request kind, low 3 bits: GET, HEAD, POST (a body in memory), PUT (a streamed body), download, stream of lines, stream of Server-Sent Events, DELETE; bit 3: the streamed body has no known length |
/// | 1 | bit 0 redirects (at most 3), 1 a credential (Basic or Digest, as challenged), 2 the cookie jar, 3 the memory cache, 4 the disk cache, 5 no decompression, 6 `RetryPolicy` (one retry), 7 `validate()` |
/// | 2 | bit 0 a small response size limit (4 KiB), 1 the same request again on the session, 2 cancel after byte 3's milliseconds, 3 no automatic HTTP/2 SETTINGS and acknowledgements, bits 4–5 the URL's path |
/// | 3 | the milliseconds before a cancel (0–31) |
///
/// Steps (on the current connection; `next` starts the next connection's script):
///
/// | type | operands | step |
/// |---|---|---|
/// | 0x01 | length, bytes | send the bytes |
/// | 0x02 | milliseconds | pause (at most 20) |
/// | 0x03 | | FIN |
/// | 0x04 | | RST |
/// | 0x05 | | next connection |
/// | 0x06 | | wait for a request (HTTP/1 head, HTTP/2 HEADERS) |
/// | 0x07 | | drain what the client sends |
/// | 0x08 | count | send the last bytes sent `count` × 16 times more (large bodies from a small input) |
/// | 0x09 | length (2 bytes), bytes | send the bytes |
/// | 0x0A | | go silent: hold the connection until the client closes it (at most 100 ms) |
/// | 0x10 | frame type, flags, stream, length (2 bytes), payload | an HTTP/2 frame; stream 0 the connection, 1 the current stream, 2 the next, 3 an even one |
/// | 0x11 | stream, flags, count, then count × (length, name, length, value) | a HEADERS frame whose block holds these fields as HPACK literals |
struct ClientPlan: CustomStringConvertible, Sendable {
    enum Kind: UInt8, CaseIterable {
        case get, head, post, put, download, lines, events, delete
    }

    let kind: Kind
    let unknownLength: Bool
    let redirects: Bool
    let credential: Bool
    let cookies: Bool
    let memoryCache: Bool
    let diskCache: Bool
    let decompression: Bool
    let retry: Bool
    let validate: Bool
    let smallLimit: Bool
    let twice: Bool
    let cancelAfter: Int?
    let automaticHTTP2: Bool
    let path: String
    let scripts: [[ScriptStep]]

    static let paths = ["/", "/files/report.pdf?download=1", "/a/b/../c?q=%20x#frag", "/events"]

    init(_ input: [UInt8]) {
        var header = Array(input.prefix(4))
        while header.count < 4 { header.append(0) }
        self.kind = Kind(rawValue: header[0] & 0x7) ?? .get
        self.unknownLength = header[0] & 0x8 != 0
        self.redirects = header[1] & 0x01 != 0
        self.credential = header[1] & 0x02 != 0
        self.cookies = header[1] & 0x04 != 0
        self.memoryCache = header[1] & 0x08 != 0
        self.diskCache = header[1] & 0x10 != 0
        self.decompression = header[1] & 0x20 == 0
        self.retry = header[1] & 0x40 != 0
        self.validate = header[1] & 0x80 != 0
        self.smallLimit = header[2] & 0x01 != 0
        self.twice = header[2] & 0x02 != 0
        self.cancelAfter = header[2] & 0x04 != 0 ? Int(header[3] & 0x1F) : nil
        self.automaticHTTP2 = header[2] & 0x08 == 0
        self.path = Self.paths[Int(header[2] >> 4) & 0x3]
        self.scripts = Self.scripts(Array(input.dropFirst(4)))
    }

    /// At most this many connections get a script, and this many bytes are sent in all.
    static let maximumConnections = 8
    static let maximumBytes = 4 << 20

    private static func scripts(_ bytes: [UInt8]) -> [[ScriptStep]] {
        var scripts: [[ScriptStep]] = [[]]
        var reader = Reader(bytes: bytes[...])
        var lastSent: [UInt8] = []
        var sentBytes = 0
        func append(_ step: ScriptStep) {
            scripts[scripts.count - 1].append(step)
        }
        while let type = reader.byte() {
            switch type {
            case 0x01, 0x09:
                lastSent = type == 0x01 ? reader.lengthPrefixed() : reader.lengthPrefixed(bytes: 2)
                sentBytes += lastSent.count
                append(.send(lastSent))
            case 0x02:
                append(.pause(milliseconds: Int(reader.byte() ?? 0) % 21))
            case 0x03:
                append(.fin)
            case 0x04:
                append(.rst)
            case 0x05:
                guard scripts.count < Self.maximumConnections else { return scripts }
                scripts.append([])
            case 0x06:
                append(.waitForRequest)
            case 0x07:
                append(.drain)
            case 0x08:
                let times = Int(reader.byte() ?? 0) * 16
                guard !lastSent.isEmpty, sentBytes + times * lastSent.count <= Self.maximumBytes else { break }
                sentBytes += times * lastSent.count
                append(.send(Self.repeated(lastSent, times: times)))
            case 0x0A:
                append(.hold)
            case 0x10:
                let frameType = reader.byte() ?? 0
                let flags = reader.byte() ?? 0
                let stream = StreamReference(rawValue: (reader.byte() ?? 1) & 0x3) ?? .current
                append(.frame(type: frameType, flags: flags, stream: stream, payload: reader.lengthPrefixed(bytes: 2)))
            case 0x11:
                let stream = StreamReference(rawValue: (reader.byte() ?? 1) & 0x3) ?? .current
                let flags = (reader.byte() ?? 0x4) | 0x4
                let count = Int(reader.byte() ?? 0) % 32
                var fields: [([UInt8], [UInt8])] = []
                for _ in 0..<count {
                    fields.append((reader.lengthPrefixed(), reader.lengthPrefixed()))
                }
                append(.frame(type: 0x1, flags: flags, stream: stream, payload: HTTP2Bytes.headerBlock(fields)))
            default:
                break
            }
        }
        return scripts
    }

    /// `bytes` `times` times over, copied with `memcpy`: a generic copy compiled in this module runs a byte at a time
    /// under the fuzzer's comparison tracing.
    private static func repeated(_ bytes: [UInt8], times: Int) -> [UInt8] {
        let total = times * bytes.count
        return [UInt8](unsafeUninitializedCapacity: total) { buffer, count in
            bytes.withUnsafeBytes { source in
                guard let target = buffer.baseAddress, let from = source.baseAddress else { return }
                for index in 0..<times { memcpy(target + index * source.count, from, source.count) }
                count = total
            }
        }
    }

    var description: String {
        "\(self.kind) \(self.path) redirects \(self.redirects) credential \(self.credential) cookies \(self.cookies) "
            + "cache \(self.memoryCache)/\(self.diskCache) decompression \(self.decompression) retry \(self.retry) "
            + "validate \(self.validate) small \(self.smallLimit) twice \(self.twice) cancel \(String(describing: self.cancelAfter)), "
            + "\(self.scripts.count) connection scripts"
    }
}

/// Reads an input's steps.
private struct Reader {
    var bytes: ArraySlice<UInt8>

    mutating func byte() -> UInt8? {
        self.bytes.popFirst()
    }

    /// A length (one byte, or two big-endian) and that many bytes (fewer at the input's end).
    mutating func lengthPrefixed(bytes: Int = 1) -> [UInt8] {
        var length = 0
        for _ in 0..<bytes { length = length << 8 | Int(self.byte() ?? 0) }
        let taken = Array(self.bytes.prefix(length))
        self.bytes = self.bytes.dropFirst(length)
        return taken
    }
}
