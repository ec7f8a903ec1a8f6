import Foundation
import Testing

@testable import Kite

@Suite struct ImageInfoTests {
    @Test func everyFormatHasAFixture() {
        #expect(Set(ImageFixtures.all.map(\.format)) == Set(ImageInfo.Format.allCases))
    }

    @Test(arguments: ImageFixtures.all)
    func readsTheFormatAndPixelSizeOfEveryFixture(fixture: ImageFixture) throws {
        let info = try ImageInfo(data: Data(fixture.bytes))
        #expect(info.format == fixture.format)
        #expect(info.pixelWidth == fixture.pixelWidth)
        #expect(info.pixelHeight == fixture.pixelHeight)
        #expect(info.mimeType == fixture.mimeType)
        #expect(info.scale == 1)
        #expect(info.width == Double(fixture.pixelWidth))
        #expect(info.height == Double(fixture.pixelHeight))
        #expect(info.data == Data(fixture.bytes))
    }

    @Test(arguments: ImageFixtures.all)
    func readsADataSliceThatDoesNotStartAtZero(fixture: ImageFixture) throws {
        let padded = Data([0xAA, 0xBB, 0xCC] + fixture.bytes + [0xDD])
        let slice = padded[3..<(3 + fixture.bytes.count)]
        #expect(slice.startIndex == 3)
        let info = try ImageInfo(data: slice)
        #expect(info.format == fixture.format)
        #expect(info.pixelWidth == fixture.pixelWidth)
        #expect(info.pixelHeight == fixture.pixelHeight)
    }

    @Test(arguments: ImageFixtures.all)
    func aStrictPrefixThrowsUntilTheHeaderIsComplete(fixture: ImageFixture) {
        #expect(fixture.headerEnd <= fixture.bytes.count)
        for length in 0..<fixture.bytes.count {
            let prefix = Data(fixture.bytes[0..<length])
            do {
                let info = try ImageInfo(data: prefix)
                #expect(length >= fixture.headerEnd, "the \(length)-byte prefix parsed as \(info)")
                #expect(info.format == fixture.format, "prefix \(length)")
                #expect(info.pixelWidth == fixture.pixelWidth, "prefix \(length)")
                #expect(info.pixelHeight == fixture.pixelHeight, "prefix \(length)")
            } catch {
                #expect(length < fixture.headerEnd, "the \(length)-byte prefix failed: \(error.message)")
                #expect(error.code == .responseSerializationFailed)
            }
        }
    }

    @Test(arguments: Self.lyingHeaders)
    func aLyingHeaderIsAnErrorThatNamesTheProblem(header: LyingHeader) {
        do {
            let info = try ImageInfo(data: Data(header.bytes))
            Issue.record("parsed as \(info)")
        } catch {
            #expect(error.code == .responseSerializationFailed)
            #expect(error.message.contains(header.message), "\(error.message)")
            #expect(error.request == nil)
        }
    }

    @Test(arguments: ImageFixtures.all)
    func randomByteMutationsParseOrThrow(fixture: ImageFixture) async {
        // FNV-1a of the name, so each fixture has its own sequence and every run the same one.
        let seed = fixture.name.utf8.reduce(0xCBF2_9CE4_8422_2325 as UInt64) { ($0 ^ UInt64($1)) &* 0x100_0000_01B3 }
        var random = SplitMix64(seed: seed)
        var parsed = 0
        var failed = 0
        for iteration in 0..<2_000 {
            await yieldNowAndThen(iteration, every: 100)
            var bytes = fixture.bytes
            // Mostly the header and just past it, where the parser reads; sometimes anywhere.
            let region = Bool.random(using: &random) ? min(bytes.count, fixture.headerEnd + 16) : bytes.count
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                let index = Int.random(in: 0..<region, using: &random)
                switch Int.random(in: 0..<4, using: &random) {
                case 0: bytes[index] = 0
                case 1: bytes[index] = 0xFF
                case 2: bytes[index] ^= 1 << UInt8.random(in: 0..<8, using: &random)
                default: bytes[index] = UInt8.random(in: 0...255, using: &random)
                }
            }
            if Int.random(in: 0..<8, using: &random) == 0 {
                bytes.removeLast(Int.random(in: 0..<bytes.count, using: &random))
            }
            do {
                let info = try ImageInfo(data: Data(bytes))
                #expect(info.pixelWidth > 0 && info.pixelHeight > 0)
                parsed += 1
            } catch {
                #expect(error.code == .responseSerializationFailed)
                failed += 1
            }
        }
        #expect(parsed > 0)
        #expect(failed > 0)
    }

    @Test func heicTakesTheLargestIspe() throws {
        let thumbnailFirst = ImageFixtures.heic(sizes: [(320, 240), (4032, 3024), (512, 512)])
        let info = try ImageInfo(data: Data(thumbnailFirst.bytes))
        #expect(info.pixelWidth == 4032)
        #expect(info.pixelHeight == 3024)

        let primaryFirst = ImageFixtures.heic(sizes: [(3024, 4032), (240, 320)])
        let rotated = try ImageInfo(data: Data(primaryFirst.bytes))
        #expect(rotated.pixelWidth == 3024)
        #expect(rotated.pixelHeight == 4032)
    }

    @Test(
        arguments: [
            ("a/icon@2x.png", 2),
            ("https://example.com/a/icon@2x.png", 2),
            ("icon@3x.png?x=1", 3),
            ("https://example.com/icon@3x.png?x=1&y=@2x", 3),
            ("icon@2x", 2),
            ("https://example.com/icon@2x", 2),
            ("icon.png", 1),
            ("@2x/icon.png", 1),
            ("https://example.com/@2x/icon.png", 1),
            ("icon@4x.png", 1),
            ("https://example.com/icon.png?scale=@3x", 1),
        ] as [(String, Double)]
    )
    func scaleComesFromTheLastPathComponent(url: String, expected: Double) throws {
        let url = try #require(URL(string: url))
        #expect(ImageInfo.scale(for: url) == expected)
    }

    @Test func scaleWithoutAURLIsOne() {
        #expect(ImageInfo.scale(for: nil) == 1)
    }

    @Test func pointSizeIsPixelSizeDividedByScale() throws {
        let info = try ImageInfo(data: Data(ImageFixtures.named("gif87a")), scale: 2)
        #expect(info.pixelWidth == 17)
        #expect(info.pixelHeight == 5)
        #expect(info.scale == 2)
        #expect(info.width == 8.5)
        #expect(info.height == 2.5)
    }

    @Test(arguments: [0, -2, Double.nan, Double.infinity])
    func aScaleThatIsNotPositiveAndFiniteIsOne(scale: Double) throws {
        let info = try ImageInfo(data: Data(ImageFixtures.named("png")), scale: scale)
        #expect(info.scale == 1)
        #expect(info.width == 3)
    }

    @Test func descriptionNamesFormatSizeScaleAndByteCount() throws {
        let info = try ImageInfo(data: Data(ImageFixtures.named("png")), scale: 3)
        #expect(info.description == "PNG, 3 x 2 pixels, scale 3.0, 85 bytes")
    }

    @Test func equalityComparesTheBytes() throws {
        let png = ImageFixtures.named("png")
        let first = try ImageInfo(data: Data(png))
        #expect(first == (try ImageInfo(data: Data(png))))
        #expect(first != (try ImageInfo(data: Data(png), scale: 2)))
        #expect(first != (try ImageInfo(data: Data(png + [0]))))
    }
}

extension ImageInfoTests {
    /// A body whose header is truncated or inconsistent, and a part of the message it must give.
    struct LyingHeader: Sendable, CustomTestStringConvertible {
        let name: String
        let bytes: [UInt8]
        let message: String

        var testDescription: String { self.name }

        init(_ name: String, _ bytes: [UInt8], _ message: String) {
            self.name = name
            self.bytes = bytes
            self.message = message
        }
    }

    /// The SplitMix64 generator (Steele, Lea and Flood 2014): tiny and deterministic for a given seed.
    private struct SplitMix64: RandomNumberGenerator {
        private var state: UInt64

        init(seed: UInt64) {
            self.state = seed
        }

        mutating func next() -> UInt64 {
            self.state &+= 0x9E37_79B9_7F4A_7C15
            var value = self.state
            value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
            value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
            return value ^ (value >> 31)
        }
    }

    static let lyingHeaders: [LyingHeader] = {
        typealias F = ImageFixtures
        let png = F.named("png")
        let jpeg = F.named("jpegBaseline")
        let gif = F.named("gif87a")
        let bmp = F.named("bmp")
        let lossy = F.named("webpLossy")
        let tiff = F.named("tiffLittleEndian")
        let heic = F.heic(sizes: [(4032, 3024)]).bytes
        let meta = F.boxOffset("meta", in: heic)
        let ispe = F.boxOffset("ispe", in: heic)
        let noSize = [F.TIFFEntry(tag: 254, type: 4, value: 0)]
        return [
            LyingHeader(
                "html",
                Array("<html>".utf8),
                "not a PNG, JPEG, GIF, WebP, HEIC, BMP or TIFF image (it starts with 3C 68 74 6D)"
            ),
            LyingHeader("empty", [], "not a PNG, JPEG, GIF, WebP, HEIC, BMP or TIFF image (it is empty)"),
            LyingHeader(
                "png truncated",
                Array(png.prefix(20)),
                "the PNG header is truncated: the IHDR chunk needs 33 bytes, the body has 20"
            ),
            LyingHeader(
                "png IHDR length 12",
                F.patched(png, at: 8, [0, 0, 0, 12]),
                "the PNG IHDR chunk has length 12, not 13"
            ),
            LyingHeader(
                "png IHDR not first",
                F.patched(png, at: 12, Array("IDAT".utf8)),
                "the PNG first chunk is 'IDAT', not IHDR"
            ),
            LyingHeader("png IHDR CRC", F.patched(png, at: 19, [9]), "the PNG IHDR chunk's CRC is 0x"),
            LyingHeader("png 0 width", F.pngHeader(width: 0, height: 2), "the PNG header says 0 x 2 pixels"),
            LyingHeader(
                "png 2^31 width",
                F.pngHeader(width: 1 << 31, height: 2),
                "says 2147483648 x 2 pixels, more than 2^31 - 1"
            ),
            LyingHeader(
                "jpeg segment past end",
                F.patched(jpeg, at: 22, [0xFF, 0xFF]),
                "the JPEG FFE1 segment at offset 20 says 65535 bytes, past the end of the 725-byte body"
            ),
            LyingHeader(
                "jpeg segment length 1",
                F.patched(jpeg, at: 22, [0, 1]),
                "the JPEG FFE1 segment at offset 20 has length 1, less than 2"
            ),
            LyingHeader(
                "jpeg segment length 0",
                F.patched(jpeg, at: 4, [0, 0]),
                "the JPEG FFE0 segment at offset 2 has length 0, less than 2"
            ),
            LyingHeader(
                "jpeg SOS before SOF",
                [0xFF, 0xD8, 0xFF, 0xDA, 0x00, 0x02],
                "the JPEG starts its scan (SOS) at offset 2 before any SOF segment"
            ),
            LyingHeader(
                "jpeg EOI before SOF",
                [0xFF, 0xD8, 0xFF, 0xD9],
                "the JPEG reaches its EOI marker at offset 2 before any SOF segment"
            ),
            LyingHeader(
                "jpeg no SOF",
                [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x02],
                "the JPEG has no SOF segment before its end"
            ),
            LyingHeader(
                "jpeg only fill bytes",
                [0xFF, 0xD8] + [UInt8](repeating: 0xFF, count: 64),
                "the JPEG has no SOF segment before its end"
            ),
            LyingHeader(
                "jpeg byte where a marker should be",
                [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x02, 0x12, 0x34],
                "the JPEG has byte 12 at offset 6 where a marker should start"
            ),
            LyingHeader(
                "jpeg stuffed zero",
                [0xFF, 0xD8, 0xFF, 0x00],
                "the JPEG has FF 00 at offset 2, which is not a marker"
            ),
            LyingHeader(
                "jpeg SOF length 5",
                [0xFF, 0xD8, 0xFF, 0xC0, 0x00, 0x05, 0x08, 0x00, 0x05],
                "the JPEG FFC0 (SOF) segment at offset 2 has length 5, less than 8"
            ),
            LyingHeader(
                "jpeg 0 height",
                [0xFF, 0xD8, 0xFF, 0xC0, 0x00, 0x0B, 0x08, 0x00, 0x00, 0x00, 0x11, 0x01, 0x01, 0x11, 0x00],
                "the JPEG header says 17 x 0 pixels"
            ),
            LyingHeader("gif 0 x 0", F.patched(gif, at: 6, [0, 0, 0, 0]), "the GIF header says 0 x 0 pixels"),
            LyingHeader("gif 0 x 5", F.patched(gif, at: 6, [0, 0]), "the GIF header says 0 x 5 pixels"),
            LyingHeader(
                "gif truncated",
                Array(gif.prefix(10)),
                "the GIF header is truncated: the logical screen descriptor needs 13 bytes, the body has 10"
            ),
            LyingHeader(
                "bmp height Int32.min",
                F.patched(bmp, at: 22, [0, 0, 0, 0x80]),
                "the BMP header says height -2147483648, which has no positive magnitude"
            ),
            LyingHeader(
                "bmp negative width",
                F.patched(bmp, at: 18, [0xFD, 0xFF, 0xFF, 0xFF]),
                "the BMP header says -3 x 2 pixels"
            ),
            LyingHeader("bmp 0 height", F.patched(bmp, at: 22, [0, 0, 0, 0]), "the BMP header says 3 x 0 pixels"),
            LyingHeader(
                "bmp DIB size 20",
                F.patched(bmp, at: 14, [20, 0, 0, 0]),
                "the BMP DIB header size is 20 bytes, not 12 (BITMAPCOREHEADER) or at least 40"
            ),
            LyingHeader(
                "bmp DIB size past end",
                F.patched(bmp, at: 14, [0xFF, 0xFF, 0xFF, 0xFF]),
                "the BMP header is truncated: the 4294967295-byte DIB header needs 4294967309 bytes, the body has 78"
            ),
            LyingHeader(
                "bmp core 0 width",
                F.patched(F.bmpCoreHeader, at: 18, [0, 0]),
                "the BMP header says 0 x 2 pixels"
            ),
            LyingHeader(
                "webp RIFF size past end",
                F.patched(lossy, at: 4, [0xFF, 0xFF, 0xFF, 0xFF]),
                "the WebP header is truncated: the RIFF header says 4294967303 bytes, the body has 96"
            ),
            LyingHeader(
                "webp chunk past RIFF end",
                F.patched(lossy, at: 16, [0xFF, 0, 0, 0]),
                "the WebP 'VP8 ' chunk says 255 bytes, past the end of the RIFF data at 96"
            ),
            LyingHeader(
                "webp RIFF too short",
                F.patched(lossy, at: 4, [4, 0, 0, 0]),
                "the WebP RIFF data is 4 bytes, too short"
            ),
            LyingHeader(
                "webp VP8 start code",
                F.patched(lossy, at: 23, [0x9D, 0x01, 0x2B]),
                "the WebP VP8 chunk has 9D 01 2B where the start code 9D 01 2A should be"
            ),
            LyingHeader(
                "webp VP8 0 width",
                F.patched(lossy, at: 26, [0x00, 0xC0]),
                "the WebP VP8 frame header says 0 x 5 pixels"
            ),
            LyingHeader(
                "webp VP8L signature",
                F.patched(F.named("webpLossless"), at: 20, [0x2E]),
                "the WebP VP8L chunk starts with 2E, not the signature 2F"
            ),
            LyingHeader(
                "webp VP8L version",
                F.patched(F.named("webpLossless"), at: 24, [0xE0]),
                "the WebP VP8L version is 7, not 0"
            ),
            LyingHeader(
                "webp first chunk ALPH",
                F.patched(F.named("webpExtended"), at: 12, Array("ALPH".utf8)),
                "the WebP first chunk is 'ALPH', not VP8, VP8L or VP8X"
            ),
            LyingHeader(
                "tiff IFD offset past end",
                F.patched(tiff, at: 4, [0xFF, 0xFF, 0, 0]),
                "the TIFF IFD offset 65535 is past the end of the 158-byte body"
            ),
            LyingHeader(
                "tiff IFD offset in header",
                F.patched(tiff, at: 4, [4, 0, 0, 0]),
                "the TIFF IFD offset 4 points inside the 8-byte header"
            ),
            LyingHeader(
                "tiff IFD entries past end",
                F.patched(tiff, at: 8, [0xFF, 0xFF]),
                "the TIFF IFD at offset 8 has 65535 entries, which need 786422 bytes, the body has 150 from there"
            ),
            LyingHeader(
                "tiff IFD points to itself",
                F.tiff(bigEndian: false, directories: [noSize], lastNext: 8),
                "the TIFF IFD at offset 8 links back to the IFD at offset 8"
            ),
            LyingHeader(
                "tiff IFD loop of two",
                F.tiff(bigEndian: true, directories: [noSize, noSize], lastNext: 8),
                "the TIFF IFD at offset 26 links back to the IFD at offset 8"
            ),
            LyingHeader(
                "tiff no size",
                F.tiff(bigEndian: false, directories: [noSize]),
                "the TIFF has no IFD with ImageWidth and ImageLength"
            ),
            LyingHeader(
                "tiff RATIONAL width",
                F.patched(tiff, at: 12, [5, 0]),
                "the TIFF ImageWidth tag has type 5, not SHORT (3) or LONG (4)"
            ),
            LyingHeader("tiff two widths", F.patched(tiff, at: 14, [2]), "the TIFF ImageWidth tag has 2 values, not 1"),
            LyingHeader(
                "tiff 0 width",
                F.tiff(bigEndian: true, directories: [F.sizeEntries(width: 0, height: 3, type: 3)]),
                "the TIFF header says 0 x 3 pixels"
            ),
            LyingHeader(
                "heic meta size 0",
                F.patched(heic, at: meta, F.be32(0)),
                "the HEIC 'meta' box at offset 24 has size 0 (to the end), which is not supported"
            ),
            LyingHeader(
                "heic meta size 1",
                F.patched(heic, at: meta, F.be32(1)),
                "the HEIC 'meta' box at offset 24 has a 64-bit size, which is not supported"
            ),
            LyingHeader(
                "heic meta size 7",
                F.patched(heic, at: meta, F.be32(7)),
                "the HEIC 'meta' box at offset 24 has size 7, less than its 8-byte header"
            ),
            LyingHeader(
                "heic meta past end",
                F.patched(heic, at: meta, F.be32(100_000)),
                "the HEIC 'meta' box at offset 24 says 100000 bytes, past the end of the \(heic.count)-byte body"
            ),
            LyingHeader(
                "heic meta size 8",
                F.patched(heic, at: meta, F.be32(8)),
                "the HEIC 'meta' box at offset 24 is 8 bytes, less than its 12-byte header"
            ),
            LyingHeader(
                "heic ftyp size 0",
                F.patched(heic, at: 0, F.be32(0)),
                "the HEIC 'ftyp' box at offset 0 has size 0"
            ),
            LyingHeader(
                "heic ftyp size 12",
                F.patched(heic, at: 0, F.be32(12)),
                "the HEIC 'ftyp' box is 12 bytes, less than the 16 of its major brand"
            ),
            LyingHeader(
                "heic ispe past ipco",
                F.patched(heic, at: ispe, F.be32(1_000)),
                "the HEIC 'ispe' box at offset \(ispe) says 1000 bytes, past the end of its 'ipco' box at"
            ),
            LyingHeader(
                "heic ispe too small",
                F.patched(heic, at: ispe, F.be32(12)),
                "the HEIC 'ispe' box at offset \(ispe) is 12 bytes, less than 20"
            ),
            LyingHeader(
                "heic ispe 0 width",
                F.patched(heic, at: ispe + 12, F.be32(0)),
                "the HEIC 'ispe' box at offset \(ispe) says 0 x 3024 pixels"
            ),
            LyingHeader("heic no meta", F.heic(sizes: [(3, 2)], withMeta: false).bytes, "the HEIC has no 'meta' box"),
            LyingHeader("heic no ispe", F.heic(sizes: []).bytes, "the HEIC 'ipco' box has no 'ispe' box"),
            LyingHeader(
                "heic no iprp",
                F.patched(heic, at: F.boxOffset("iprp", in: heic) + 4, Array("free".utf8)),
                "the HEIC 'meta' box has no 'iprp' box"
            ),
            LyingHeader(
                "mp4",
                F.heic(majorBrand: "isom", compatibleBrands: ["isom", "mp41"], sizes: [(3, 2)]).bytes,
                "the body is an ISO media file with brand 'isom', not a HEIC image"
            ),
            LyingHeader(
                "avif",
                F.heic(majorBrand: "avif", compatibleBrands: ["avif", "mif1", "miaf"], sizes: [(3, 2)]).bytes,
                "the body is an AVIF image, which is not supported"
            ),
        ]
    }()
}
