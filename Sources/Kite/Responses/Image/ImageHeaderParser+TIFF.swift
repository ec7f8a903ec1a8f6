import Foundation

extension ImageHeaderParser {
    /// How many IFDs without a size are followed before giving up.
    private static let maximumTIFFDirectories = 16

    /// TIFF: `II*\0` (little-endian) or `MM\0*` (big-endian), then the offset of the first image file
    /// directory (IFD). An IFD is an entry count (2), 12-byte entries (tag, type, count, value) and the
    /// offset of the next IFD (4, 0 for none). The size is in tags 256 (ImageWidth) and 257 (ImageLength),
    /// of type SHORT or LONG. The IFD's entry count and entries must lie inside the body.
    ///
    /// The first IFD is the image. Should it lack a size, the next ones are tried, at most
    /// ``maximumTIFFDirectories`` and never one already seen, so a chain that loops is an error.
    static func parseTIFF(_ bytes: Bytes) throws(KiteError) -> ImageHeader {
        let bigEndian = bytes.matches("MM", at: 0)
        guard let first = bytes.uint32(at: 4, bigEndian: bigEndian) else {
            throw self.failure("the TIFF header is truncated: it needs 8 bytes, the body has \(bytes.count)")
        }
        var directory = Int(clamping: first)
        var seen: [Int] = []
        while true {
            guard directory >= 8 else {
                throw self.failure("the TIFF IFD offset \(directory) points inside the 8-byte header")
            }
            guard let entryCount = bytes.uint16(at: directory, bigEndian: bigEndian) else {
                throw self.failure(
                    "the TIFF IFD offset \(directory) is past the end of the \(bytes.count)-byte body"
                )
            }
            let entriesOffset = directory + 2
            guard bytes.has(12 * entryCount, at: entriesOffset) else {
                throw self.failure(
                    "the TIFF IFD at offset \(directory) has \(entryCount) entries, which need "
                        + "\(2 + 12 * entryCount) bytes, the body has \(bytes.count - directory) from there"
                )
            }
            var width: Int?
            var height: Int?
            for index in 0..<entryCount {
                let entry = entriesOffset + 12 * index
                switch bytes.uint16(at: entry, bigEndian: bigEndian) {
                case 256: width = try self.tiffDimension(bytes, entry: entry, bigEndian: bigEndian, tag: "ImageWidth")
                case 257:
                    height = try self.tiffDimension(bytes, entry: entry, bigEndian: bigEndian, tag: "ImageLength")
                default: break
                }
            }
            if let width, let height { return try self.header(.tiff, width: width, height: height) }

            seen.append(directory)
            let nextOffset = entriesOffset + 12 * entryCount
            guard let next32 = bytes.uint32(at: nextOffset, bigEndian: bigEndian) else {
                throw self.failure(
                    "the TIFF IFD at offset \(directory) has no ImageWidth and ImageLength, and its next-IFD "
                        + "offset is past the end of the \(bytes.count)-byte body"
                )
            }
            guard next32 != 0 else { throw self.failure("the TIFF has no IFD with ImageWidth and ImageLength") }
            let next = Int(clamping: next32)
            guard !seen.contains(next) else {
                throw self.failure("the TIFF IFD at offset \(directory) links back to the IFD at offset \(next)")
            }
            guard seen.count < self.maximumTIFFDirectories else {
                throw self.failure(
                    "the TIFF has more than \(self.maximumTIFFDirectories) IFDs without ImageWidth and ImageLength"
                )
            }
            directory = next
        }
    }

    /// The value of a size tag: one SHORT (type 3, in the first 2 bytes of the value field) or one LONG
    /// (type 4).
    private static func tiffDimension(
        _ bytes: Bytes,
        entry: Int,
        bigEndian: Bool,
        tag: String
    )
        throws(KiteError) -> Int
    {
        guard let type = bytes.uint16(at: entry + 2, bigEndian: bigEndian),
            let count = bytes.uint32(at: entry + 4, bigEndian: bigEndian)
        else { throw self.failure("the TIFF \(tag) entry cannot be read") }
        guard count == 1 else { throw self.failure("the TIFF \(tag) tag has \(count) values, not 1") }
        switch type {
        case 3:
            guard let value = bytes.uint16(at: entry + 8, bigEndian: bigEndian) else {
                throw self.failure("the TIFF \(tag) value cannot be read")
            }
            return value
        case 4:
            guard let value = bytes.uint32(at: entry + 8, bigEndian: bigEndian) else {
                throw self.failure("the TIFF \(tag) value cannot be read")
            }
            return try self.dimension(value, of: .tiff)
        default:
            throw self.failure("the TIFF \(tag) tag has type \(type), not SHORT (3) or LONG (4)")
        }
    }
}
