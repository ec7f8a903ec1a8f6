import AsyncHTTPClient
import Crypto
import NIOCore

/// An upload body produced while it is sent, in chunks whose sizes cycle through `chunkSizes`.
///
/// The body is a list of byte arrays; repeating one array many times makes a large body that
/// takes little memory.
struct UploadBody: AsyncSequence, Sendable {
    typealias Element = ByteBuffer

    private let segments: [[UInt8]]
    private let chunkSizes: [Int]

    /// A body of `segments` one after another, sent in chunks of `chunkSizes` (cycling).
    init(segments: [[UInt8]], chunkSizes: [Int] = [64 * 1024]) {
        self.segments = segments.filter { !$0.isEmpty }
        self.chunkSizes = chunkSizes
    }

    /// A body of `bytes`, sent in chunks of `chunkSizes` (cycling).
    init(bytes: [UInt8], chunkSizes: [Int] = [64 * 1024]) {
        self.init(segments: [bytes], chunkSizes: chunkSizes)
    }

    /// The number of bytes in the body.
    var count: Int {
        self.segments.reduce(0) { $0 + $1.count }
    }

    /// The SHA-256 of the body as lowercase hexadecimal.
    var sha256: String {
        var hasher = SHA256()
        for segment in self.segments {
            hasher.update(data: segment)
        }
        return hex(hasher.finalize())
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(segments: self.segments, chunkSizes: self.chunkSizes)
    }

    struct AsyncIterator: AsyncIteratorProtocol {
        let segments: [[UInt8]]
        let chunkSizes: [Int]
        var segmentIndex = 0
        var offset = 0
        var chunkIndex = 0

        mutating func next() async -> ByteBuffer? {
            var wanted = self.chunkSizes[self.chunkIndex % self.chunkSizes.count]
            self.chunkIndex += 1
            var buffer = ByteBuffer()
            buffer.reserveCapacity(wanted)
            while wanted > 0, self.segmentIndex < self.segments.count {
                let segment = self.segments[self.segmentIndex]
                let taken = Swift.min(wanted, segment.count - self.offset)
                buffer.writeBytes(segment[self.offset..<self.offset + taken])
                self.offset += taken
                wanted -= taken
                if self.offset == segment.count {
                    self.segmentIndex += 1
                    self.offset = 0
                }
            }
            return buffer.readableBytes > 0 ? buffer : nil
        }
    }
}

/// Lowercase hexadecimal for `bytes`.
func hex(_ bytes: some Sequence<UInt8>) -> String {
    let digits = Array("0123456789abcdef")
    return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] })
}

/// The SHA-256 of `bytes` as lowercase hexadecimal.
func sha256(_ bytes: some Sequence<UInt8>) -> String {
    hex(SHA256.hash(data: Array(bytes)))
}

/// Deterministic pseudo-random bytes (SplitMix64).
func pseudoRandomBytes(count: Int, seed: UInt64) -> [UInt8] {
    var state = seed
    // Whole words are stored directly: a debug build is slow at byte-by-byte loops.
    let words = (count + 7) / 8
    let bytes = [UInt8](unsafeUninitializedCapacity: words * 8) { buffer, initialized in
        let raw = UnsafeMutableRawBufferPointer(buffer)
        for index in 0..<words {
            state &+= 0x9E37_79B9_7F4A_7C15
            var mixed = state
            mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
            mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
            raw.storeBytes(of: (mixed ^ (mixed >> 31)).littleEndian, toByteOffset: index * 8, as: UInt64.self)
        }
        initialized = words * 8
    }
    return Array(bytes[..<count])
}

extension Harness {
    /// Sends `body` as a stream to `path`, with a Content-Length when `knownLength` is set, else chunked.
    func upload(
        _ body: UploadBody,
        to path: String = "/upload",
        method: String = "POST",
        contentType: String? = "application/octet-stream",
        knownLength: Bool = true,
        timeout: TimeAmount = .seconds(60)
    ) async throws -> Fetched {
        var request = HTTPClientRequest(url: self.server.baseURL + path)
        request.method = .init(rawValue: method)
        if let contentType {
            request.headers.add(name: "Content-Type", value: contentType)
        }
        request.body = .stream(body, length: knownLength ? .known(Int64(body.count)) : .unknown)
        let response = try await self.client.execute(request, timeout: timeout)
        let collected = try await response.body.collect(upTo: 16 * 1024 * 1024)
        return Fetched(
            status: Int(response.status.code),
            headers: response.headers.map { ($0.name, $0.value) },
            body: Array(collected.readableBytesView)
        )
    }
}
