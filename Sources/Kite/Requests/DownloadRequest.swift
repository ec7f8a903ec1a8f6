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
/// carries resume data for ``Session/download(resumingWith:to:)``, which continues the file where it is.
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
// @unchecked: the added mutable state lives in `download`, a NIOLockedValueBox; the rest is immutable.
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

    /// Where the destination closure put the current attempt's file, and how.
    struct Placement: Equatable {
        var destinationURL: URL
        var options: Options
    }

    struct State {
        /// The file bytes are written to: beside the destination when there is one, else a temporary file.
        var partialURL: URL?
        /// The destination and options the ``Destination`` closure gave for this attempt, asked once when the
        /// response head arrived; `nil` without a destination.
        var placement: Placement?
        /// Bytes in the partial file.
        var bytesOnDisk: Int64 = 0
        /// Whether the server's response allows resuming (validators, ranges, no content coding).
        var resumable: ResumeData?
        /// Whether a cancel should keep the partial file and produce resume data.
        var producingResumeData = false
    }

    let destination: Destination?
    /// The download this one resumes, when made from resume data.
    let resuming: ResumeData?
    let download = NIOLockedValueBox(State())

    init(
        session: Session,
        draft: Result<RequestDraft, KiteError>,
        destination: Destination?,
        resuming: ResumeData? = nil
    ) {
        self.destination = destination
        self.resuming = resuming
        super.init(session: session, draft: draft)
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
    /// request.cancel(producingResumeData: true)
    /// let resumeData = await request.serializingDownloadedFileURL().response.resumeData
    /// ```
    ///
    /// - Parameter producingResumeData: Whether to keep the partial file for resuming.
    /// - Returns: The request.
    @discardableResult
    public func cancel(producingResumeData: Bool) -> Self {
        self.download.withLockedValue { $0.producingResumeData = producingResumeData }
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

    /// The body goes to a file in batches of a megabyte (``BatchedFileWriter``).
    override var responseBodyDelivery: BodyDelivery { .gathered(batched: true) }

    override func receiveBody(
        _ response: TransportResponse,
        into outcome: inout RequestOutcome,
        counter: inout BodyCounter
    ) async throws(KiteError) {
        let head = response.head
        let method = outcome.request?.method ?? .get
        var offset: Int64 = 0
        let partialURL: URL
        if let resuming, let partial = resuming.partialFileURL {
            // A resumed download continues its partial file where it is.
            partialURL = partial
            self.download.withLockedValue { $0.partialURL = partial }
            offset = try self.resumeOffset(for: head, resuming: resuming)
            if offset > 0 {
                counter.startOffset = offset
                counter.total = ContentRange(head.headerFields[.contentRange] ?? "")?.completeLength
            }
            try self.place(head, url: outcome.url, temporaryURL: partial)
        } else if let placement = try self.place(
            head,
            url: outcome.url,
            temporaryURL: DownloadFiles.unusedTemporaryURL(extension: "partial")
        ) {
            // Staged on the destination's file system, so the move into place is a rename.
            partialURL = DownloadFiles.stagingURL(beside: placement.destinationURL)
        } else {
            partialURL = try DownloadFiles.makeTemporaryURL(extension: "partial", summary: self.summary)
        }
        let resumable = ResumeData(response: head, request: outcome.request, method: method, partialFileURL: partialURL)
        self.download.withLockedValue { state in
            state.partialURL = partialURL
            state.bytesOnDisk = offset
            state.resumable = resumable
        }
        outcome.fileURL = partialURL

        let summary = self.summary
        let file: PoolFile
        do {
            file = try await PoolFile.openForWriting(partialURL.path, truncate: offset == 0)
        } catch {
            throw KiteError(
                code: .downloadFailed,
                message: "the temporary file \(partialURL.path) could not be opened: \(error)",
                request: summary,
                underlyingError: error.posixError
            )
        }
        // Chunks are written in batches, one on the thread pool while the next fills (BatchedFileWriter).
        var writer = BatchedFileWriter(file: file, offset: offset)
        func writeFailure(_ error: SystemFile.SystemError, _ writer: BatchedFileWriter) -> KiteError {
            KiteError(
                code: .downloadFailed,
                message: "writing \(partialURL.path) failed after \(writer.written) bytes: \(error)",
                request: summary,
                underlyingError: error.posixError
            )
        }
        do throws(KiteError) {
            var iterator = response.body.makeAsyncIterator()
            do throws(KiteError) {
                while let chunk = try await self.nextChunk(&iterator, counter: &counter) {
                    do {
                        if try await writer.append(chunk) {
                            let written = writer.written
                            self.download.withLockedValue { $0.bytesOnDisk = written }
                        }
                    } catch {
                        throw writeFailure(error, writer)
                    }
                }
            } catch {
                // A chunk that arrived is written, so resume data covers it, whatever stopped the body.
                if error.code != .downloadFailed { try? await writer.finish() }
                throw error
            }
            do {
                try await writer.finish()
            } catch {
                throw writeFailure(error, writer)
            }
        } catch {
            await writer.abandon()
            let written = writer.written
            self.download.withLockedValue { $0.bytesOnDisk = written }
            try? await file.close()
            throw error
        }
        let written = writer.written
        self.download.withLockedValue { $0.bytesOnDisk = written }
        do {
            try await file.close()
        } catch {
            throw KiteError(
                code: .downloadFailed,
                message: "closing \(partialURL.path) failed, so its bytes may not all be written: \(error)",
                request: summary,
                underlyingError: error.posixError
            )
        }
    }

    /// Asks the ``Destination`` closure, when there is one, where this attempt's file goes, records the answer
    /// for ``finalize(_:)`` and makes sure the destination's folder is there to stage the file in.
    ///
    /// - Returns: The destination and its options; `nil` without a destination.
    @discardableResult
    private func place(_ head: HTTPResponse, url: URL?, temporaryURL: URL) throws(KiteError) -> Placement? {
        guard let destination = self.destination else { return nil }
        let (target, options) = DownloadRequest.$responseURL.withValue(url) { destination(temporaryURL, head) }
        let placement = Placement(destinationURL: target, options: options)
        self.download.withLockedValue { $0.placement = placement }
        try DownloadFiles.prepareFolder(of: target, options: options, summary: self.summary)
        return placement
    }

    /// Where the body of a resumed download starts: the partial file's length after a 206 that
    /// continues it, 0 after a 200 (the server sent the whole file again).
    private func resumeOffset(for head: HTTPResponse, resuming: ResumeData) throws(KiteError) -> Int64 {
        switch head.status.code {
        case 206:
            guard let range = ContentRange(head.headerFields[.contentRange] ?? ""), range.start == resuming.bytes else {
                throw KiteError(
                    code: .resumeFailed,
                    message: "the server resumed with Content-Range \"\(head.headerFields[.contentRange] ?? "")\", "
                        + "not at byte \(resuming.bytes)",
                    request: self.summary,
                    response: head
                )
            }
            if let expected = resuming.entityTag, let actual = head.headerFields[.eTag], expected != actual {
                throw KiteError(
                    code: .resumeFailed,
                    message: "the file changed on the server (ETag \(expected) is now \(actual)); download it again",
                    request: self.summary,
                    response: head
                )
            }
            return resuming.bytes
        case 416:
            throw KiteError(
                code: .resumeFailed,
                message: "the server cannot resume at byte \(resuming.bytes) (416 Range Not Satisfiable); "
                    + "the file may have changed on the server, download it again",
                request: self.summary,
                response: head
            )
        default:
            return 0
        }
    }

    /// A retry starts a fresh partial file; the failed attempt's is removed (a resumed download keeps the
    /// file it resumes, which the next attempt writes from the same offset).
    override func prepareForRetry() async {
        let partial = self.download.withLockedValue { state -> URL? in
            let partial = state.partialURL
            state.partialURL = nil
            state.placement = nil
            state.bytesOnDisk = 0
            state.resumable = nil
            return partial
        }
        if let partial, partial != self.resuming?.partialFileURL {
            DownloadFiles.remove(partial)
        }
    }

    override func finalize(_ outcome: RequestOutcome) async -> RequestOutcome {
        var outcome = outcome
        let state = self.download.withLockedValue { $0 }
        guard let partialURL = state.partialURL else { return outcome }
        if let error = outcome.error {
            outcome.fileURL = nil
            if let resume = state.resumable, state.bytesOnDisk > 0, self.keepsBytes(after: error, state: state) {
                outcome.resumeData = resume.with(bytes: state.bytesOnDisk).encoded()
            } else {
                DownloadFiles.remove(partialURL)
            }
            return outcome
        }
        do {
            outcome.fileURL = try self.moveIntoPlace(partialURL, placement: state.placement)
        } catch {
            DownloadFiles.remove(partialURL)
            outcome.fileURL = nil
            outcome.error = error.naming(self.summary).carrying(outcome.response)
        }
        return outcome
    }

    /// Whether a failed download keeps its bytes for resuming: when cancelled to produce resume data,
    /// or when the transfer broke off (not when the response was refused by validation).
    private func keepsBytes(after error: KiteError, state: State) -> Bool {
        switch error.code {
        case .cancelled: state.producingResumeData
        case .connectionLost, .timedOut: true
        default: false
        }
    }

    /// Moves the finished file to where the destination closure said when the head arrived (it is not asked
    /// again), with every check of ``DownloadFiles/move(_:to:options:summary:)``; without a destination, to a
    /// temporary URL.
    private func moveIntoPlace(_ partialURL: URL, placement: Placement?) throws(KiteError) -> URL {
        guard let placement else {
            let temporary = try DownloadFiles.makeTemporaryURL(extension: "download", summary: self.summary)
            try DownloadFiles.move(partialURL, to: temporary, options: [], summary: self.summary)
            return temporary
        }
        let target = placement.destinationURL
        try DownloadFiles.move(partialURL, to: target, options: placement.options, summary: self.summary)
        return target
    }

    /// The URL that answered, for destinations that name files after it.
    @TaskLocal static var responseURL: URL?
}
