import Foundation
import HTTPTypes
import NIOCore

/// The body written to a file as it arrives, in constant memory (downloads).
///
/// The file is staged beside the destination when there is one (the ``DownloadRequest/Destination`` closure
/// is asked when the head arrives), else in a temporary folder; only a completed, validated download is moved
/// into place, with one `rename`. A failed or invalid download leaves nothing at the destination; a
/// cancelled (with resume data) or broken-off one keeps its bytes for ``Session/download(resumingWith:interceptor:requestModifier:to:)``.
struct FileSink: ResponseSink {
    let destination: DownloadRequest.Destination?
    /// The download this one resumes, when made from resume data.
    let resuming: ResumeData?

    /// The body goes to a file in batches of a megabyte (``BatchedFileWriter``).
    var bodyDelivery: BodyDelivery { .gathered(batched: true) }

    nonisolated(nonsending) func receive(
        _ response: TransportResponse,
        into outcome: inout RequestOutcome,
        counter: inout BodyCounter,
        for request: BaseRequest
    ) async throws(KiteError) {
        let summary = request.summary
        let head = response.head
        let method = outcome.request?.method ?? .get
        var offset: Int64 = 0
        let partialURL: URL
        if let resuming, let partial = resuming.partialFileURL {
            // A resumed download continues its partial file where it is.
            partialURL = partial
            request.machine.withLockedValue { $0.record.download.partialURL = partial }
            offset = try Self.resumeOffset(for: head, resuming: resuming, summary: summary)
            if offset > 0 {
                counter.startOffset = offset
                counter.total = ContentRange(head.headerFields[.contentRange] ?? "")?.completeLength
            }
            try self.place(head, url: outcome.url, temporaryURL: partial, for: request)
        } else if let placement = try self.place(
            head,
            url: outcome.url,
            temporaryURL: DownloadFiles.unusedTemporaryURL(extension: "partial"),
            for: request
        ) {
            // Staged on the destination's file system, so the move into place is a rename.
            partialURL = DownloadFiles.stagingURL(beside: placement.destinationURL)
        } else {
            partialURL = try DownloadFiles.makeTemporaryURL(extension: "partial", summary: summary)
        }
        let resumable = ResumeData(response: head, request: outcome.request, method: method, partialFileURL: partialURL)
        request.machine.withLockedValue { machine in
            machine.record.download.partialURL = partialURL
            machine.record.download.bytesOnDisk = offset
            machine.record.download.resumable = resumable
        }
        outcome.fileURL = partialURL

        let file: PoolFile
        do {
            file = try await PoolFile.openForWriting(partialURL.path, truncate: offset == 0)
        } catch {
            throw Self.fileFailure("the temporary file \(partialURL.path) could not be opened", error, summary: summary)
        }
        // Chunks are written in batches, one on the thread pool while the next fills (BatchedFileWriter).
        var writer = BatchedFileWriter(file: file, offset: offset)
        func writeFailure(_ error: SystemFile.SystemError, _ writer: BatchedFileWriter) -> KiteError {
            Self.fileFailure("writing \(partialURL.path) failed after \(writer.written) bytes", error, summary: summary)
        }
        do throws(KiteError) {
            var iterator = response.body.makeAsyncIterator()
            do throws(KiteError) {
                while let chunk = try await request.nextChunk(&iterator, counter: &counter) {
                    do {
                        if try await writer.append(chunk) {
                            let written = writer.written
                            request.machine.withLockedValue { $0.record.download.bytesOnDisk = written }
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
            request.machine.withLockedValue { $0.record.download.bytesOnDisk = written }
            try? await file.close()
            throw error
        }
        let written = writer.written
        request.machine.withLockedValue { $0.record.download.bytesOnDisk = written }
        do {
            try await file.close()
        } catch {
            throw Self.fileFailure(
                "closing \(partialURL.path) failed, so its bytes may not all be written",
                error,
                summary: summary
            )
        }
    }

    /// A failure of the partial file's I/O: `downloadFailed`, saying what failed and why, with the system's
    /// error as the underlying one.
    private static func fileFailure(
        _ what: String,
        _ error: SystemFile.SystemError,
        summary: RequestSummary
    ) -> KiteError {
        KiteError(
            code: .downloadFailed,
            message: "\(what): \(error)",
            request: summary,
            underlyingError: error.posixError
        )
    }

    /// Asks the ``DownloadRequest/Destination`` closure, when there is one, where this attempt's file goes,
    /// records the answer for ``finalize(_:of:)`` and makes sure the destination's folder is there to stage the
    /// file in.
    ///
    /// - Returns: The destination and its options; `nil` without a destination.
    @discardableResult
    private func place(
        _ head: HTTPResponse,
        url: URL?,
        temporaryURL: URL,
        for request: BaseRequest
    ) throws(KiteError) -> DownloadRecord.Placement? {
        guard let destination = self.destination else { return nil }
        let (target, options) = DownloadRequest.$responseURL.withValue(url) { destination(temporaryURL, head) }
        let placement = DownloadRecord.Placement(destinationURL: target, options: options)
        request.machine.withLockedValue { $0.record.download.placement = placement }
        try DownloadFiles.prepareFolder(of: target, options: options, summary: request.summary)
        return placement
    }

    /// Where the body of a resumed download starts: the partial file's length after a 206 that
    /// continues it, 0 after a 200 (the server sent the whole file again).
    private static func resumeOffset(
        for head: HTTPResponse,
        resuming: ResumeData,
        summary: RequestSummary
    ) throws(KiteError) -> Int64 {
        switch head.status.code {
        case 206:
            guard let range = ContentRange(head.headerFields[.contentRange] ?? ""), range.start == resuming.bytes else {
                throw KiteError(
                    code: .resumeFailed,
                    message: "the server resumed with Content-Range \"\(head.headerFields[.contentRange] ?? "")\", "
                        + "not at byte \(resuming.bytes)",
                    request: summary,
                    response: head
                )
            }
            if let expected = resuming.entityTag, let actual = head.headerFields[.eTag], expected != actual {
                throw KiteError(
                    code: .resumeFailed,
                    message: "the file changed on the server (ETag \(expected) is now \(actual)); download it again",
                    request: summary,
                    response: head
                )
            }
            return resuming.bytes
        case 416:
            throw KiteError(
                code: .resumeFailed,
                message: "the server cannot resume at byte \(resuming.bytes) (416 Range Not Satisfiable); "
                    + "the file may have changed on the server, download it again",
                request: summary,
                response: head
            )
        default:
            return 0
        }
    }

    /// A retry starts a fresh partial file; the failed attempt's is removed (a resumed download keeps the
    /// file it resumes, which the next attempt writes from the same offset).
    func prepareForRetry(of request: BaseRequest) async {
        let partial = request.machine.withLockedValue { machine -> URL? in
            let partial = machine.record.download.partialURL
            machine.record.download = DownloadRecord(
                producingResumeData: machine.record.download.producingResumeData
            )
            return partial
        }
        if let partial, partial != self.resuming?.partialFileURL {
            DownloadFiles.remove(partial)
        }
    }

    var finalizes: Bool { true }

    func finalize(_ outcome: RequestOutcome, of request: BaseRequest) async -> RequestOutcome {
        var outcome = outcome
        let state = request.machine.withLockedValue { $0.record.download }
        guard let partialURL = state.partialURL else {
            let (settled, discard) = self.settleUnstarted(outcome, producingResumeData: state.producingResumeData)
            discard.map(DownloadFiles.remove)
            return settled
        }
        if let error = outcome.error {
            outcome.fileURL = nil
            if let resume = state.resumable, state.bytesOnDisk > 0, Self.keepsBytes(after: error, state: state) {
                outcome.resumeData = resume.with(bytes: state.bytesOnDisk).encoded()
            } else {
                DownloadFiles.remove(partialURL)
            }
            return outcome
        }
        do {
            outcome.fileURL = try Self.moveIntoPlace(partialURL, placement: state.placement, summary: request.summary)
        } catch {
            DownloadFiles.remove(partialURL)
            outcome.fileURL = nil
            outcome.error = error.naming(request.summary).carrying(outcome.response)
        }
        return outcome
    }

    /// A download that ended before its response head: a resumed one still has its partial file as the resume
    /// data describes it, untouched. It keeps the file and gives the same resume data back, whatever stopped it
    /// (a refused connection, a timeout, a failed adapter, a cancel producing resume data, a cancel before it
    /// started), so a resume that fails early can be tried again; only a plain ``BaseRequest/cancel()``
    /// discards the file, as it does after the head.
    func settleUnstarted(
        _ outcome: RequestOutcome,
        producingResumeData: Bool
    ) -> (outcome: RequestOutcome, discard: URL?) {
        guard let resuming, let partial = resuming.partialFileURL, let error = outcome.error else {
            return (outcome, nil)
        }
        var outcome = outcome
        outcome.fileURL = nil
        if error.code == .cancelled && !producingResumeData {
            return (outcome, partial)
        }
        outcome.resumeData = resuming.encoded()
        return (outcome, nil)
    }

    /// Whether a failed download keeps its bytes for resuming: when cancelled to produce resume data,
    /// or when the transfer broke off (not when the response was refused by validation).
    private static func keepsBytes(after error: KiteError, state: DownloadRecord) -> Bool {
        switch error.code {
        case .cancelled: state.producingResumeData
        case .connectionLost, .timedOut: true
        default: false
        }
    }

    /// Moves the finished file to where the destination closure said when the head arrived (it is not asked
    /// again), with every check of ``DownloadFiles/move(_:to:options:summary:)``; without a destination, to a
    /// temporary URL.
    private static func moveIntoPlace(
        _ partialURL: URL,
        placement: DownloadRecord.Placement?,
        summary: RequestSummary
    ) throws(KiteError) -> URL {
        guard let placement else {
            let temporary = try DownloadFiles.makeTemporaryURL(extension: "download", summary: summary)
            try DownloadFiles.move(partialURL, to: temporary, options: [], summary: summary)
            return temporary
        }
        let target = placement.destinationURL
        try DownloadFiles.move(partialURL, to: target, options: placement.options, summary: summary)
        return target
    }
}

/// What a download remembers across the stages of an attempt and into finalize: part of the request's
/// state machine (``RequestRecord/download``).
struct DownloadRecord {
    /// Where the destination closure put the current attempt's file, and how.
    struct Placement: Equatable {
        var destinationURL: URL
        var options: DownloadRequest.Options
    }

    /// The file bytes are written to: beside the destination when there is one, else a temporary file.
    var partialURL: URL?
    /// The destination and options the destination closure gave for this attempt, asked once when the
    /// response head arrived; `nil` without a destination.
    var placement: Placement?
    /// Bytes in the partial file.
    var bytesOnDisk: Int64 = 0
    /// Whether the server's response allows resuming (validators, ranges, no content coding).
    var resumable: ResumeData?
    /// Whether a cancel should keep the partial file and produce resume data.
    var producingResumeData = false
}
