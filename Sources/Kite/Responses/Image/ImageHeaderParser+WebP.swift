import Foundation

extension ImageHeaderParser {
    /// WebP: `RIFF`, the size of what follows (4, LE), `WEBP`, then the first chunk: its code (4), its
    /// payload size (4, LE) and the payload, which must be `VP8 ` (lossy), `VP8L` (lossless) or `VP8X`
    /// (extended, which carries the canvas size). The RIFF size must fit in the body and the first chunk
    /// in the RIFF size, so no strict prefix of a complete file parses.
    static func parseWebP(_ bytes: Bytes) throws(KiteError) -> ImageHeader {
        let chunkOffset = 12
        let payloadOffset = 20
        guard let riffSize32 = bytes.uint32(at: 4, bigEndian: false) else {
            throw self.failure("the WebP RIFF header cannot be read")
        }
        let riffSize = Int(clamping: riffSize32)
        guard riffSize <= bytes.count - 8 else {
            throw self.failure(
                "the WebP header is truncated: the RIFF header says \(UInt64(riffSize32) + 8) bytes, "
                    + "the body has \(bytes.count)"
            )
        }
        let riffEnd = 8 + riffSize
        guard payloadOffset <= riffEnd, let chunkSize32 = bytes.uint32(at: chunkOffset + 4, bigEndian: false) else {
            throw self.failure("the WebP RIFF data is \(riffSize) bytes, too short for 'WEBP' and a chunk header (12)")
        }
        let chunk = bytes.fourCC(at: chunkOffset)
        let chunkSize = Int(clamping: chunkSize32)
        guard chunkSize <= riffEnd - payloadOffset else {
            throw self.failure(
                "the WebP \(chunk) chunk says \(chunkSize) bytes, past the end of the RIFF data at \(riffEnd)"
            )
        }
        if bytes.matches("VP8 ", at: chunkOffset) {
            return try self.parseVP8(bytes, payloadOffset: payloadOffset, size: chunkSize)
        }
        if bytes.matches("VP8L", at: chunkOffset) {
            return try self.parseVP8L(bytes, payloadOffset: payloadOffset, size: chunkSize)
        }
        if bytes.matches("VP8X", at: chunkOffset) {
            // Flags (1), reserved (3), canvas width - 1 (3, LE), canvas height - 1 (3, LE).
            guard chunkSize >= 10, let widthMinusOne = bytes.uint24LittleEndian(at: payloadOffset + 4),
                let heightMinusOne = bytes.uint24LittleEndian(at: payloadOffset + 7)
            else { throw self.failure("the WebP VP8X chunk is \(chunkSize) bytes, less than 10") }
            return try self.header(.webp, width: widthMinusOne + 1, height: heightMinusOne + 1)
        }
        throw self.failure("the WebP first chunk is \(chunk), not VP8, VP8L or VP8X")
    }

    /// A lossy key frame: frame tag (3), start code `9D 01 2A`, then width and height (2 each, LE), whose
    /// top two bits are a scaling hint, not part of the size.
    private static func parseVP8(_ bytes: Bytes, payloadOffset: Int, size: Int) throws(KiteError) -> ImageHeader {
        guard size >= 10, let width = bytes.uint16(at: payloadOffset + 6, bigEndian: false),
            let height = bytes.uint16(at: payloadOffset + 8, bigEndian: false)
        else { throw self.failure("the WebP VP8 chunk is \(size) bytes, less than the 10 of a frame header") }
        guard bytes.matches([0x9D, 0x01, 0x2A], at: payloadOffset + 3) else {
            throw self.failure(
                "the WebP VP8 chunk has \(bytes.hex(at: payloadOffset + 3, count: 3)) where the start code 9D 01 2A "
                    + "should be"
            )
        }
        return try self.header(.webp, width: width & 0x3FFF, height: height & 0x3FFF, source: "VP8 frame header")
    }

    /// A lossless image: signature `2F`, then 32 bits (LE): width - 1 (14), height - 1 (14), alpha (1) and
    /// version (3, must be 0).
    private static func parseVP8L(_ bytes: Bytes, payloadOffset: Int, size: Int) throws(KiteError) -> ImageHeader {
        guard size >= 5, let signature = bytes.byte(at: payloadOffset),
            let bits = bytes.uint32(at: payloadOffset + 1, bigEndian: false)
        else { throw self.failure("the WebP VP8L chunk is \(size) bytes, less than the 5 of its header") }
        guard signature == 0x2F else {
            throw self.failure(
                "the WebP VP8L chunk starts with \(bytes.hex(at: payloadOffset, count: 1)), not the signature 2F"
            )
        }
        let version = bits >> 29
        guard version == 0 else { throw self.failure("the WebP VP8L version is \(version), not 0") }
        let width = Int(bits & 0x3FFF) + 1
        let height = Int((bits >> 14) & 0x3FFF) + 1
        return try self.header(.webp, width: width, height: height)
    }
}
