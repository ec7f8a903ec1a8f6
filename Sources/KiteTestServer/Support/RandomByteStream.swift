import NIOCore

/// A deterministic stream of pseudo-random bytes (SplitMix64), the same for the same seed however
/// it is split into chunks.
struct RandomByteStream: Sendable {
    private var state: UInt64
    private var pending: UInt64 = 0
    private var pendingCount = 0

    init(seed: UInt64) {
        self.state = seed
    }

    /// A stream seeded from the system's random number generator.
    static func unseeded() -> RandomByteStream {
        RandomByteStream(seed: UInt64.random(in: .min ... .max))
    }

    /// A stream for httpbin's optional `seed` query option.
    ///
    /// - Throws: ``HTTPBinError`` (400) when the seed is not an integer.
    static func forSeedOption(_ seed: String?) throws(HTTPBinError) -> RandomByteStream {
        guard let seed else { return .unseeded() }
        let trimmed = seed.trimmingSpaces()
        if let value = Int64(trimmed) {
            return RandomByteStream(seed: UInt64(bitPattern: value))
        }
        if let value = UInt64(trimmed) {
            return RandomByteStream(seed: value)
        }
        throw HTTPBinError(.badRequest, "Invalid seed: \(seed)")
    }

    private mutating func nextWord() -> UInt64 {
        self.state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = self.state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }

    /// The next `count` bytes of the stream.
    mutating func next(_ count: Int, allocator: ByteBufferAllocator = ByteBufferAllocator()) -> ByteBuffer {
        var buffer = allocator.buffer(capacity: count)
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { pointer in
            var index = 0
            while index < count, self.pendingCount > 0 {
                pointer[index] = UInt8(truncatingIfNeeded: self.pending)
                self.pending >>= 8
                self.pendingCount -= 1
                index += 1
            }
            while count - index >= 8 {
                pointer.storeBytes(of: self.nextWord().littleEndian, toByteOffset: index, as: UInt64.self)
                index += 8
            }
            if index < count {
                self.pending = self.nextWord()
                self.pendingCount = 8
                while index < count {
                    pointer[index] = UInt8(truncatingIfNeeded: self.pending)
                    self.pending >>= 8
                    self.pendingCount -= 1
                    index += 1
                }
            }
            return count
        }
        return buffer
    }
}
