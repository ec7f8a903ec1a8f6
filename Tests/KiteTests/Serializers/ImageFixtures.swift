import Foundation
import Testing

@testable import Kite

/// An image body and what ``ImageInfo`` must read from it.
struct ImageFixture: Sendable, CustomTestStringConvertible {
    let name: String
    let bytes: [UInt8]
    let format: ImageInfo.Format
    let mimeType: String
    let pixelWidth: Int
    let pixelHeight: Int
    /// The length of the shortest prefix that parses, to the same size: every shorter prefix is an error.
    /// It is where the structure holding the size ends: the IHDR chunk (PNG), the SOF segment (JPEG), the
    /// logical screen descriptor (GIF), the DIB header (BMP), the IFD's entries (TIFF), the `meta` box
    /// (HEIC), and the whole file for WebP, whose RIFF size must fit in the body.
    let headerEnd: Int

    var testDescription: String { self.name }
}

/// Tiny images of every format.
///
/// The base64 files were written by Pillow 13.0.0 (`python3 -m venv /tmp/imgvenv &&
/// /tmp/imgvenv/bin/pip install pillow`) from images whose pixel at (x, y) is, for RGB,
/// `(x * 15 % 256, y * 50 % 256, (x + y) * 7 % 256)`, for RGBA `(x * 15 % 256, y * 50 % 256, 90,
/// (x * 40 + 30) % 256)`, for P `(x + y) % 4` and for I;16B `x * 1000 + y`:
///
/// ```python
/// exif = Image.Exif(); exif[0x010F] = "Kite"; exif[0x0112] = 1  # Make, Orientation
/// png = save(pattern("RGB", 3, 2), "PNG")
/// jpegBaseline = save(pattern("RGB", 17, 5), "JPEG", quality=50, exif=exif.tobytes())
/// jpegProgressive = save(pattern("RGB", 5, 17), "JPEG", quality=50, progressive=True, optimize=True,
///                        exif=exif.tobytes())
/// gif87a = save(pattern("P", 17, 5), "GIF")
/// gif89a = save(pattern("P", 3, 2), "GIF", transparency=0)
/// webpLossy = save(pattern("RGB", 17, 5), "WEBP", quality=50)            # RIFF/WEBP/'VP8 '
/// webpLossless = save(pattern("RGB", 3, 2), "WEBP", lossless=True)       # RIFF/WEBP/VP8L
/// webpExtended = save(pattern("RGBA", 5, 17), "WEBP", quality=50)        # RIFF/WEBP/VP8X, ALPH, 'VP8 '
/// bmp = save(pattern("RGB", 3, 2), "BMP")                                # BITMAPINFOHEADER
/// bmpTopDown = save(pattern("RGB", 2, 3), "BMP")  # then biHeight (offset 22) negated to -3 and the rows reversed
/// tiffLittleEndian = save(pattern("RGB", 3, 2), "TIFF")                  # II, LONG sizes
/// tiffBigEndian = save(pattern("I;16B", 17, 5), "TIFF")                  # MM, LONG sizes
/// ```
///
/// Both JPEGs are FF D8, APP0 (JFIF) at 2, APP1 (EXIF) at 20, two DQT at 74 and 143, SOF0 or SOF2 at 212
/// (length 17, so it ends at 231), then DHT and SOS. The TIFF IFDs are at offset 8: 10 entries (ending at
/// 130) little-endian, 9 entries (ending at 118) big-endian. Each file was read back by Pillow to the
/// sizes below. The other fixtures are built by the functions further down.
enum ImageFixtures {
    static let all: [ImageFixture] = [
        fixture("png", pngBase64, .png, "image/png", 3, 2, headerEnd: 33),
        fixture("jpegBaseline", jpegBaselineBase64, .jpeg, "image/jpeg", 17, 5, headerEnd: 231),
        fixture("jpegProgressive", jpegProgressiveBase64, .jpeg, "image/jpeg", 5, 17, headerEnd: 231),
        ImageFixture(
            name: "jpegFillBytesAndStandaloneMarkers",
            bytes: jpegWithFillBytesAndStandaloneMarkers,
            format: .jpeg,
            mimeType: "image/jpeg",
            pixelWidth: 17,
            pixelHeight: 5,
            headerEnd: jpegWithFillBytesAndStandaloneMarkersSOFEnd
        ),
        fixture("gif87a", gif87aBase64, .gif, "image/gif", 17, 5, headerEnd: 13),
        fixture("gif89a", gif89aBase64, .gif, "image/gif", 3, 2, headerEnd: 13),
        fixture("webpLossy", webpLossyBase64, .webp, "image/webp", 17, 5, headerEnd: 96),
        fixture("webpLossless", webpLosslessBase64, .webp, "image/webp", 3, 2, headerEnd: 60),
        fixture("webpExtended", webpExtendedBase64, .webp, "image/webp", 5, 17, headerEnd: 170),
        fixture("bmp", bmpBase64, .bmp, "image/bmp", 3, 2, headerEnd: 54),
        fixture("bmpTopDown", bmpTopDownBase64, .bmp, "image/bmp", 2, 3, headerEnd: 54),
        ImageFixture(
            name: "bmpCoreHeader",
            bytes: bmpCoreHeader,
            format: .bmp,
            mimeType: "image/bmp",
            pixelWidth: 3,
            pixelHeight: 2,
            headerEnd: 26
        ),
        fixture("tiffLittleEndian", tiffLittleEndianBase64, .tiff, "image/tiff", 3, 2, headerEnd: 130),
        fixture("tiffBigEndian", tiffBigEndianBase64, .tiff, "image/tiff", 17, 5, headerEnd: 118),
        // Header (8), IFD at 8: count (2), 4 entries (48), next (4); the IFD's entries end at 58.
        ImageFixture(
            name: "tiffShortLittleEndian",
            bytes: tiff(bigEndian: false, directories: [sizeEntries(width: 5, height: 3, type: 3)]),
            format: .tiff,
            mimeType: "image/tiff",
            pixelWidth: 5,
            pixelHeight: 3,
            headerEnd: 58
        ),
        ImageFixture(
            name: "tiffShortBigEndian",
            bytes: tiff(bigEndian: true, directories: [sizeEntries(width: 5, height: 3, type: 3)]),
            format: .tiff,
            mimeType: "image/tiff",
            pixelWidth: 5,
            pixelHeight: 3,
            headerEnd: 58
        ),
        // IFD 0 at 8 has only NewSubfileType (2 + 12 + 4 bytes); IFD 1 at 26 has the size: 2 + 4 * 12 bytes, ending at 76.
        ImageFixture(
            name: "tiffSizeInSecondIFD",
            bytes: tiff(
                bigEndian: true,
                directories: [
                    [TIFFEntry(tag: 254, type: 4, value: 1)], sizeEntries(width: 640, height: 70_000, type: 4),
                ]
            ),
            format: .tiff,
            mimeType: "image/tiff",
            pixelWidth: 640,
            pixelHeight: 70_000,
            headerEnd: 76
        ),
        heicFixture("heic", heic(sizes: [(17, 5)]), 17, 5),
        // A thumbnail's ispe before and a tile's after the primary image's.
        heicFixture("heicWithThumbnail", heic(sizes: [(320, 240), (4032, 3024), (512, 512)]), 4032, 3024),
        heicFixture("heifMif1", heic(majorBrand: "mif1", compatibleBrands: ["mif1"], sizes: [(3, 2)]), 3, 2),
    ]

    static func named(_ name: String) -> [UInt8] {
        all.first { $0.name == name }?.bytes ?? []
    }

    private static func fixture(
        _ name: String,
        _ base64: String,
        _ format: ImageInfo.Format,
        _ mimeType: String,
        _ width: Int,
        _ height: Int,
        headerEnd: Int
    ) -> ImageFixture {
        ImageFixture(
            name: name,
            bytes: Array(Data(base64Encoded: base64, options: .ignoreUnknownCharacters) ?? Data()),
            format: format,
            mimeType: mimeType,
            pixelWidth: width,
            pixelHeight: height,
            headerEnd: headerEnd
        )
    }

    private static func heicFixture(_ name: String, _ file: HEICFile, _ width: Int, _ height: Int) -> ImageFixture {
        ImageFixture(
            name: name,
            bytes: file.bytes,
            format: .heic,
            mimeType: "image/heic",
            pixelWidth: width,
            pixelHeight: height,
            headerEnd: file.metaEnd
        )
    }

    // MARK: - Hand-built files

    /// SOI, APP0 with an empty payload, three fill bytes before RST0, TEM, SOI again, two fill bytes before
    /// SOF2 (17 x 5, three components), then DHT and EOI.
    static let jpegWithFillBytesAndStandaloneMarkers: [UInt8] =
        [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x02, 0xFF, 0xFF, 0xFF, 0xD0, 0xFF, 0x01, 0xFF, 0xD8, 0xFF, 0xFF, 0xFF, 0xC2]
        + [0x00, 0x11, 0x08, 0x00, 0x05, 0x00, 0x11, 0x03, 0x01, 0x22, 0x00, 0x02, 0x11, 0x01, 0x03, 0x11, 0x01]
        + [0xFF, 0xC4, 0x00, 0x02, 0xFF, 0xD9]
    /// 18 bytes before the SOF2 length field, then the 17 bytes the length counts.
    static let jpegWithFillBytesAndStandaloneMarkersSOFEnd = 18 + 17

    /// A 3 x 2, 24-bit BMP with a 12-byte BITMAPCOREHEADER (16-bit sizes); rows padded to 12 bytes.
    static let bmpCoreHeader: [UInt8] =
        Array("BM".utf8) + le32(26 + 24) + le32(0) + le32(26)
        + le32(12) + le16(3) + le16(2) + le16(1) + le16(24)
        + [UInt8](repeating: 0x7F, count: 24)

    /// A PNG signature and IHDR chunk (8-bit RGB) with a correct CRC, for sizes Pillow will not write.
    static func pngHeader(width: UInt32, height: UInt32) -> [UInt8] {
        let chunk = Array("IHDR".utf8) + be32(width) + be32(height) + [8, 2, 0, 0, 0]
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + be32(13) + chunk + be32(crc32(chunk))
    }

    struct TIFFEntry {
        var tag: UInt16
        var type: UInt16
        var count: UInt32 = 1
        var value: UInt32
    }

    /// ImageWidth, ImageLength, BitsPerSample 8 and PhotometricInterpretation 1, the sizes of `type`.
    static func sizeEntries(width: UInt32, height: UInt32, type: UInt16) -> [TIFFEntry] {
        [
            TIFFEntry(tag: 256, type: type, value: width),
            TIFFEntry(tag: 257, type: type, value: height),
            TIFFEntry(tag: 258, type: 3, value: 8),
            TIFFEntry(tag: 262, type: 3, value: 1),
        ]
    }

    /// A TIFF header and IFDs laid out one after another from offset 8, each linking to the next, the last
    /// to `lastNext` (0: none), then 4 bytes of pixels. SHORT values sit in the first 2 bytes of the field.
    static func tiff(bigEndian: Bool, directories: [[TIFFEntry]], lastNext: UInt32 = 0) -> [UInt8] {
        let u16 = bigEndian ? be16 : le16
        let u32 = bigEndian ? be32 : le32
        var bytes: [UInt8] = bigEndian ? Array("MM".utf8) + be16(42) : Array("II".utf8) + le16(42)
        bytes += u32(8)
        for (index, entries) in directories.enumerated() {
            bytes += u16(UInt16(entries.count))
            for entry in entries {
                bytes += u16(entry.tag) + u16(entry.type) + u32(entry.count)
                bytes += entry.type == 3 ? u16(UInt16(truncatingIfNeeded: entry.value)) + [0, 0] : u32(entry.value)
            }
            let next = bytes.count + 4
            bytes += index == directories.count - 1 ? u32(lastNext) : u32(UInt32(next))
        }
        return bytes + [1, 2, 3, 4]
    }

    struct HEICFile {
        var bytes: [UInt8]
        /// Where the `meta` box ends; an `mdat` box follows.
        var metaEnd: Int
    }

    /// An ISO base media file: `ftyp`, then `meta` (full box) holding `hdlr`, `pitm` and `iprp`, which holds
    /// `ipco` (a `colr` box, then one `ispe` per size) and `ipma`; then a small `mdat`. Without `meta`, just
    /// `ftyp` and `mdat`.
    static func heic(
        majorBrand: String = "heic",
        compatibleBrands: [String] = ["mif1", "heic"],
        sizes: [(width: UInt32, height: UInt32)],
        withMeta: Bool = true
    ) -> HEICFile {
        let ftyp = box("ftyp", Array(majorBrand.utf8) + be32(0) + compatibleBrands.flatMap { Array($0.utf8) })
        let hdlr = fullBox("hdlr", be32(0) + Array("pict".utf8) + [UInt8](repeating: 0, count: 13))
        let pitm = fullBox("pitm", be16(1))
        let colr = box("colr", Array("nclx".utf8) + [0, 1, 0, 13, 0, 6, 0x80])
        let ispes = sizes.flatMap { fullBox("ispe", be32($0.width) + be32($0.height)) }
        let ipco = box("ipco", colr + ispes)
        let associations = (1...(sizes.count + 1)).map { UInt8($0) | 0x80 }
        let ipma = fullBox("ipma", be32(1) + be16(1) + [UInt8(associations.count)] + associations)
        let meta = fullBox("meta", hdlr + pitm + box("iprp", ipco + ipma))
        let mdat = box("mdat", [0xDE, 0xAD, 0xBE, 0xEF])
        guard withMeta else { return HEICFile(bytes: ftyp + mdat, metaEnd: ftyp.count) }
        return HEICFile(bytes: ftyp + meta + mdat, metaEnd: ftyp.count + meta.count)
    }

    static func box(_ type: String, _ content: [UInt8]) -> [UInt8] {
        be32(UInt32(8 + content.count)) + Array(type.utf8) + content
    }

    /// A box whose content starts with version 0 and flags 0.
    static func fullBox(_ type: String, _ content: [UInt8]) -> [UInt8] {
        box(type, [0, 0, 0, 0] + content)
    }

    /// Where the first box of `type` starts (its size field), or -1.
    static func boxOffset(_ type: String, in bytes: [UInt8]) -> Int {
        let code = Array(type.utf8)
        guard bytes.count >= 8 else { return -1 }
        for index in 4...(bytes.count - 4) where Array(bytes[index..<(index + 4)]) == code { return index - 4 }
        return -1
    }

    // MARK: - Bytes

    static func be16(_ value: UInt16) -> [UInt8] { [UInt8(value >> 8), UInt8(value & 0xFF)] }
    static func le16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
    static func be32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) } }
    static func le32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }

    /// `bytes` with `replacement` written at `offset`.
    static func patched(_ bytes: [UInt8], at offset: Int, _ replacement: [UInt8]) -> [UInt8] {
        var bytes = bytes
        bytes.replaceSubrange(offset..<(offset + replacement.count), with: replacement)
        return bytes
    }

    /// CRC-32 as PNG uses it, table-driven (the parser's is bitwise), so the two are written independently.
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        let table: [UInt32] = (0..<256).map { index in
            (0..<8).reduce(UInt32(index)) { crc, _ in crc & 1 == 1 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
        }
        return ~bytes.reduce(0xFFFF_FFFF) { crc, byte in table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
    }

    // MARK: - Pillow output

    static let pngBase64 = """
        iVBORw0KGgoAAAANSUhEUgAAAAMAAAACCAIAAAASFvFNAAAAHElEQVR4nGNkYGDgZ2DnZ2BnYTBiZ2BgZ2BgBwAElgB5kTVg4gAA
        AABJRU5ErkJggg==
        """

    static let jpegBaselineBase64 = """
        /9j/4AAQSkZJRgABAQAAAQABAAD/4QA0RXhpZgAATU0AKgAAAAgAAgEPAAIAAAAFAAAAJgESAAMAAAABAAEAAAAAAABLaXRlAAD/
        2wBDABALDA4MChAODQ4SERATGCgaGBYWGDEjJR0oOjM9PDkzODdASFxOQERXRTc4UG1RV19iZ2hnPk1xeXBkeFxlZ2P/2wBDARES
        EhgVGC8aGi9jQjhCY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2P/wAARCAAFABEDASIA
        AhEBAxEB/8QAHwAAAQUBAQEBAQEAAAAAAAAAAAECAwQFBgcICQoL/8QAtRAAAgEDAwIEAwUFBAQAAAF9AQIDAAQRBRIhMUEGE1Fh
        ByJxFDKBkaEII0KxwRVS0fAkM2JyggkKFhcYGRolJicoKSo0NTY3ODk6Q0RFRkdISUpTVFVWV1hZWmNkZWZnaGlqc3R1dnd4eXqD
        hIWGh4iJipKTlJWWl5iZmqKjpKWmp6ipqrKztLW2t7i5usLDxMXGx8jJytLT1NXW19jZ2uHi4+Tl5ufo6erx8vP09fb3+Pn6/8QA
        HwEAAwEBAQEBAQEBAQAAAAAAAAECAwQFBgcICQoL/8QAtREAAgECBAQDBAcFBAQAAQJ3AAECAxEEBSExBhJBUQdhcRMiMoEIFEKR
        obHBCSMzUvAVYnLRChYkNOEl8RcYGRomJygpKjU2Nzg5OkNERUZHSElKU1RVVldYWVpjZGVmZ2hpanN0dXZ3eHl6goOEhYaHiImK
        kpOUlZaXmJmaoqOkpaanqKmqsrO0tba3uLm6wsPExcbHyMnK0tPU1dbX2Nna4uPk5ebn6Onq8vP09fb3+Pn6/9oADAMBAAIRAxEA
        PwClbaJa8cfpWrbaJa8cfpRRXnRqz7nLgcRV094uf2Ja+n6UUUVftZ9z3PrFX+Y//9k=
        """

    static let jpegProgressiveBase64 = """
        /9j/4AAQSkZJRgABAQAAAQABAAD/4QA0RXhpZgAATU0AKgAAAAgAAgEPAAIAAAAFAAAAJgESAAMAAAABAAEAAAAAAABLaXRlAAD/
        2wBDABALDA4MChAODQ4SERATGCgaGBYWGDEjJR0oOjM9PDkzODdASFxOQERXRTc4UG1RV19iZ2hnPk1xeXBkeFxlZ2P/2wBDARES
        EhgVGC8aGi9jQjhCY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2P/wgARCAARAAUDASIA
        AhEBAxEB/8QAFgABAQEAAAAAAAAAAAAAAAAAAAQF/8QAFQEBAQAAAAAAAAAAAAAAAAAABAP/2gAMAwEAAhADEAAAAY1KZs0PT//E
        ABcQAQEBAQAAAAAAAAAAAAAAAAEAAgP/2gAIAQEAAQUCMcoNxf/EABgRAAMBAQAAAAAAAAAAAAAAAAABMQIh/9oACAEDAQE/AVvl
        FD//xAAWEQADAAAAAAAAAAAAAAAAAAAQEWH/2gAIAQIBAT8BVH//xAAZEAABBQAAAAAAAAAAAAAAAAAAAhAxMqH/2gAIAQEABj8C
        nCqW/8QAGRAAAgMBAAAAAAAAAAAAAAAAABEBMcHR/9oACAEBAAE/IUuwjhJQ/9oADAMBAAIAAwAAABD77//EABoRAAICAwAAAAAA
        AAAAAAAAAAABESExkdH/2gAIAQMBAT8QdC21wxH/xAAYEQACAwAAAAAAAAAAAAAAAAABEBHR8f/aAAgBAgEBPxCehS//xAAYEAAC
        AwAAAAAAAAAAAAAAAAAA8BChsf/aAAgBAQABPxBgYMVcX//Z
        """

    static let gif87aBase64 = """
        R0lGODdhEQAFAIAAAAAAAAAAACwAAAAAEQAFAAAIHgABBBAwQCBBgwUHJjyoEKHDhhAZSlxI8eFEixUDAgA7
        """

    static let gif89aBase64 = """
        R0lGODlhAwACAIAAAAAAAAAAACH5BAEAAAAALAAAAAADAAIAAAgIAAEEEDBwQEAAOw==
        """

    static let webpLossyBase64 = """
        UklGRlgAAABXRUJQVlA4IEwAAACQAwCdASoRAAUAPtFYpEwoJSOiMAgBABoJagCw7CHXYLqoGhWAAP7qAVtWkcALlj4yHYzB2esm
        j+YHANao7D7cEnV1iiDvnbbE2AAA
        """

    static let webpLosslessBase64 = """
        UklGRjQAAABXRUJQVlA4TCgAAAAvAkAAAC8wMgKBJIP9MTcQEiQ2/s+1zX9QIcLzQCBAGSsOOCWi/7G8
        """

    static let webpExtendedBase64 = """
        UklGRqIAAABXRUJQVlA4WAoAAAAQAAAABAAAEAAAQUxQSBgAAAABJ3APlIgID4UAECAdQCz5E0YQ0f/o8gdWUDggZAAAABAEAJ0B
        KgUAEQA+0ValTCgko6IwCAEAGglsAJ0yhHAYoB04ADx+56kwAP7mCl15I4c4ej4DqvQr1cQVhyp+rs5qYi9OXP3h5WHKoKTI+PaJ
        r/LfE7naH/UO1GzZvSmviU1AAAA=
        """

    static let bmpBase64 = """
        Qk1OAAAAAAAAADYAAAAoAAAAAwAAAAIAAAABABgAAAAAABgAAADEDgAAxA4AAAAAAAAAAAAABzIADjIPFTIeAAAAAAAABwAPDgAe
        AAAA
        """

    static let bmpTopDownBase64 = """
        Qk1OAAAAAAAAADYAAAAoAAAAAgAAAP3///8BABgAAAAAABgAAADEDgAAxA4AAAAAAAAAAAAAAAAABwAPAAAHMgAOMg8AAA5kABVk
        DwAA
        """

    static let tiffLittleEndianBase64 = """
        SUkqAAgAAAAKAAABBAABAAAAAwAAAAEBBAABAAAAAgAAAAIBAwADAAAAhgAAAAMBAwABAAAAAQAAAAYBAwABAAAAAgAAABEBBAAB
        AAAAjAAAABUBAwABAAAAAwAAABYBBAABAAAAAgAAABcBBAABAAAAEgAAABwBAwABAAAAAQAAAAAAAAAIAAgACAAAAAAPAAceAA4A
        MgcPMg4eMhU=
        """

    static let tiffBigEndianBase64 = """
        TU0AKgAAAAgACQEAAAQAAAABAAAAEQEBAAQAAAABAAAABQECAAMAAAABABAAAAEDAAMAAAABAAEAAAEGAAMAAAABAAEAAAERAAQA
        AAABAAAAegEWAAQAAAABAAAABQEXAAQAAAABAAAAqgEcAAMAAAABAAEAAAAAAAAAAAPoB9ALuA+gE4gXcBtYH0AjKCcQKvgu4DLI
        NrA6mD6AAAED6QfRC7kPoROJF3EbWR9BIyknESr5LuEyyTaxOpk+gQACA+oH0gu6D6ITihdyG1ofQiMqJxIq+i7iMso2sjqaPoIA
        AwPrB9MLuw+jE4sXcxtbH0MjKycTKvsu4zLLNrM6mz6DAAQD7AfUC7wPpBOMF3QbXB9EIywnFCr8LuQyzDa0Opw+hA==
        """
}
