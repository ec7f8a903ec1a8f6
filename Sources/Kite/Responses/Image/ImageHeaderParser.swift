import Foundation

/// The format and pixel size read from the start of an image body.
struct ImageHeader: Hashable, Sendable {
    var format: ImageInfo.Format
    var pixelWidth: Int
    var pixelHeight: Int
}

/// Reads an image's format and pixel size from its header, without decoding pixels.
///
/// The format comes from the magic bytes. Each format's reader walks the body through ``Bytes``, whose
/// reads are bounds-checked and return `nil` past the end, and compares every length or offset read from
/// the body against the bytes that remain before adding it, so a truncated or lying header is a
/// ``KiteError`` rather than a trap. Nothing is allocated from a length read from the body, and every loop
/// either advances by at least one byte or is bounded by a small constant.
enum ImageHeaderParser {
    /// Reads the format and pixel size of `data`.
    ///
    /// - Parameter data: The body; it may be a slice that does not start at index 0.
    /// - Returns: The format and pixel size, both dimensions at least 1.
    /// - Throws: A `responseSerializationFailed` ``KiteError`` naming the format and what is wrong.
    static func parse(_ data: Data) throws(KiteError) -> ImageHeader {
        let bytes = Bytes(data)
        if bytes.matches([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], at: 0) { return try self.parsePNG(bytes) }
        if bytes.matches([0xFF, 0xD8, 0xFF], at: 0) { return try self.parseJPEG(bytes) }
        if bytes.matches("GIF87a", at: 0) || bytes.matches("GIF89a", at: 0) { return try self.parseGIF(bytes) }
        if bytes.matches("RIFF", at: 0), bytes.matches("WEBP", at: 8) { return try self.parseWebP(bytes) }
        if bytes.matches("ftyp", at: 4) { return try self.parseISOBMFF(bytes) }
        if bytes.matches("II*\0", at: 0) || bytes.matches("MM\0*", at: 0) { return try self.parseTIFF(bytes) }
        if bytes.matches("BM", at: 0) { return try self.parseBMP(bytes) }
        let start = bytes.count == 0 ? "it is empty" : "it starts with \(bytes.hex(at: 0, count: 4))"
        throw self.failure("the body is not a PNG, JPEG, GIF, WebP, HEIC, BMP or TIFF image (\(start))")
    }

    /// A `responseSerializationFailed` error with `message`.
    static func failure(_ message: String) -> KiteError {
        KiteError(code: .responseSerializationFailed, message: message)
    }

    /// The header, or an error when either dimension is 0.
    static func header(
        _ format: ImageInfo.Format,
        width: Int,
        height: Int,
        source: String = "header"
    )
        throws(KiteError) -> ImageHeader
    {
        guard width > 0, height > 0 else {
            throw self.failure("the \(format.name) \(source) says \(width) x \(height) pixels")
        }
        return ImageHeader(format: format, pixelWidth: width, pixelHeight: height)
    }

    /// An unsigned 32-bit dimension as `Int`, or an error where `Int` is 32 bits and cannot hold it.
    static func dimension(_ value: UInt32, of format: ImageInfo.Format) throws(KiteError) -> Int {
        guard let value = Int(exactly: value) else {
            throw self.failure("the \(format.name) dimension \(value) does not fit in Int on this platform")
        }
        return value
    }
}

// MARK: - PNG, GIF and BMP

extension ImageHeaderParser {
    /// PNG: the 8-byte signature, then IHDR, which must be the first chunk: length (4, = 13), type (4),
    /// width (4), height (4), five more bytes, CRC (4). The shortest body that parses is 33 bytes.
    static func parsePNG(_ bytes: Bytes) throws(KiteError) -> ImageHeader {
        let ihdrEnd = 33
        if let length = bytes.uint32(at: 8, bigEndian: true), bytes.has(4, at: 12) {
            guard bytes.matches("IHDR", at: 12) else {
                throw self.failure("the PNG first chunk is \(bytes.fourCC(at: 12)), not IHDR")
            }
            guard length == 13 else { throw self.failure("the PNG IHDR chunk has length \(length), not 13") }
        }
        guard let chunk = bytes.slice(at: 12, count: 17), let stored = bytes.uint32(at: 29, bigEndian: true) else {
            throw self.failure(
                "the PNG header is truncated: the IHDR chunk needs \(ihdrEnd) bytes, the body has \(bytes.count)"
            )
        }
        let computed = self.crc32(chunk)
        guard computed == stored else {
            throw self.failure(
                "the PNG IHDR chunk's CRC is \(self.hex(stored)), but its bytes give \(self.hex(computed))"
            )
        }
        guard let width = bytes.uint32(at: 16, bigEndian: true), let height = bytes.uint32(at: 20, bigEndian: true)
        else { throw self.failure("the PNG IHDR chunk cannot be read") }
        // The PNG specification limits both dimensions to 2^31 - 1.
        guard width <= UInt32(Int32.max), height <= UInt32(Int32.max) else {
            throw self.failure("the PNG header says \(width) x \(height) pixels, more than 2^31 - 1")
        }
        return try self.header(.png, width: Int(width), height: Int(height))
    }

    /// GIF: `GIF87a` or `GIF89a`, then the 7-byte logical screen descriptor: width (2, LE), height (2, LE),
    /// flags, background colour, aspect ratio. The shortest body that parses is 13 bytes.
    static func parseGIF(_ bytes: Bytes) throws(KiteError) -> ImageHeader {
        guard bytes.has(13, at: 0), let width = bytes.uint16(at: 6, bigEndian: false),
            let height = bytes.uint16(at: 8, bigEndian: false)
        else {
            throw self.failure(
                "the GIF header is truncated: the logical screen descriptor needs 13 bytes, the body has \(bytes.count)"
            )
        }
        return try self.header(.gif, width: width, height: height)
    }

    /// BMP: the 14-byte file header (`BM`, file size, reserved, pixel offset), then the DIB header, whose
    /// first 4 bytes are its size. A 12-byte BITMAPCOREHEADER has 16-bit unsigned dimensions; a
    /// BITMAPINFOHEADER (40 bytes) or a later one has 32-bit signed dimensions, and a negative height means
    /// the rows are stored top-down. The whole DIB header must be in the body.
    static func parseBMP(_ bytes: Bytes) throws(KiteError) -> ImageHeader {
        let fileHeaderSize = 14
        guard let dibSize32 = bytes.uint32(at: fileHeaderSize, bigEndian: false) else {
            throw self.failure("the BMP header is truncated: it needs 18 bytes, the body has \(bytes.count)")
        }
        let dibSize = Int(clamping: dibSize32)
        guard dibSize == 12 || dibSize >= 40 else {
            throw self.failure(
                "the BMP DIB header size is \(dibSize) bytes, not 12 (BITMAPCOREHEADER) or at least 40 (BITMAPINFOHEADER)"
            )
        }
        guard bytes.has(dibSize, at: fileHeaderSize) else {
            let needed = UInt64(dibSize32) + UInt64(fileHeaderSize)
            throw self.failure(
                "the BMP header is truncated: the \(dibSize)-byte DIB header needs \(needed) bytes, "
                    + "the body has \(bytes.count)"
            )
        }
        if dibSize == 12 {
            guard let width = bytes.uint16(at: 18, bigEndian: false),
                let height = bytes.uint16(at: 20, bigEndian: false)
            else { throw self.failure("the BMP core header cannot be read") }
            return try self.header(.bmp, width: width, height: height)
        }
        guard let width32 = bytes.uint32(at: 18, bigEndian: false),
            let height32 = bytes.uint32(at: 22, bigEndian: false)
        else { throw self.failure("the BMP info header cannot be read") }
        let width = Int32(bitPattern: width32)
        let height = Int32(bitPattern: height32)
        guard height != Int32.min else {
            throw self.failure("the BMP header says height \(height), which has no positive magnitude")
        }
        // A negative height means the rows are stored top-down; the image is as tall as its magnitude.
        return try self.header(.bmp, width: Int(width), height: Int(height.magnitude))
    }

    /// The CRC-32 (ISO 3309, as PNG uses it) of `bytes`.
    static func crc32(_ bytes: Data) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 {
                crc = (crc >> 1) ^ (0xEDB8_8320 & (0 &- (crc & 1)))
            }
        }
        return ~crc
    }

    /// `0x` and eight upper-case hex digits.
    static func hex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return "0x" + String(repeating: "0", count: 8 - digits.count) + digits
    }
}

// MARK: - Bytes

extension ImageHeaderParser {
    /// Bounds-checked reads from a body whose indices may not start at 0.
    ///
    /// Offsets count from the start of the body. Every read checks the range first, without arithmetic
    /// that can overflow, and returns `nil` when any byte of it is past the end.
    struct Bytes {
        private let data: Data
        /// The number of bytes in the body.
        let count: Int

        init(_ data: Data) {
            self.data = data
            self.count = data.count
        }

        /// Whether the `length` bytes at `offset` are all inside the body.
        func has(_ length: Int, at offset: Int) -> Bool {
            offset >= 0 && length >= 0 && offset <= self.count && length <= self.count - offset
        }

        /// The byte at `offset`.
        func byte(at offset: Int) -> UInt8? {
            guard self.has(1, at: offset) else { return nil }
            return self.data[self.data.startIndex + offset]
        }

        /// The `count` bytes at `offset`.
        func slice(at offset: Int, count: Int) -> Data? {
            guard self.has(count, at: offset) else { return nil }
            let start = self.data.startIndex + offset
            return self.data[start..<(start + count)]
        }

        /// The unsigned integer of `width` bytes at `offset`, in the given byte order.
        private func unsigned(at offset: Int, width: Int, bigEndian: Bool) -> UInt32? {
            guard self.has(width, at: offset) else { return nil }
            let start = self.data.startIndex + offset
            var value: UInt32 = 0
            for index in 0..<width {
                let byte = self.data[start + (bigEndian ? index : width - 1 - index)]
                value = value << 8 | UInt32(byte)
            }
            return value
        }

        /// The 16-bit unsigned integer at `offset`.
        func uint16(at offset: Int, bigEndian: Bool) -> Int? {
            self.unsigned(at: offset, width: 2, bigEndian: bigEndian).map { Int($0) }
        }

        /// The 24-bit little-endian unsigned integer at `offset`.
        func uint24LittleEndian(at offset: Int) -> Int? {
            self.unsigned(at: offset, width: 3, bigEndian: false).map { Int($0) }
        }

        /// The 32-bit unsigned integer at `offset`.
        func uint32(at offset: Int, bigEndian: Bool) -> UInt32? {
            self.unsigned(at: offset, width: 4, bigEndian: bigEndian)
        }

        /// Whether the body holds `expected` at `offset`.
        func matches(_ expected: [UInt8], at offset: Int) -> Bool {
            guard let slice = self.slice(at: offset, count: expected.count) else { return false }
            return slice.elementsEqual(expected)
        }

        /// Whether the body holds the ASCII text `expected` at `offset`.
        func matches(_ expected: String, at offset: Int) -> Bool {
            guard let slice = self.slice(at: offset, count: expected.utf8.count) else { return false }
            return slice.elementsEqual(expected.utf8)
        }

        /// Up to `count` bytes at `offset` as upper-case hex pairs separated by spaces, such as `3C 68 74 6D`.
        func hex(at offset: Int, count: Int) -> String {
            let available = self.has(0, at: offset) ? min(count, self.count - offset) : 0
            guard let slice = self.slice(at: offset, count: available) else { return "" }
            return slice.map { byte in
                let digits = String(byte, radix: 16, uppercase: true)
                return digits.count == 1 ? "0" + digits : digits
            }.joined(separator: " ")
        }

        /// The four bytes at `offset` as a quoted code, such as `'IHDR'`, or as hex when they are not
        /// printable ASCII.
        func fourCC(at offset: Int) -> String {
            guard let slice = self.slice(at: offset, count: 4) else { return "(truncated)" }
            guard slice.allSatisfy({ (0x20...0x7E).contains($0) }) else { return self.hex(at: offset, count: 4) }
            return "'" + String(decoding: slice, as: UTF8.self) + "'"
        }
    }
}
