import Foundation

extension ImageHeaderParser {
    /// JPEG: SOI (`FF D8`), then marker segments up to the first start-of-frame (SOFn), whose payload is
    /// precision (1), height (2, BE), width (2, BE) and the components. The shortest body that parses ends
    /// with the SOF segment.
    ///
    /// A marker is `FF` and a code, and may be preceded by any number of `FF` fill bytes. TEM (`01`), RSTn
    /// (`D0`–`D7`) and SOI (`D8`) stand alone; every other segment has a 2-byte big-endian length that counts
    /// itself. Each step advances by at least one byte, so the walk ends within the body.
    static func parseJPEG(_ bytes: Bytes) throws(KiteError) -> ImageHeader {
        var offset = 2
        while true {
            guard let lead = bytes.byte(at: offset) else {
                throw self.failure("the JPEG has no SOF segment before its end")
            }
            guard lead == 0xFF else {
                throw self.failure(
                    "the JPEG has byte \(bytes.hex(at: offset, count: 1)) at offset \(offset) where a marker should start"
                )
            }
            var codeOffset = offset + 1
            while bytes.byte(at: codeOffset) == 0xFF { codeOffset += 1 }
            guard let code = bytes.byte(at: codeOffset) else {
                throw self.failure("the JPEG has no SOF segment before its end")
            }
            let markerOffset = codeOffset - 1
            let marker = "FF\(bytes.hex(at: codeOffset, count: 1))"
            switch code {
            case 0x01, 0xD0...0xD8:
                offset = codeOffset + 1
                continue
            case 0xD9:
                throw self.failure("the JPEG reaches its EOI marker at offset \(markerOffset) before any SOF segment")
            case 0xDA:
                throw self.failure("the JPEG starts its scan (SOS) at offset \(markerOffset) before any SOF segment")
            case 0x00:
                throw self.failure("the JPEG has FF 00 at offset \(markerOffset), which is not a marker")
            default:
                break
            }
            let lengthOffset = codeOffset + 1
            guard let length = bytes.uint16(at: lengthOffset, bigEndian: true) else {
                throw self.failure(
                    "the JPEG header is truncated: the \(marker) segment at offset \(markerOffset) has no length"
                )
            }
            guard length >= 2 else {
                throw self.failure(
                    "the JPEG \(marker) segment at offset \(markerOffset) has length \(length), less than 2"
                )
            }
            guard bytes.has(length, at: lengthOffset) else {
                throw self.failure(
                    "the JPEG \(marker) segment at offset \(markerOffset) says \(length) bytes, "
                        + "past the end of the \(bytes.count)-byte body"
                )
            }
            if self.isStartOfFrame(code) {
                guard length >= 8 else {
                    throw self.failure(
                        "the JPEG \(marker) (SOF) segment at offset \(markerOffset) has length \(length), less than 8"
                    )
                }
                guard let height = bytes.uint16(at: lengthOffset + 3, bigEndian: true),
                    let width = bytes.uint16(at: lengthOffset + 5, bigEndian: true)
                else { throw self.failure("the JPEG SOF segment cannot be read") }
                // A height of 0 defers it to a DNL marker after the first scan, which a header reader
                // cannot reach; it is reported like any other zero dimension.
                return try self.header(.jpeg, width: width, height: height)
            }
            offset = lengthOffset + length
        }
    }

    /// Whether `code` starts a frame: `C0`–`CF` except DHT (`C4`), JPG (`C8`) and DAC (`CC`).
    static func isStartOfFrame(_ code: UInt8) -> Bool {
        (0xC0...0xCF).contains(code) && code != 0xC4 && code != 0xC8 && code != 0xCC
    }
}
