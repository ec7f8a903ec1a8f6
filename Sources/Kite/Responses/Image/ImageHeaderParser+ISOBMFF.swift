import Foundation

extension ImageHeaderParser {
    /// A box of an ISO base media file: a 32-bit big-endian size that counts the 8-byte header, a type,
    /// then the content.
    struct Box {
        /// The type, such as `'meta'`, as ``Bytes/fourCC(at:)`` prints it.
        var type: String
        var offset: Int
        var size: Int
        var end: Int { self.offset + self.size }
    }

    /// Brands of HEIF images that ``ImageInfo`` reports as HEIC.
    private static let heicBrands: Set<String> = ["'heic'", "'heix'", "'hevc'", "'hevx'"]
    /// Brands of generic HEIF image files, also reported as HEIC unless an AVIF brand says otherwise.
    private static let heifBrands: Set<String> = ["'mif1'", "'msf1'"]
    private static let avifBrands: Set<String> = ["'avif'", "'avis'"]

    /// HEIC: an ISO base media file whose `ftyp` box names a HEIC or HEIF brand. The size is in an
    /// `ispe` property: `meta` (a full box: 4 bytes of version and flags before its children) → `iprp` →
    /// `ipco` → `ispe` (a full box, then width and height, 4 bytes each). The shortest body that parses
    /// ends with the `meta` box.
    ///
    /// Box sizes 0 (to the end of the file) and 1 (a 64-bit size follows) are not supported, and every box
    /// must lie inside its container, so each step of a walk advances by at least 8 bytes.
    static func parseISOBMFF(_ bytes: Bytes) throws(KiteError) -> ImageHeader {
        let ftyp = try self.box(at: 0, in: bytes, end: bytes.count, container: "body")
        // Major brand (4), minor version (4), compatible brands (4 each).
        guard ftyp.size >= 16 else {
            throw self.failure("the HEIC 'ftyp' box is \(ftyp.size) bytes, less than the 16 of its major brand")
        }
        // The brands are read one at a time rather than collected: their number comes from the body.
        let majorBrand = bytes.fourCC(at: 8)
        var isHEIC = self.heicBrands.contains(majorBrand)
        var isHEIF = self.heifBrands.contains(majorBrand)
        var isAVIF = self.avifBrands.contains(majorBrand)
        var brandOffset = 16
        while brandOffset <= ftyp.end - 4 {
            let brand = bytes.fourCC(at: brandOffset)
            isHEIC = isHEIC || self.heicBrands.contains(brand)
            isHEIF = isHEIF || self.heifBrands.contains(brand)
            isAVIF = isAVIF || self.avifBrands.contains(brand)
            brandOffset += 4
        }
        if !isHEIC {
            if isAVIF { throw self.failure("the body is an AVIF image, which is not supported") }
            guard isHEIF else {
                throw self.failure("the body is an ISO media file with brand \(majorBrand), not a HEIC image")
            }
        }

        guard let meta = try self.child("'meta'", in: bytes, from: ftyp.end, end: bytes.count, container: "body")
        else { throw self.failure("the HEIC has no 'meta' box") }
        let iprp = try self.requiredChild("'iprp'", of: meta, contentOffset: 12, in: bytes)
        let ipco = try self.requiredChild("'ipco'", of: iprp, contentOffset: 8, in: bytes)

        // A file has one ispe per image item: the primary image, and thumbnails or grid tiles. Resolving the
        // primary item through `pitm` and `ipma` would be exact; the primary image is usually the largest,
        // so the largest ispe is taken.
        var largest: (width: Int, height: Int, area: UInt64)?
        var offset = ipco.offset + 8
        while let ispe = try self.child("'ispe'", in: bytes, from: offset, end: ipco.end, container: "'ipco'") {
            guard ispe.size >= 20, let width32 = bytes.uint32(at: ispe.offset + 12, bigEndian: true),
                let height32 = bytes.uint32(at: ispe.offset + 16, bigEndian: true)
            else {
                throw self.failure("the HEIC 'ispe' box at offset \(ispe.offset) is \(ispe.size) bytes, less than 20")
            }
            let width = try self.dimension(width32, of: .heic)
            let height = try self.dimension(height32, of: .heic)
            _ = try self.header(.heic, width: width, height: height, source: "'ispe' box at offset \(ispe.offset)")
            let area = UInt64(width32) * UInt64(height32)
            if area > largest?.area ?? 0 { largest = (width, height, area) }
            offset = ispe.end
        }
        guard let largest else { throw self.failure("the HEIC 'ipco' box has no 'ispe' box") }
        return ImageHeader(format: .heic, pixelWidth: largest.width, pixelHeight: largest.height)
    }

    /// The header of the box at `offset`, which must lie inside a container that ends at `end`.
    private static func box(at offset: Int, in bytes: Bytes, end: Int, container: String) throws(KiteError) -> Box {
        guard offset <= end - 8, let size32 = bytes.uint32(at: offset, bigEndian: true) else {
            throw self.failure(
                "the HEIC header is truncated: a box at offset \(offset) needs 8 bytes, the \(container) has "
                    + "\(max(end - offset, 0)) from there"
            )
        }
        let type = bytes.fourCC(at: offset + 4)
        switch size32 {
        case 0:
            throw self.failure(
                "the HEIC \(type) box at offset \(offset) has size 0 (to the end), which is not supported"
            )
        case 1:
            throw self.failure("the HEIC \(type) box at offset \(offset) has a 64-bit size, which is not supported")
        case 2..<8:
            throw self.failure(
                "the HEIC \(type) box at offset \(offset) has size \(size32), less than its 8-byte header"
            )
        default:
            break
        }
        let size = Int(clamping: size32)
        guard size <= end - offset else {
            let limit = container == "body" ? "the \(end)-byte body" : "its \(container) box at \(end)"
            throw self.failure("the HEIC \(type) box at offset \(offset) says \(size) bytes, past the end of \(limit)")
        }
        return Box(type: type, offset: offset, size: size)
    }

    /// The first box of `type` among the boxes from `offset` to `end`, or `nil` when the walk reaches `end`.
    private static func child(
        _ type: String,
        in bytes: Bytes,
        from offset: Int,
        end: Int,
        container: String
    )
        throws(KiteError) -> Box?
    {
        var offset = offset
        while offset < end {
            let box = try self.box(at: offset, in: bytes, end: end, container: container)
            if box.type == type { return box }
            offset = box.end
        }
        return nil
    }

    /// The first box of `type` inside `parent`, whose children start `contentOffset` bytes in.
    private static func requiredChild(
        _ type: String,
        of parent: Box,
        contentOffset: Int,
        in bytes: Bytes
    )
        throws(KiteError) -> Box
    {
        guard parent.size >= contentOffset else {
            throw self.failure(
                "the HEIC \(parent.type) box at offset \(parent.offset) is \(parent.size) bytes, less than its "
                    + "\(contentOffset)-byte header"
            )
        }
        let start = parent.offset + contentOffset
        guard let box = try self.child(type, in: bytes, from: start, end: parent.end, container: parent.type) else {
            throw self.failure("the HEIC \(parent.type) box has no \(type) box")
        }
        return box
    }
}
