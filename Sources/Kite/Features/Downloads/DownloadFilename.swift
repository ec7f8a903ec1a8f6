import Foundation

/// Turns a server's or a URL's suggested file name into one safe path component.
///
/// A download's name comes from the network, so it is hostile until proven otherwise: `../../etc/passwd`, `.bashrc`,
/// `CON`, a NUL byte or a 10,000-byte name. ``sanitized(_:)`` makes any string into a name that is safe to put in a
/// directory, and ``suggested(contentDisposition:url:)`` picks the name to sanitise from a response.
///
/// ```swift
/// print(DownloadFilename.sanitized("../../etc/passwd"))  // _.._etc_passwd
/// print(
///     DownloadFilename.suggested(
///         contentDisposition: "attachment; filename*=UTF-8''%E2%82%AC%20rates.txt",
///         url: URL(string: "https://example.com/download?id=7")
///     )
/// )  // € rates.txt
/// ```
public enum DownloadFilename {
    /// The name used when a suggestion sanitises to nothing: `download`.
    public static let fallback = "download"

    /// The longest name ``sanitized(_:)`` returns, in bytes of UTF-8: 255, the limit of common file systems.
    public static let maximumLength = 255

    /// The longest extension kept when a name is shortened, in bytes of UTF-8, dot included.
    static let maximumExtensionLength = 32

    /// Base names that Windows reserves for devices, in any case and with any extension.
    private static let reservedNames: Set<String> = {
        var names: Set<String> = ["CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$"]
        for suffix in ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "\u{B9}", "\u{B2}", "\u{B3}"] {
            names.insert("COM" + suffix)
            names.insert("LPT" + suffix)
        }
        return names
    }()

    /// Makes `suggestion` into one safe path component.
    ///
    /// The result:
    ///
    /// - is normalised to Unicode NFC;
    /// - has `/`, `\`, control characters (including NUL, CR, LF and tab) and Unicode bidirectional controls
    ///   (such as U+202E, which can make `exe.pdf` look like `fdp.exe`) each replaced with `_`;
    /// - has no leading dots or whitespace, so it is never `.`, `..` or a hidden file, and no trailing dots or
    ///   whitespace, which Windows drops;
    /// - is prefixed with `_` when its base name is reserved on Windows (`CON`, `NUL`, `COM1`, `LPT1`…);
    /// - is at most ``maximumLength`` bytes of UTF-8, shortened by whole characters before the extension, which is
    ///   kept when it is at most 32 bytes and has no whitespace;
    /// - is ``fallback`` when nothing is left.
    ///
    /// Percent-escapes are not decoded: `%2e%2e%2f` stays that literal text, which names an ordinary file. Decoding
    /// is the job of whoever knows the suggestion was percent-encoded, once, as
    /// ``suggested(contentDisposition:url:)`` does for URLs. Sanitising a sanitised name returns it unchanged.
    ///
    /// ```swift
    /// print(DownloadFilename.sanitized(".bashrc"))  // bashrc
    /// print(DownloadFilename.sanitized("CON.txt"))  // _CON.txt
    /// print(DownloadFilename.sanitized(" ... "))  // download
    /// ```
    ///
    /// - Parameter suggestion: The suggested name, from a server, a URL or a user.
    /// - Returns: A non-empty name without path separators that can be appended to a directory.
    public static func sanitized(_ suggestion: String) -> String {
        self.cleaned(suggestion) ?? self.fallback
    }

    /// The safe name to save a response body as: from `Content-Disposition`, else from the URL, else ``fallback``.
    ///
    /// The candidates, in order, are the header's `filename*` parameter, its `filename` parameter, and the last
    /// component of the URL's path, percent-decoded once (the query and fragment are ignored; a path ending in `/`
    /// has no last component). The first candidate that does not sanitise to nothing wins, passed through
    /// ``sanitized(_:)``.
    ///
    /// ```swift
    /// let name = DownloadFilename.suggested(
    ///     contentDisposition: nil,
    ///     url: URL(string: "https://example.com/a/report%20final.pdf?x=1")
    /// )
    /// print(name)  // report final.pdf
    /// ```
    ///
    /// - Parameters:
    ///   - contentDisposition: The response's `Content-Disposition` header value, if any.
    ///   - url: The URL of the response (after redirects) or of the request, if known.
    /// - Returns: A safe, non-empty file name.
    public static func suggested(contentDisposition: String?, url: URL?) -> String {
        let disposition = contentDisposition.flatMap { ContentDisposition($0) }
        let candidates = [
            disposition?.parameters["filename*"],
            disposition?.parameters["filename"],
            url.flatMap(self.lastPathComponent),
        ]
        for case let candidate? in candidates {
            if let name = self.cleaned(candidate) {
                return name
            }
        }
        return self.fallback
    }

    /// The file URL for `suggestedName` in `directory`, sanitised and guaranteed to be directly inside it.
    ///
    /// The last line of defence against a name that escapes the download directory: whatever the name, the result's
    /// parent is `directory.standardizedFileURL`.
    static func destinationURL(in directory: URL, suggestedName: String) -> URL {
        let directory = directory.standardizedFileURL
        let name = self.sanitized(suggestedName)
        let candidate = directory.appendingPathComponent(name, isDirectory: false)
        let parent = candidate.deletingLastPathComponent().standardizedFileURL
        if parent.path == directory.path, candidate.lastPathComponent == name {
            return candidate
        }
        return directory.appendingPathComponent(self.fallback, isDirectory: false)
    }

    /// The last component of the URL's path, percent-decoded once; `nil` when the path is empty or ends in `/`.
    static func lastPathComponent(of url: URL) -> String? {
        let path = url.path(percentEncoded: true)
        let component = path.split(separator: "/", omittingEmptySubsequences: false).last ?? ""
        guard !component.isEmpty else { return nil }
        return component.removingPercentEncoding ?? String(component)
    }

    /// The sanitised name, or `nil` when nothing is left of it.
    private static func cleaned(_ suggestion: String) -> String? {
        var scalars = String.UnicodeScalarView()
        for scalar in suggestion.precomposedStringWithCanonicalMapping.unicodeScalars {
            scalars.append(self.isForbidden(scalar) ? "_" : scalar)
        }
        var name = self.trimmed(scalars)
        guard !name.isEmpty else { return nil }
        if self.isReservedOnWindows(name) {
            name.insert("_", at: name.startIndex)
        }
        name = self.truncated(name)
        return name.isEmpty ? nil : String(name)
    }

    /// Whether a scalar must not appear in a name: a path separator, a control or a bidirectional control.
    private static func isForbidden(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x2F, 0x5C: true  // "/" and "\"
        case 0x00...0x1F, 0x7F...0x9F: true  // C0, DEL and C1 controls
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true  // bidirectional controls
        default: false
        }
    }

    private static func isTrimmed(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "." || scalar.properties.isWhitespace
    }

    /// The scalars without leading and trailing dots and whitespace.
    private static func trimmed(_ scalars: String.UnicodeScalarView) -> String.UnicodeScalarView {
        var trimmed = Substring.UnicodeScalarView(scalars)
        while let first = trimmed.first, self.isTrimmed(first) {
            trimmed.removeFirst()
        }
        while let last = trimmed.last, self.isTrimmed(last) {
            trimmed.removeLast()
        }
        return String.UnicodeScalarView(trimmed)
    }

    /// Whether the part before the first dot, without trailing spaces, is a Windows device name.
    private static func isReservedOnWindows(_ name: String.UnicodeScalarView) -> Bool {
        var base = name.prefix { $0 != "." }
        while let last = base.last, last.properties.isWhitespace {
            base.removeLast()
        }
        return self.reservedNames.contains(String(String.UnicodeScalarView(base)).uppercased())
    }

    /// The name cut to ``maximumLength`` bytes of UTF-8, keeping a short extension and whole characters.
    private static func truncated(_ scalars: String.UnicodeScalarView) -> String.UnicodeScalarView {
        let name = String(scalars)
        guard name.utf8.count > self.maximumLength else { return scalars }
        var stem = Substring(name)
        var pathExtension = ""
        if let dot = name.lastIndex(of: "."), dot != name.startIndex {
            let candidate = name[dot...]
            if candidate.utf8.count <= self.maximumExtensionLength, !candidate.contains(where: \.isWhitespace) {
                stem = name[..<dot]
                pathExtension = String(candidate)
            }
        }
        let budget = self.maximumLength - pathExtension.utf8.count
        var kept = String.UnicodeScalarView()
        var used = 0
        for character in stem {
            let length = character.utf8.count
            guard used + length <= budget else { break }
            kept.append(contentsOf: character.unicodeScalars)
            used += length
        }
        if kept.isEmpty {
            // The first character alone is too long (a base with hundreds of combining marks): cut by scalars.
            for scalar in stem.unicodeScalars {
                let length = UTF8.width(scalar)
                guard used + length <= budget else { break }
                kept.append(scalar)
                used += length
            }
        }
        while let last = kept.last, self.isTrimmed(last) {
            kept.removeLast()
        }
        kept.append(contentsOf: pathExtension.unicodeScalars)
        return kept
    }
}
