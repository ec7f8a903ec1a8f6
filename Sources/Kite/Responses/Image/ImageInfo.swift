import Foundation

#if canImport(UIKit)
import UIKit
#elseif canImport(AppKit)
import AppKit
#endif

/// An image body's format and pixel size, read from its header, with the bytes themselves.
///
/// Linux has no `UIImage`, so Kite's image serializer delivers an `ImageInfo`. The format is detected
/// from the body's first bytes (never from `Content-Type`) and the size from its header; no pixel is
/// decoded. A body that is not a PNG, JPEG, GIF, WebP, HEIC, BMP or TIFF image, or whose header is
/// truncated or inconsistent, is a `responseSerializationFailed` ``KiteError``.
///
/// The pixel size is the size as stored: an EXIF orientation or a HEIC rotation is not applied.
///
/// ```swift
/// let info = try ImageInfo(data: try Data(contentsOf: URL(fileURLWithPath: "icon@2x.png")), scale: 2)
/// print(info)  // PNG, 64 x 32 pixels, scale 2.0, 1234 bytes
/// print(info.width, info.height)  // 32.0 16.0
/// ```
public struct ImageInfo: Sendable, Hashable, CustomStringConvertible {
    /// An image format that ``ImageInfo`` reads.
    ///
    /// ```swift
    /// let formats = ImageInfo.Format.allCases.map(\.rawValue)  // ["png", "jpeg", "gif", ...]
    /// ```
    public enum Format: String, Sendable, Hashable, CaseIterable {
        /// Portable Network Graphics.
        case png
        /// JPEG (JFIF or EXIF), baseline, progressive or lossless.
        case jpeg
        /// GIF87a or GIF89a.
        case gif
        /// WebP, lossy (`VP8 `), lossless (`VP8L`) or extended (`VP8X`).
        case webp
        /// HEIC or another HEIF image in an ISO base media file.
        case heic
        /// Windows or OS/2 bitmap.
        case bmp
        /// TIFF, little- or big-endian.
        case tiff

        /// The MIME type of the format, such as `image/png`.
        var mimeType: String {
            switch self {
            case .png: "image/png"
            case .jpeg: "image/jpeg"
            case .gif: "image/gif"
            case .webp: "image/webp"
            case .heic: "image/heic"
            case .bmp: "image/bmp"
            case .tiff: "image/tiff"
            }
        }

        /// The format's usual written name, as used in error messages: `PNG`, `WebP`.
        var name: String {
            switch self {
            case .png: "PNG"
            case .jpeg: "JPEG"
            case .gif: "GIF"
            case .webp: "WebP"
            case .heic: "HEIC"
            case .bmp: "BMP"
            case .tiff: "TIFF"
            }
        }
    }

    /// The format, detected from the body's first bytes.
    ///
    /// ```swift
    /// if info.format == .png { print("lossless") }
    /// ```
    public let format: Format

    /// The width in pixels, as stored in the header.
    ///
    /// ```swift
    /// print(info.pixelWidth)  // 64
    /// ```
    public let pixelWidth: Int

    /// The height in pixels, as stored in the header.
    ///
    /// ```swift
    /// print(info.pixelHeight)  // 32
    /// ```
    public let pixelHeight: Int

    /// How many pixels make one point: 1, 2 or 3 (from the URL's `@2x`/`@3x` suffix; see ``scale(for:)``).
    ///
    /// ```swift
    /// let info = try ImageInfo(data: body, scale: ImageInfo.scale(for: URL(string: "https://host/icon@2x.png")))
    /// print(info.scale)  // 2.0
    /// ```
    public let scale: Double

    /// The image's bytes, as received.
    ///
    /// ```swift
    /// try info.data.write(to: URL(fileURLWithPath: "/tmp/icon.png"))
    /// ```
    public let data: Data

    /// Size in points: pixel size divided by scale.
    ///
    /// ```swift
    /// let info = try ImageInfo(data: body, scale: 2)  // a 64 x 32 pixel image
    /// print(info.width)  // 32.0
    /// ```
    public var width: Double { Double(self.pixelWidth) / self.scale }

    /// The height in points: ``pixelHeight`` divided by ``scale``.
    ///
    /// ```swift
    /// let info = try ImageInfo(data: body, scale: 2)  // a 64 x 32 pixel image
    /// print(info.height)  // 16.0
    /// ```
    public var height: Double { Double(self.pixelHeight) / self.scale }

    /// The MIME type of the format, e.g. "image/png".
    ///
    /// ```swift
    /// print(info.mimeType)  // image/png
    /// ```
    public var mimeType: String { self.format.mimeType }

    /// The format, pixel size, scale and byte count, such as `PNG, 64 x 32 pixels, scale 2.0, 1234 bytes`.
    ///
    /// ```swift
    /// print(info)  // PNG, 64 x 32 pixels, scale 2.0, 1234 bytes
    /// ```
    public var description: String {
        "\(self.format.name), \(self.pixelWidth) x \(self.pixelHeight) pixels, scale \(self.scale), "
            + "\(self.data.count) bytes"
    }

    /// Reads the format and pixel size from the header of `data`.
    ///
    /// Only the header is read. Lengths and offsets in it are checked against the body, so a truncated or
    /// inconsistent header is an error rather than a crash.
    ///
    /// ```swift
    /// do {
    ///     let info = try ImageInfo(data: body)
    ///     print(info.format, info.pixelWidth, info.pixelHeight)  // png 64 32
    /// } catch {
    ///     print(error.message)  // the PNG header is truncated: the IHDR chunk needs 33 bytes, the body has 20
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - data: The image body. It may be a slice that does not start at index 0.
    ///   - scale: Pixels per point. A value that is not finite or not greater than 0 is taken as 1.
    /// - Throws: A ``KiteError`` with code `responseSerializationFailed` whose message names the format and
    ///   what is wrong, such as `the GIF header says 0 x 5 pixels`.
    public init(data: Data, scale: Double = 1) throws(KiteError) {
        let header = try ImageHeaderParser.parse(data)
        self.format = header.format
        self.pixelWidth = header.pixelWidth
        self.pixelHeight = header.pixelHeight
        self.scale = scale.isFinite && scale > 0 ? scale : 1
        self.data = data
    }

    /// 2 for ".../icon@2x.png", 3 for "@3x", else 1. Looks at the last path component without its extension,
    /// ignores the query.
    ///
    /// ```swift
    /// print(ImageInfo.scale(for: URL(string: "https://host/a/icon@3x.png?v=1")))  // 3.0
    /// print(ImageInfo.scale(for: URL(string: "https://host/@2x/icon.png")))  // 1.0
    /// ```
    ///
    /// - Parameter url: The image's URL.
    /// - Returns: 2 or 3 for an `@2x` or `@3x` suffix, otherwise 1.
    public static func scale(for url: URL?) -> Double {
        guard let url else { return 1 }
        let name = url.deletingPathExtension().lastPathComponent
        if name.hasSuffix("@2x") { return 2 }
        if name.hasSuffix("@3x") { return 3 }
        return 1
    }
}

#if canImport(UIKit)
extension ImageInfo {
    /// The image decoded by UIKit at ``scale``.
    ///
    /// ```swift
    /// let view = UIImageView(image: info.image)
    /// ```
    public var image: UIImage? { UIImage(data: self.data, scale: CGFloat(self.scale)) }
}
#elseif canImport(AppKit)
extension ImageInfo {
    /// The image decoded by AppKit.
    ///
    /// ```swift
    /// let view = NSImageView(image: info.image ?? NSImage())
    /// ```
    public var image: NSImage? { NSImage(data: self.data) }
}
#endif
