import Foundation
import HTTPTypes

extension DownloadRequest {
    /// Keeps an existing file by default, as Alamofire does: the download then fails with `downloadFailed`
    /// ("a file already exists"); pass `[.createIntermediateDirectories, .removePreviousFile]` to replace it.
    ///
    /// A destination in `directory` named after the response: the `Content-Disposition` filename
    /// (`filename*` first, then `filename`), else the last path component of the URL that answered,
    /// sanitised by ``DownloadFilename/sanitized(_:)`` so it can never leave the directory.
    ///
    /// ```swift
    /// let fileURL = try await session.download(
    ///         "http://127.0.0.1:8080/response-headers?Content-Disposition=attachment;%20filename%3D%22report.pdf%22",
    ///         to: DownloadRequest.suggestedDownloadDestination(in: URL(fileURLWithPath: "/tmp/kite"))
    ///     )
    ///     .serializingDownloadedFileURL()
    ///     .value  // /tmp/kite/report.pdf
    /// ```
    ///
    /// - Parameters:
    ///   - directory: The folder to save in.
    ///   - options: How to put the file there: `.createIntermediateDirectories` by default, which keeps an
    ///     existing file.
    /// - Returns: The destination.
    public static func suggestedDownloadDestination(
        in directory: URL,
        options: Options = [.createIntermediateDirectories]
    ) -> Destination {
        { _, response in
            let name = DownloadFilename.suggested(
                contentDisposition: response.headerFields[.contentDisposition],
                url: DownloadRequest.responseURL
            )
            return (DownloadFilename.destinationURL(in: directory, suggestedName: name), options)
        }
    }

    /// Keeps an existing file by default, as Alamofire does: the download then fails with `downloadFailed`
    /// ("a file already exists"); pass `[.createIntermediateDirectories, .removePreviousFile]` to replace it.
    /// Unlike Alamofire's, it creates the folder when missing: on Linux `~/Documents` often does not exist.
    ///
    /// A destination in a standard folder (the documents folder by default), named as
    /// ``suggestedDownloadDestination(in:options:)`` names it.
    ///
    /// ```swift
    /// let request = session.download(url, to: DownloadRequest.suggestedDownloadDestination(for: .cachesDirectory))
    /// ```
    ///
    /// - Parameters:
    ///   - directory: Which standard folder.
    ///   - domain: In which domain.
    ///   - options: How to put the file there: `.createIntermediateDirectories` by default, which keeps an
    ///     existing file.
    /// - Returns: The destination.
    public static func suggestedDownloadDestination(
        for directory: FileManager.SearchPathDirectory = .documentDirectory,
        in domain: FileManager.SearchPathDomainMask = .userDomainMask,
        options: Options = [.createIntermediateDirectories]
    ) -> Destination {
        let folder =
            FileManager.default.urls(for: directory, in: domain).first
            ?? FileManager.default.temporaryDirectory
        return Self.suggestedDownloadDestination(in: folder, options: options)
    }
}
