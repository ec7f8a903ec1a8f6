import Foundation
import Testing

@testable import Kite

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// File parts are checked when appended; the first failure is recorded and thrown when the form is
/// encoded, written or streamed. Each reason has its own test, and every message names the file.
@Suite("Multipart file checks")
struct MultipartFileCheckTests {
    private typealias Support = MultipartTestSupport

    /// Appends `url` to a fresh form and checks the recorded failure, and that every way of encoding
    /// throws it.
    private func expectAppendFailure(
        _ url: URL,
        _ reason: MultipartFormData.Failure.Reason,
        naming text: String,
        fileName: String? = nil,
        mimeType: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        var form = try MultipartFormData(boundary: "B")
        form.append(url, withName: "file", fileName: fileName, mimeType: mimeType)
        let error = try #require(form.appendError, sourceLocation: sourceLocation)
        #expect(error.code == .multipartEncodingFailed, sourceLocation: sourceLocation)
        #expect(error.multipartFailure?.reason == reason, sourceLocation: sourceLocation)
        #expect(error.multipartFailure?.fileURL == url, sourceLocation: sourceLocation)
        #expect(error.message.contains(text), "\(error.message)", sourceLocation: sourceLocation)
        #expect(error.message.contains("\"file\""), "names the part: \(error.message)", sourceLocation: sourceLocation)
        // The part is left out, and encoding throws the recorded error.
        #expect(form.contentLength == 7, sourceLocation: sourceLocation)
        let encodeError = await Support.kiteError { try form.encode() }
        #expect(encodeError?.multipartFailure?.reason == reason, sourceLocation: sourceLocation)
        let chunksError = await Support.kiteError { try form.makeBodyChunks() }
        #expect(chunksError?.multipartFailure?.reason == reason, sourceLocation: sourceLocation)
    }

    @Test func urlThatIsNotAFileURLIsRecorded() async throws {
        let url = try #require(URL(string: "https://example.com/photo.png"))
        try await self.expectAppendFailure(url, .notFileURL, naming: "https://example.com/photo.png")
    }

    @Test func missingFileIsRecorded() async throws {
        try await Support.withTemporaryDirectory { directory in
            let url = directory.appendingPathComponent("missing.png")
            try await self.expectAppendFailure(url, .fileUnreachable, naming: url.path)
        }
    }

    @Test func fileInAMissingFolderIsRecordedAsUnreachable() async throws {
        try await Support.withTemporaryDirectory { directory in
            let url = directory.appendingPathComponent("no-folder/file.txt")
            try await self.expectAppendFailure(url, .fileUnreachable, naming: url.path)
        }
    }

    @Test func directoryIsRecorded() async throws {
        try await Support.withTemporaryDirectory { directory in
            let folder = directory.appendingPathComponent("folder.zip", isDirectory: true)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
            try await self.expectAppendFailure(folder, .fileIsDirectory, naming: folder.path)
        }
    }

    @Test func fifoWhoseSizeCannotBeKnownIsRecorded() async throws {
        try await Support.withTemporaryDirectory { directory in
            let url = directory.appendingPathComponent("pipe.bin")
            try #require(mkfifo(url.path, 0o600) == 0)
            try await self.expectAppendFailure(url, .fileSizeUnavailable, naming: url.path)
        }
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/dev/zero")))
    func deviceWhoseSizeCannotBeKnownIsRecorded() async throws {
        // Reading /dev/zero never ends; its size from stat (0) says nothing about what it would produce.
        try await self.expectAppendFailure(URL(fileURLWithPath: "/dev/zero"), .fileSizeUnavailable, naming: "/dev/zero")
    }

    // Root opens files whatever their mode bits, so a mode-000 file only fails to open for other users;
    // the test below this one covers root.
    @Test(.enabled(if: geteuid() != 0, "root can open a file of mode 000"))
    func unreadableFileIsRecorded() async throws {
        try await Support.withTemporaryDirectory { directory in
            let url = try Support.makeFile("secret.txt", in: directory, bytes: Array("s".utf8))
            try FileManager.default.setAttributes([.posixPermissions: 0], ofItemAtPath: url.path)
            try await self.expectAppendFailure(url, .fileCannotBeOpened, naming: url.path)
        }
    }

    // /proc/sys/vm/drop_caches is a write-only (mode 0200) regular file, and procfs checks the mode bits
    // even for root, so opening it for reading fails for every user: a file that cannot be opened even
    // when the tests run as root.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/sys/vm/drop_caches")))
    func writeOnlyFileIsRecordedEvenForRoot() async throws {
        let url = URL(fileURLWithPath: "/proc/sys/vm/drop_caches")
        try await self.expectAppendFailure(url, .fileCannotBeOpened, naming: url.path)
    }

    @Test func fileWithoutExtensionIsRecordedWhenTheMIMETypeMustBeInferred() async throws {
        try await Support.withTemporaryDirectory { directory in
            let url = try Support.makeFile("README", in: directory, bytes: Array("read me".utf8))
            try await self.expectAppendFailure(url, .fileNameNotInferable, naming: url.path)
            try await self.expectAppendFailure(url, .fileNameNotInferable, naming: "\"notes\"", fileName: "notes")
            let hidden = try Support.makeFile(".profile", in: directory, bytes: [])
            try await self.expectAppendFailure(hidden, .fileNameNotInferable, naming: hidden.path)
        }
    }

    @Test func fileWithoutExtensionIsAcceptedWhenNothingMustBeInferred() async throws {
        try await Support.withTemporaryDirectory { directory in
            let url = try Support.makeFile("README", in: directory, bytes: Array("read me".utf8))
            var form = try MultipartFormData(boundary: "B")
            form.append(url, withName: "a", mimeType: "text/plain")
            form.append(url, withName: "b", fileName: "readme.md")
            #expect(form.appendError == nil)
            let text = String(decoding: try form.encode(), as: UTF8.self)
            #expect(text.contains("name=\"a\"; filename=\"README\"\r\nContent-Type: text/plain\r\n"))
            #expect(text.contains("name=\"b\"; filename=\"readme.md\"\r\nContent-Type: text/markdown\r\n"))
        }
    }

    @Test func firstFailureIsKeptAndLaterPartsAreStillAppended() async throws {
        try await Support.withTemporaryDirectory { directory in
            let missing = directory.appendingPathComponent("missing.txt")
            var form = try MultipartFormData(boundary: "B")
            form.append(Data("1".utf8), withName: "before")
            form.append(missing, withName: "missing")
            form.append(directory, withName: "folder")
            form.append(Data("2".utf8), withName: "after")
            let error = try #require(form.appendError)
            #expect(error.multipartFailure?.reason == .fileUnreachable)
            #expect(error.message.contains(missing.path))
            // contentLength counts the two parts that were appended.
            var valid = try MultipartFormData(boundary: "B")
            valid.append(Data("1".utf8), withName: "before")
            valid.append(Data("2".utf8), withName: "after")
            #expect(form.contentLength == valid.contentLength)
            // Writing throws the recorded error before creating the destination.
            let destination = directory.appendingPathComponent("out")
            let writeError = await Support.kiteError { try form.writeEncodedData(to: destination) }
            #expect(writeError?.multipartFailure?.reason == .fileUnreachable)
            #expect(!FileManager.default.fileExists(atPath: destination.path))
        }
    }

    @Test func fileIsCheckedThroughSymbolicLinks() async throws {
        try await Support.withTemporaryDirectory { directory in
            let target = try Support.makeFile("target.txt", in: directory, bytes: Array("abc".utf8))
            let link = directory.appendingPathComponent("link.json")
            try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
            var form = try MultipartFormData(boundary: "B")
            form.append(link, withName: "f")
            #expect(form.appendError == nil)
            let text = String(decoding: try form.encode(), as: UTF8.self)
            #expect(text.contains("filename=\"link.json\"\r\nContent-Type: application/json\r\n\r\nabc\r\n"))
        }
    }

    @Test func negativeStreamLengthIsRecorded() throws {
        let stream = AsyncStream<Data> { $0.finish() }
        var form = try MultipartFormData(boundary: "B")
        form.append(stream, withLength: -1, name: "s")
        let error = try #require(form.appendError)
        #expect(error.multipartFailure?.reason == .streamLengthInvalid)
        #expect(error.message.contains("\"s\""))
        #expect(form.contentLength == 7)
    }

    @Test func partsThatWouldOverflowTheLengthAreRecorded() throws {
        let empty = AsyncStream<Data> { $0.finish() }
        var form = try MultipartFormData(boundary: "B")
        form.append(empty, withLength: Int64.max / 2, name: "first")
        #expect(form.appendError == nil)
        let lengthWithFirst = form.contentLength
        form.append(empty, withLength: Int64.max / 2, name: "second")
        form.append(empty, withLength: Int64.max, name: "third")
        let error = try #require(form.appendError)
        #expect(error.multipartFailure?.reason == .formTooLarge)
        #expect(error.message.contains("\"second\""))
        #expect(form.contentLength == lengthWithFirst)
    }

    // MARK: - writeEncodedData failures

    @Test func writingToAnExistingFileFails() async throws {
        try await Support.withTemporaryDirectory { directory in
            let existing = try Support.makeFile("existing.bin", in: directory, bytes: Array("keep".utf8))
            var form = MultipartFormData()
            form.append(Data("x".utf8), withName: "x")
            let error = await Support.kiteError { try form.writeEncodedData(to: existing) }
            #expect(error?.code == .multipartEncodingFailed)
            #expect(error?.multipartFailure?.reason == .destinationExists)
            #expect(error?.multipartFailure?.fileURL == existing)
            #expect(error?.message.contains(existing.path) == true)
            #expect(try Data(contentsOf: existing) == Data("keep".utf8))
        }
    }

    @Test func writingToANonFileURLFails() async throws {
        let url = try #require(URL(string: "https://example.com/body"))
        let form = MultipartFormData()
        let error = await Support.kiteError { try form.writeEncodedData(to: url) }
        #expect(error?.multipartFailure?.reason == .destinationNotFileURL)
        #expect(error?.message.contains("https://example.com/body") == true)
    }

    @Test func writingIntoAMissingFolderFails() async throws {
        try await Support.withTemporaryDirectory { directory in
            let destination = directory.appendingPathComponent("missing/body")
            let form = MultipartFormData()
            let error = await Support.kiteError { try form.writeEncodedData(to: destination) }
            #expect(error?.multipartFailure?.reason == .destinationNotCreatable)
            #expect(error?.message.contains(destination.path) == true)
            #expect(error?.multipartFailure?.underlyingError is POSIXError)
        }
    }

    // A full disk cannot be arranged in a test, so this writes to /dev/full, whose writes fail with
    // ENOSPC, through the same internal function writeEncodedData(to:) writes its new file with.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/dev/full")))
    func writeFailureIsReported() async throws {
        let full = URL(fileURLWithPath: "/dev/full")
        let descriptor = open(full.path, O_WRONLY | O_CLOEXEC)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        var form = MultipartFormData()
        form.append(Data("x".utf8), withName: "x")
        let error = await Support.kiteError { try form.writeEncodedData(toDescriptor: descriptor, destination: full) }
        #expect(error?.multipartFailure?.reason == .destinationWriteFailed)
        #expect(error?.multipartFailure?.fileURL == full)
        #expect(error?.message.contains("/dev/full") == true)
        #expect((error?.multipartFailure?.underlyingError as? POSIXError)?.code == .ENOSPC)
    }

    @Test func failedWriteRemovesThePartlyWrittenFile() async throws {
        try await Support.withTemporaryDirectory { directory in
            let source = try Support.makeFile("source.bin", in: directory, bytes: Support.pattern(100_000))
            var form = MultipartFormData()
            form.append(Data("x".utf8), withName: "x")
            form.append(source, withName: "file")
            // The file shrinks after it was appended, so the encoded form cannot be completed.
            try Data(Support.pattern(10)).write(to: source)
            let destination = directory.appendingPathComponent("body")
            let error = await Support.kiteError { try form.writeEncodedData(to: destination) }
            #expect(error?.multipartFailure?.reason == .fileChanged)
            #expect(error?.message.contains(source.path) == true)
            #expect(!FileManager.default.fileExists(atPath: destination.path))
        }
    }

    @Test func formsWithStreamPartsCannotBeEncodedOrWritten() async throws {
        try await Support.withTemporaryDirectory { directory in
            let stream = AsyncStream<Data> { continuation in
                continuation.yield(Data("abc".utf8))
                continuation.finish()
            }
            var form = MultipartFormData()
            form.append(stream, withLength: 3, name: "live")
            let encodeError = await Support.kiteError { try form.encode() }
            #expect(encodeError?.multipartFailure?.reason == .streamPartsNotEncodable)
            #expect(encodeError?.message.contains("\"live\"") == true)
            let destination = directory.appendingPathComponent("body")
            let writeError = await Support.kiteError { try form.writeEncodedData(to: destination) }
            #expect(writeError?.multipartFailure?.reason == .streamPartsNotEncodable)
            #expect(!FileManager.default.fileExists(atPath: destination.path))
            // The stream was not consumed: the form can still be sent once.
            let body = try await Support.collect(form.makeBodyChunks())
            #expect(Int64(body.count) == form.contentLength)
        }
    }
}
