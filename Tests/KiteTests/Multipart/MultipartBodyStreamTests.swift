import Foundation
import HTTPTypes
import NIOCore
import Testing

@testable import Kite

/// `makeBodyChunks`: files that change after they were appended, stream parts of the wrong length,
/// one-shot streams, and a file far larger than memory should hold.
@Suite("Multipart body stream")
struct MultipartBodyStreamTests {
    private typealias Support = MultipartTestSupport

    /// A form of one field and one file part for `fileURL`.
    private func form(with fileURL: URL) throws -> MultipartFormData {
        var form = try MultipartFormData(boundary: "B")
        form.append(Data("x".utf8), withName: "x")
        form.append(fileURL, withName: "file")
        #expect(form.appendError == nil)
        return form
    }

    @Test func fileThatGrewAfterAppendFailsTheStream() async throws {
        try await Support.withTemporaryDirectory { directory in
            let url = try Support.makeFile("data.bin", in: directory, bytes: Support.pattern(1000))
            let form = try self.form(with: url)
            try Data(Support.pattern(1001)).write(to: url)
            let error = await Support.kiteError { try await Support.collect(form.makeBodyChunks()) }
            #expect(error?.code == .multipartEncodingFailed)
            #expect(error?.multipartFailure?.reason == .fileChanged)
            #expect(error?.multipartFailure?.fileURL == url)
            #expect(error?.message.contains(url.path) == true)
            #expect(error?.message.contains("1000") == true)
            let encodeError = await Support.kiteError { try form.encode() }
            #expect(encodeError?.multipartFailure?.reason == .fileChanged)
        }
    }

    @Test func fileThatShrankAfterAppendFailsTheStream() async throws {
        try await Support.withTemporaryDirectory { directory in
            let url = try Support.makeFile("data.bin", in: directory, bytes: Support.pattern(1000))
            let form = try self.form(with: url)
            try Data(Support.pattern(999)).write(to: url)
            let error = await Support.kiteError { try await Support.collect(form.makeBodyChunks()) }
            #expect(error?.multipartFailure?.reason == .fileChanged)
            #expect(error?.message.contains(url.path) == true)
        }
    }

    @Test func fileThatGrowsWhileItIsReadFailsTheStream() async throws {
        try await Support.withTemporaryDirectory { directory in
            let url = try Support.makeFile("data.bin", in: directory, bytes: Support.pattern(300_000))
            let form = try self.form(with: url)
            var iterator = try form.makeBodyChunks(chunkSize: 64 * 1024).makeAsyncIterator()
            var received = 0
            received += try #require(try await iterator.next()).readableBytes
            let handle = try FileHandle(forWritingTo: url)
            try handle.seekToEnd()
            try handle.write(contentsOf: Data([1, 2, 3]))
            try handle.close()
            let error = await Support.kiteError {
                while let chunk = try await iterator.next() {
                    received += chunk.readableBytes
                }
            }
            #expect(error?.multipartFailure?.reason == .fileChanged)
            #expect(error?.message.contains(url.path) == true)
            #expect(Int64(received) < form.contentLength)
            // After the error the stream ends.
            #expect(try await iterator.next() == nil)
        }
    }

    @Test func fileThatShrinksWhileItIsReadFailsTheStream() async throws {
        try await Support.withTemporaryDirectory { directory in
            let url = try Support.makeFile("data.bin", in: directory, bytes: Support.pattern(300_000))
            let form = try self.form(with: url)
            var iterator = try form.makeBodyChunks(chunkSize: 64 * 1024).makeAsyncIterator()
            _ = try await iterator.next()
            let handle = try FileHandle(forWritingTo: url)
            try handle.truncate(atOffset: 100_000)
            try handle.close()
            let error = await Support.kiteError {
                while try await iterator.next() != nil {}
            }
            #expect(error?.multipartFailure?.reason == .fileChanged)
            #expect(error?.message.contains("ended after 100000 bytes") == true)
            #expect(error?.message.contains(url.path) == true)
        }
    }

    @Test func fileRemovedAfterAppendFailsTheStream() async throws {
        try await Support.withTemporaryDirectory { directory in
            let url = try Support.makeFile("gone.txt", in: directory, bytes: Array("abc".utf8))
            let form = try self.form(with: url)
            try FileManager.default.removeItem(at: url)
            let error = await Support.kiteError { try await Support.collect(form.makeBodyChunks()) }
            #expect(error?.multipartFailure?.reason == .fileReadFailed)
            #expect(error?.message.contains(url.path) == true)
            #expect((error?.multipartFailure?.underlyingError as? POSIXError)?.code == .ENOENT)
        }
    }

    private static func chunks(
        _ pieces: [[UInt8]],
        thenThrow error: (any Error)? = nil
    ) -> AsyncThrowingStream<
        [UInt8], any Error
    > {
        AsyncThrowingStream { continuation in
            for piece in pieces {
                continuation.yield(piece)
            }
            continuation.finish(throwing: error)
        }
    }

    @Test(
        arguments: [
            ([[1, 2], [3]], 4, "only 3"),
            ([[]], 1, "only 0"),
            ([[1, 2, 3, 4, 5]], 4, "more"),
            ([[1, 2], [3, 4], [5]], 4, "more"),
            ([[1, 2, 3, 4], [], [5]], 4, "more"),
        ] as [([[UInt8]], Int64, String)]
    )
    func streamOfTheWrongLengthFailsTheStream(pieces: [[UInt8]], declared: Int64, produced: String) async throws {
        var form = try MultipartFormData(boundary: "B")
        form.append(Self.chunks(pieces), withLength: declared, name: "live")
        let error = await Support.kiteError { try await Support.collect(form.makeBodyChunks(chunkSize: 2)) }
        #expect(error?.multipartFailure?.reason == .streamLengthMismatch)
        let expected = "stream part \"live\" produced \(produced) bytes, but its declared length is \(declared)"
        #expect(error?.message == expected)
    }

    @Test func streamOfTheRightLengthWithEmptyChunksIsAccepted() async throws {
        var form = try MultipartFormData(boundary: "B")
        form.append(Self.chunks([[], [1, 2], [], [3, 4], []]), withLength: 4, name: "live")
        let body = try await Support.collect(form.makeBodyChunks(chunkSize: 3))
        #expect(Int64(body.count) == form.contentLength)
    }

    @Test func streamThatThrowsFailsTheStream() async throws {
        struct Broken: Error {}
        var form = try MultipartFormData(boundary: "B")
        form.append(Self.chunks([[1]], thenThrow: Broken()), withLength: 4, name: "live")
        let error = await Support.kiteError { try await Support.collect(form.makeBodyChunks()) }
        #expect(error?.multipartFailure?.reason == .streamFailed)
        #expect(error?.multipartFailure?.underlyingError is Broken)
        #expect(error?.message.contains("\"live\"") == true)
    }

    @Test func streamPartsAreOneShot() async throws {
        var headers = HTTPFields()
        headers[.contentDisposition] = MultipartFormData.contentDisposition(name: "live")
        var form = try MultipartFormData(boundary: "B")
        form.append(Self.chunks([[1, 2, 3]]), withLength: 3, headers: headers)
        #expect(!form.isReplayable)
        let chunks = try form.makeBodyChunks()
        let body = try await Support.collect(chunks)
        #expect(Int64(body.count) == form.contentLength)
        // Iterating the same chunks again, or asking for new ones, cannot replay the stream.
        let again = await Support.kiteError { try await Support.collect(chunks) }
        #expect(again?.multipartFailure?.reason == .streamAlreadyConsumed)
        #expect(again?.message.contains("\"live\"") == true)
        let fresh = await Support.kiteError { try form.makeBodyChunks() }
        #expect(fresh?.multipartFailure?.reason == .streamAlreadyConsumed)
        // A copy of the form shares the stream, so it cannot send it either.
        let copy = form
        let fromCopy = await Support.kiteError { try copy.makeBodyChunks() }
        #expect(fromCopy?.multipartFailure?.reason == .streamAlreadyConsumed)
    }

    @Test func formsWithoutStreamPartsAreReplayable() async throws {
        try await Support.withTemporaryDirectory { directory in
            let url = try Support.makeFile("a.txt", in: directory, bytes: Array("a".utf8))
            let form = try self.form(with: url)
            #expect(form.isReplayable)
            #expect(MultipartFormData().isReplayable)
        }
    }

    /// How many of this process's descriptors are open on `url`'s file, from `/proc/self/fd`.
    private static func openDescriptors(on url: URL) throws -> Int {
        let target = url.resolvingSymlinksInPath().path
        let descriptors = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")
        return descriptors.filter {
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")) == target
        }.count
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/self/fd")))
    func filesAreClosedAtTheEndAfterAnErrorAndWhenAbandoned() async throws {
        try await Support.withTemporaryDirectory { directory in
            let url = try Support.makeFile("data.bin", in: directory, bytes: Support.pattern(200_000))
            let form = try self.form(with: url)
            #expect(try Self.openDescriptors(on: url) == 0)

            var iterator = try form.makeBodyChunks(chunkSize: 1024).makeAsyncIterator()
            _ = try await iterator.next()
            _ = try await iterator.next()
            #expect(try Self.openDescriptors(on: url) == 1)
            iterator = try form.makeBodyChunks(chunkSize: 1024).makeAsyncIterator()
            #expect(try Self.openDescriptors(on: url) == 0, "an abandoned reader closes its file")

            _ = try await Support.collect(form.makeBodyChunks())
            #expect(try Self.openDescriptors(on: url) == 0, "a finished reader closed its file")

            _ = try await iterator.next()
            _ = try await iterator.next()
            let handle = try FileHandle(forWritingTo: url)
            try handle.truncate(atOffset: 10)
            try handle.close()
            _ = await Support.kiteError { while try await iterator.next() != nil {} }
            #expect(try Self.openDescriptors(on: url) == 0, "a failed reader closed its file")
        }
    }

    @Test func hugeSparseFileStreamsInFixedSizeChunks() async throws {
        try await Support.withTemporaryDirectory { directory in
            let size: UInt64 = 256 * 1024 * 1024
            let url = directory.appendingPathComponent("huge.bin")
            try #require(FileManager.default.createFile(atPath: url.path, contents: nil))
            let handle = try FileHandle(forWritingTo: url)
            try handle.truncate(atOffset: size)
            try handle.close()
            defer { try? FileManager.default.removeItem(at: url) }

            var form = MultipartFormData()
            form.append(Data("before".utf8), withName: "before")
            form.append(url, withName: "huge")
            form.append(Data("after".utf8), withName: "after")
            #expect(form.appendError == nil)
            #expect(form.contentLength > Int64(size))

            let chunkSize = 64 * 1024
            var total: Int64 = 0
            var largestChunk = 0
            for try await chunk in try form.makeBodyChunks(chunkSize: chunkSize) {
                total += Int64(chunk.readableBytes)
                largestChunk = max(largestChunk, chunk.readableBytes)
            }
            #expect(total == form.contentLength)
            #expect(largestChunk == chunkSize)
        }
    }
}
