import Foundation

@testable import KiteUnderFuzz

extension FuzzTarget {
    /// PNG, JPEG, GIF, WebP, HEIC/AVIF, BMP and TIFF headers: a header or a `KiteError`; a header's size is
    /// positive and the same when the input is read again.
    static func fuzzImageHeader(_ input: [UInt8]) {
        let data = Data(input)
        guard let header = try? ImageHeaderParser.parse(data) else { return }
        require(
            header.pixelWidth > 0 && header.pixelHeight > 0,
            "a header of \(header.pixelWidth)x\(header.pixelHeight)"
        )
        let again = try? ImageHeaderParser.parse(data)
        require(again == header, "a second read gave \(String(describing: again)), the first \(header)")
    }
}
