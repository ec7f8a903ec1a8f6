import Foundation

extension MultipartFormData {
    /// Checks the file at `url` for a part, in this order: a `file:` URL, reachable, not a directory, a
    /// regular file (so its size is known), openable for reading. Returns the file with its current size.
    ///
    /// The size taken here is what ``contentLength`` counts and what the file must still have when read.
    static func checkFile(_ url: URL, partLabel: String) -> Result<FileSource, KiteError> {
        Self.checkFile(url, role: "file part \(partLabel)")
    }

    /// Checks a file for `role` (such as `the upload body`), as ``checkFile(_:partLabel:)`` does.
    static func checkFile(_ url: URL, role: String) -> Result<FileSource, KiteError> {
        guard url.isFileURL else {
            return .failure(
                Failure.error(
                    .notFileURL,
                    "cannot use \(url.absoluteString) as \(role): it is not a file URL",
                    fileURL: url
                )
            )
        }
        let path = url.path
        let status: SystemFile.Status
        switch SystemFile.status(ofPath: path) {
        case .success(let found):
            status = found
        case .failure(let error):
            return .failure(
                Failure.error(
                    .fileUnreachable,
                    "cannot use \(path) as \(role): it does not exist or cannot be reached"
                        + " (\(error))",
                    fileURL: url,
                    underlyingError: error.posixError
                )
            )
        }
        guard !status.isDirectory else {
            return .failure(
                Failure.error(
                    .fileIsDirectory,
                    "cannot use \(path) as \(role): it is a directory, not a file",
                    fileURL: url
                )
            )
        }
        guard status.isRegularFile, status.size >= 0 else {
            return .failure(
                Failure.error(
                    .fileSizeUnavailable,
                    "cannot use \(path) as \(role): its size cannot be known before it is read,"
                        + " as it is \(status.kindDescription)",
                    fileURL: url
                )
            )
        }
        switch SystemFile.openForReading(path) {
        case .success(let descriptor):
            SystemFile.close(descriptor)
        case .failure(let error):
            return .failure(
                Failure.error(
                    .fileCannotBeOpened,
                    "cannot use \(path) as \(role): it cannot be opened for reading (\(error))",
                    fileURL: url,
                    underlyingError: error.posixError
                )
            )
        }
        return .success(FileSource(url: url, path: path, size: status.size, role: role))
    }

    /// The file name and MIME type of a file part: the given ones, or the URL's last path component and
    /// the MIME type of the file name's extension.
    static func resolveFileName(
        _ fileName: String?,
        mimeType: String?,
        for url: URL,
        partLabel: String
    ) -> Result<(fileName: String, mimeType: String), KiteError> {
        let resolvedName: String
        if let fileName {
            resolvedName = fileName
        } else {
            let lastComponent = url.lastPathComponent
            guard !lastComponent.isEmpty, lastComponent != "/" else {
                return .failure(
                    Failure.error(
                        .fileNameNotInferable,
                        "cannot append \(url.path) as file part \(partLabel): its URL has no last path component"
                            + " to use as the file name; pass fileName and mimeType",
                        fileURL: url
                    )
                )
            }
            resolvedName = lastComponent
        }
        if let mimeType {
            return .success((resolvedName, mimeType))
        }
        guard let pathExtension = Self.pathExtension(of: resolvedName) else {
            return .failure(
                Failure.error(
                    .fileNameNotInferable,
                    "cannot append \(url.path) as file part \(partLabel): its file name \"\(resolvedName)\" has no"
                        + " extension to infer a MIME type from; pass mimeType",
                    fileURL: url
                )
            )
        }
        return .success((resolvedName, Self.mimeType(forPathExtension: pathExtension)))
    }

    /// The text after the last `.` of the last path component of `fileName`, or `nil` when there is none
    /// (no dot, a trailing dot, or only a leading dot as in `.profile`).
    static func pathExtension(of fileName: String) -> String? {
        let lastComponent = fileName.split(separator: "/", omittingEmptySubsequences: false).last ?? ""
        guard let dot = lastComponent.lastIndex(of: "."), dot != lastComponent.startIndex else { return nil }
        let pathExtension = lastComponent[lastComponent.index(after: dot)...]
        return pathExtension.isEmpty ? nil : String(pathExtension)
    }
}
