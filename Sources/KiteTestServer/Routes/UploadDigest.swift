import Crypto
import NIOCore

/// The length and SHA-256 of bytes that arrive piece by piece, computed without keeping them.
struct UploadDigest {
    private var hasher = SHA256()

    /// How many bytes have been added.
    private(set) var length = 0

    /// Adds the readable bytes of `buffer`.
    mutating func update(_ buffer: ByteBuffer) {
        self.length += buffer.readableBytes
        buffer.withUnsafeReadableBytes { bytes in
            self.hasher.update(bufferPointer: bytes)
        }
    }

    /// The SHA-256 of the bytes added so far, as lowercase hexadecimal.
    var hexDigest: String {
        Self.hex(self.hasher.finalize())
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// Lowercase hexadecimal for `bytes`.
    static func hex(_ bytes: some Sequence<UInt8>) -> String {
        var text: [UInt8] = []
        for byte in bytes {
            text.append(Self.hexDigits[Int(byte >> 4)])
            text.append(Self.hexDigits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
