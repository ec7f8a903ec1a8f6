import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The file operations of downloads: temporary files and the atomic move into place.
enum DownloadFiles {
    /// Kite's folder for partial and finished-but-unplaced downloads.
    static var directory: URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("dev.kite.downloads", isDirectory: true)
    }

    /// A new, unused file URL in ``directory`` (the folder is created if needed).
    static func makeTemporaryURL(extension pathExtension: String, summary: RequestSummary) throws(KiteError) -> URL {
        do {
            try FileManager.default.createDirectory(at: self.directory, withIntermediateDirectories: true)
        } catch {
            throw KiteError(
                code: .downloadFailed,
                message: "the temporary folder \(self.directory.path) could not be created: \(error)",
                request: summary,
                underlyingError: error
            )
        }
        return self.unusedTemporaryURL(extension: pathExtension)
    }

    /// A new, unused file URL in ``directory``, which neither the folder nor the file is created for.
    static func unusedTemporaryURL(extension pathExtension: String) -> URL {
        self.directory.appendingPathComponent("\(UUID().uuidString).\(pathExtension)")
    }

    /// The longest part of the destination's name a staging file's name keeps, in bytes of UTF-8: with the dot
    /// before it and `.<UUID>.kite-partial` after it, the name stays under the 255 bytes of common file systems.
    static let maximumStagedNameLength = 160

    /// A new, unused, hidden file URL in `destination`'s folder to write the download to, so that moving it
    /// into place is a `rename` on one file system: `.<name>.<UUID>.kite-partial`, the name cut to
    /// ``maximumStagedNameLength`` bytes (at a character boundary).
    static func stagingURL(beside destination: URL) -> URL {
        var name = ""
        var length = 0
        for character in destination.lastPathComponent {
            length += character.utf8.count
            guard length <= self.maximumStagedNameLength else { break }
            name.append(character)
        }
        return destination.deletingLastPathComponent()
            .appendingPathComponent(".\(name).\(UUID().uuidString).kite-partial", isDirectory: false)
    }

    /// Checks that `destination` is a file URL whose folder exists, or creates the folder when `options`
    /// contain `.createIntermediateDirectories`; returns the folder.
    ///
    /// A download calls this when its response head arrives, to stage its bytes in that folder, and again
    /// (through ``move(_:to:options:summary:)``) when it moves the file into place.
    @discardableResult
    static func prepareFolder(
        of destination: URL,
        options: DownloadRequest.Options,
        summary: RequestSummary
    ) throws(KiteError) -> URL {
        func failure(_ message: String, _ error: (any Error)? = nil) -> KiteError {
            KiteError(code: .downloadFailed, message: message, request: summary, underlyingError: error)
        }
        guard destination.isFileURL else {
            throw failure("the destination \(destination.absoluteString) is not a file URL")
        }
        let fileManager = FileManager.default
        let folder = destination.deletingLastPathComponent()
        var isDirectory: ObjCBool = false
        if !fileManager.fileExists(atPath: folder.path, isDirectory: &isDirectory) {
            guard options.contains(.createIntermediateDirectories) else {
                throw failure(
                    "the destination folder \(folder.path) does not exist (pass .createIntermediateDirectories to create it)"
                )
            }
            do {
                try fileManager.createDirectory(at: folder, withIntermediateDirectories: true)
            } catch {
                throw failure("the destination folder \(folder.path) could not be created: \(error)", error)
            }
        } else if !isDirectory.boolValue {
            throw failure("the destination folder \(folder.path) is a file")
        }
        return folder
    }

    /// Moves `source` to `destination` with one `rename`, so the destination is never half-written:
    /// it holds either what it held before or the whole download.
    ///
    /// A download with a destination is staged in the destination's folder (``stagingURL(beside:)``), so the
    /// `rename` stays on one file system. Only a source on another file system (the partial file of a download
    /// resumed to another destination) is copied, next to the destination, and then renamed.
    static func move(
        _ source: URL,
        to destination: URL,
        options: DownloadRequest.Options,
        summary: RequestSummary
    ) throws(KiteError) {
        func failure(_ message: String, _ error: (any Error)? = nil) -> KiteError {
            KiteError(code: .downloadFailed, message: message, request: summary, underlyingError: error)
        }
        let fileManager = FileManager.default
        let folder = try self.prepareFolder(of: destination, options: options, summary: summary)
        var isDirectory: ObjCBool = false
        if fileManager.fileExists(atPath: destination.path, isDirectory: &isDirectory) {
            if isDirectory.boolValue {
                throw failure("the destination \(destination.path) is a directory")
            }
            guard options.contains(.removePreviousFile) else {
                throw failure(
                    "a file already exists at \(destination.path) (pass .removePreviousFile to replace it)"
                )
            }
        }
        if rename(source.path, destination.path) == 0 { return }
        let code = errno
        guard code == EXDEV else {
            throw failure("moving the download to \(destination.path) failed: \(String(cString: strerror(code)))")
        }
        // Another file system: copy next to the destination, then rename there (still atomic).
        let staging = folder.appendingPathComponent(".\(destination.lastPathComponent).\(UUID().uuidString).kite")
        do {
            try fileManager.copyItem(at: source, to: staging)
        } catch {
            self.remove(staging)
            throw failure("copying the download to \(folder.path) failed: \(error)", error)
        }
        guard rename(staging.path, destination.path) == 0 else {
            let reason = String(cString: strerror(errno))
            self.remove(staging)
            throw failure("moving the download to \(destination.path) failed: \(reason)")
        }
        self.remove(source)
    }

    /// Removes a file, ignoring a missing one.
    static func remove(_ url: URL) {
        try? FileManager.default.removeItem(at: url)
    }

    /// The bytes of the file at `url`, as `Data(contentsOf:)` reads them, except that a file whose size reads 0 is
    /// read through a `FileHandle`: swift-foundation's `Data(contentsOf:)` leaks the 4 KiB buffer it reads an empty
    /// file into (every call; found by LeakSanitizer, RELIABILITY.md), and a file of the kernel's (`/proc`) reports
    /// size 0 but has bytes, which the handle reads to its end.
    static func contents(of url: URL) throws -> Data {
        guard Self.size(of: url) == 0 else { return try Data(contentsOf: url) }
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        return try handle.readToEnd() ?? Data()
    }

    /// The size of a regular file, or `nil`.
    static func size(of url: URL) -> Int64? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: url.path),
            (attributes[.type] as? FileAttributeType) == .typeRegular
        else { return nil }
        return (attributes[.size] as? NSNumber)?.int64Value
    }
}

/// A `Content-Range: bytes first-last/complete` value (RFC 9110 §14.4).
struct ContentRange: Equatable {
    let start: Int64
    let end: Int64
    /// The whole representation's length; `nil` for `*`.
    let completeLength: Int64?

    init?(_ text: String) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard trimmed.lowercased().hasPrefix("bytes ") else { return nil }
        let spec = trimmed.dropFirst("bytes ".count)
        let parts = spec.split(separator: "/", maxSplits: 1)
        guard parts.count == 2 else { return nil }
        let bounds = parts[0].split(separator: "-", maxSplits: 1)
        guard bounds.count == 2, let start = Int64(bounds[0]), let end = Int64(bounds[1]), start <= end else {
            return nil
        }
        self.start = start
        self.end = end
        if parts[1] == "*" {
            self.completeLength = nil
        } else if let complete = Int64(parts[1]), complete > end {
            self.completeLength = complete
        } else {
            return nil
        }
    }
}
