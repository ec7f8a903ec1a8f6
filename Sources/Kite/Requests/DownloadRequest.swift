import Foundation
import HTTPTypes
import NIOConcurrencyHelpers
import NIOCore

/// A request whose response body streams to a file on disk, in constant memory.
///
/// The bytes go to a partial file as they arrive: with a ``Destination``, a hidden file in the destination's
/// folder (`.<name>.<UUID>.kite-partial`), so that it is on the destination's file system; without one, a
/// file in the temporary directory. Only when the download completed and passed validation is the file moved
/// to its destination, with one `rename` (atomic, so an existing file there is never half-overwritten). A
/// failed or invalid download leaves nothing at the destination and removes its partial file. A download
/// cancelled with ``cancel(producingResumeData:)`` or failed after bytes arrived keeps its partial file and
/// carries resume data for ``Session/download(resumingWith:interceptor:requestModifier:to:)``, which continues the file where it is.
///
/// ```swift
/// let destination: DownloadRequest.Destination = { _, _ in
///     (URL(fileURLWithPath: "/tmp/kite/report.pdf"), [.createIntermediateDirectories, .removePreviousFile])
/// }
/// let fileURL = try await session.download("http://127.0.0.1:8080/bytes/1048576", to: destination)
///     .validate()
///     .serializingDownloadedFileURL()
///     .value
/// ```
// @unchecked: adds no stored state to BaseRequest: its file state is in the request's state machine.
public final class DownloadRequest: BaseRequest, @unchecked Sendable {
    /// Where a completed, validated download goes: given a temporary URL and the response head, returns the
    /// destination and how to put the file there.
    ///
    /// Kite asks when the response head arrives, before the body, not after the download as Alamofire
    /// does: knowing the destination first lets Kite write the body beside it, in a hidden partial file
    /// (`.<name>.<UUID>.kite-partial`) in the destination's folder. Moving the finished file into place
    /// is then a `rename` on one file system, however large the file, where a partial file in the
    /// temporary directory (`/tmp`) would be copied, byte by byte, to a destination on another file system
    /// (a tmpfs, a data volume, a container mount). So:
    /// - When the closure runs, no body byte has arrived. `temporaryURL` is the partial file only for a
    ///   download resumed from resume data (the bytes so far are in it, and the rest is appended to it where
    ///   it is); otherwise it is a unique URL in Kite's temporary folder at which no file exists, since the
    ///   partial file is made in the folder the closure chooses. Do not read the body from it.
    /// - The closure is asked once per attempt, for the response that carries the body (after redirects),
    ///   before validation: also for a response that then fails validation (which removes the partial file
    ///   and leaves the destination untouched), and again when a retrier sends the request again. It is not
    ///   asked again when the file is moved into place.
    /// - A destination that is not a file URL, or whose folder is missing (without
    ///   ``Options/createIntermediateDirectories``) or is a file, fails the download with `downloadFailed`
    ///   as soon as the head arrives, with the message the move would give. A file already at the
    ///   destination, or a directory there, is checked when the file is moved into place, as before.
    ///
    /// ```swift
    /// let destination: DownloadRequest.Destination = { _, response in
    ///     let name = response.status == .ok ? "report.pdf" : "error.html"
    ///     return (URL(fileURLWithPath: "/tmp/kite").appendingPathComponent(name), [.createIntermediateDirectories])
    /// }
    /// ```
    public typealias Destination =
        @Sendable (_ temporaryURL: URL, _ response: HTTPResponse) -> (destinationURL: URL, options: Options)

    /// How a download is put at its destination.
    public struct Options: OptionSet, Sendable, Hashable {
        public let rawValue: Int

        /// Creates options from their raw value.
        ///
        /// - Parameter rawValue: The bits.
        public init(rawValue: Int) {
            self.rawValue = rawValue
        }

        /// Create missing directories on the way to the destination.
        public static let createIntermediateDirectories = Options(rawValue: 1 << 0)
        /// Replace a file already at the destination (atomically); without it, an existing file
        /// makes the download fail with `downloadFailed`.
        public static let removePreviousFile = Options(rawValue: 1 << 1)
    }

    init(
        session: Session,
        draft: Result<RequestDraft, KiteError>,
        destination: Destination?,
        resuming: ResumeData? = nil
    ) {
        super.init(session: session, draft: draft, sink: FileSink(destination: destination, resuming: resuming))
    }

    /// The file, once the download is over: its destination, or the temporary file when no
    /// destination was given. `nil` when it failed.
    public var fileURL: URL? {
        self.machine.withLockedValue { $0.outcome?.fileURL }
    }

    /// The token to resume a cancelled or failed download with, once it is over.
    public var resumeData: Data? {
        self.machine.withLockedValue { $0.outcome?.resumeData }
    }

    /// Cancels the download; with `producingResumeData`, keeps the bytes received so far and puts a
    /// resume token in the response (when the server allows resuming: it sent `ETag` or
    /// `Last-Modified`, the body was not content-encoded and ranges are not refused).
    ///
    /// ```swift
    /// let task = request.serializingDownloadedFileURL()  // started, so bytes can arrive
    /// for await progress in request.downloadProgress() where progress.completedBytes > 0 {
    ///     request.cancel(producingResumeData: true)
    ///     break
    /// }
    /// let resumeData = await task.response.resumeData
    /// ```
    ///
    /// - Parameter producingResumeData: Whether to keep the partial file for resuming.
    /// - Returns: The request.
    @discardableResult
    public func cancel(producingResumeData: Bool) -> Self {
        self.machine.withLockedValue { $0.record.download.producingResumeData = producingResumeData }
        self.cancel()
        return self
    }

    /// Cancels the download keeping its bytes, and calls `completionHandler` with the resume token
    /// (or `nil` when the download cannot be resumed) once the request has stopped.
    ///
    /// ```swift
    /// request.cancel { resumeData in store(resumeData) }
    /// ```
    ///
    /// - Parameter completionHandler: Receives the resume data.
    /// - Returns: The request.
    @discardableResult
    public func cancel(byProducingResumeData completionHandler: @escaping @Sendable (Data?) -> Void) -> Self {
        self.cancel(producingResumeData: true)
        self.appendHandler { outcome in completionHandler(outcome.resumeData) }
        return self
    }

    /// The URL that answered, for destinations that name files after it.
    @TaskLocal static var responseURL: URL?
}
