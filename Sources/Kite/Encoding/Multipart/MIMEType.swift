import Foundation

/// The MIME types of common file name extensions, for file parts whose type is not given.
///
/// IANA-registered types where there is one, otherwise the type browsers and servers use
/// (`video/x-matroska`, `application/x-7z-compressed`, …).
enum MIMEType {
    /// The type for unknown extensions.
    static let fallback = "application/octet-stream"

    /// The MIME type of the lowercase extension `pathExtension`, or `nil` when it is not in the table.
    static func forExtension(_ pathExtension: String) -> String? {
        Self.table[pathExtension.lowercased()]
    }

    private static let table: [String: String] = [
        // Images
        "png": "image/png",
        "jpg": "image/jpeg",
        "jpeg": "image/jpeg",
        "jpe": "image/jpeg",
        "gif": "image/gif",
        "webp": "image/webp",
        "svg": "image/svg+xml",
        "svgz": "image/svg+xml",
        "bmp": "image/bmp",
        "tif": "image/tiff",
        "tiff": "image/tiff",
        "ico": "image/vnd.microsoft.icon",
        "heic": "image/heic",
        "heif": "image/heif",
        "avif": "image/avif",
        "jxl": "image/jxl",
        "psd": "image/vnd.adobe.photoshop",
        // Audio
        "mp3": "audio/mpeg",
        "wav": "audio/wav",
        "ogg": "audio/ogg",
        "oga": "audio/ogg",
        "opus": "audio/ogg",
        "flac": "audio/flac",
        "aac": "audio/aac",
        "m4a": "audio/mp4",
        "mid": "audio/midi",
        "midi": "audio/midi",
        "weba": "audio/webm",
        "aif": "audio/aiff",
        "aiff": "audio/aiff",
        // Video
        "mp4": "video/mp4",
        "m4v": "video/mp4",
        "mov": "video/quicktime",
        "webm": "video/webm",
        "mkv": "video/x-matroska",
        "avi": "video/x-msvideo",
        "mpeg": "video/mpeg",
        "mpg": "video/mpeg",
        "ogv": "video/ogg",
        "3gp": "video/3gpp",
        "3g2": "video/3gpp2",
        "ts": "video/mp2t",
        "flv": "video/x-flv",
        "wmv": "video/x-ms-wmv",
        // Documents
        "pdf": "application/pdf",
        "doc": "application/msword",
        "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "xls": "application/vnd.ms-excel",
        "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "ppt": "application/vnd.ms-powerpoint",
        "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        "odt": "application/vnd.oasis.opendocument.text",
        "ods": "application/vnd.oasis.opendocument.spreadsheet",
        "odp": "application/vnd.oasis.opendocument.presentation",
        "rtf": "application/rtf",
        "epub": "application/epub+zip",
        "pages": "application/vnd.apple.pages",
        "numbers": "application/vnd.apple.numbers",
        "key": "application/vnd.apple.keynote",
        // Archives
        "zip": "application/zip",
        "gz": "application/gzip",
        "tgz": "application/gzip",
        "tar": "application/x-tar",
        "bz2": "application/x-bzip2",
        "xz": "application/x-xz",
        "7z": "application/x-7z-compressed",
        "rar": "application/vnd.rar",
        "zst": "application/zstd",
        "jar": "application/java-archive",
        "apk": "application/vnd.android.package-archive",
        "dmg": "application/x-apple-diskimage",
        "iso": "application/x-iso9660-image",
        // Text
        "txt": "text/plain",
        "text": "text/plain",
        "log": "text/plain",
        "html": "text/html",
        "htm": "text/html",
        "css": "text/css",
        "csv": "text/csv",
        "tsv": "text/tab-separated-values",
        "md": "text/markdown",
        "markdown": "text/markdown",
        "ics": "text/calendar",
        "vcf": "text/vcard",
        // Code and data
        "json": "application/json",
        "jsonld": "application/ld+json",
        "geojson": "application/geo+json",
        "xml": "application/xml",
        "yaml": "application/yaml",
        "yml": "application/yaml",
        "toml": "application/toml",
        "js": "text/javascript",
        "mjs": "text/javascript",
        "wasm": "application/wasm",
        "pem": "application/x-pem-file",
        "sql": "application/sql",
        "swift": "text/x-swift",
        "bin": "application/octet-stream",
        // Fonts
        "woff": "font/woff",
        "woff2": "font/woff2",
        "ttf": "font/ttf",
        "otf": "font/otf",
        "eot": "application/vnd.ms-fontobject",
    ]
}

extension MultipartFormData {
    /// The MIME type of a file name extension, such as `image/png` for `png`, or `application/octet-stream`
    /// for an extension that is not known.
    ///
    /// The lookup ignores case and a leading dot. The table covers common images, audio, video,
    /// documents, archives, text, code, data and font formats; file parts appended without a MIME type
    /// use it.
    ///
    /// ```swift
    /// MultipartFormData.mimeType(forPathExtension: "JPG")  // image/jpeg
    /// MultipartFormData.mimeType(forPathExtension: "unknown")  // application/octet-stream
    /// ```
    ///
    /// - Parameter pathExtension: The extension, such as `pdf`.
    /// - Returns: The MIME type.
    public static func mimeType(forPathExtension pathExtension: String) -> String {
        let trimmed = pathExtension.hasPrefix(".") ? String(pathExtension.dropFirst()) : pathExtension
        return MIMEType.forExtension(trimmed) ?? MIMEType.fallback
    }
}
