import Foundation
import MultipartKit
import NIOCore
import Testing

@testable import Kite

/// Forms encoded by Kite and parsed back by a real parser, vapor/multipart-kit; and the lengths the three
/// ways of encoding give.
@Suite("Multipart round trip")
struct MultipartRoundTripTests {
    private typealias Support = MultipartTestSupport

    private struct Upload: Decodable {
        var title: String
        var name: String
        var count: Int
        var empty: String
        var binary: Data
        var document: Data

        enum CodingKeys: String, CodingKey {
            case title
            case name = "名前"
            case count
            case empty
            case binary
            case document
        }
    }

    @Test func formDataDecoderReadsEveryField() async throws {
        try await Support.withTemporaryDirectory { directory in
            let fileBytes = Support.pattern(40_000, seed: 3)
            let fileURL = try Support.makeFile("document.pdf", in: directory, bytes: fileBytes)
            let binary = Data((0...255).map { UInt8($0) } + Array("\r\n--".utf8))
            var form = MultipartFormData()
            form.append(Data("Kite ✈︎ upload".utf8), withName: "title")
            form.append(Data("値".utf8), withName: "名前")
            form.append(Data("42".utf8), withName: "count")
            form.append(Data(), withName: "empty")
            form.append(binary, withName: "binary", fileName: "bin.dat", mimeType: "application/octet-stream")
            form.append(fileURL, withName: "document")
            #expect(form.appendError == nil)

            let body = try form.encode()
            let upload = try FormDataDecoder().decode(Upload.self, from: Array(body), boundary: form.boundary)
            #expect(upload.title == "Kite ✈︎ upload")
            #expect(upload.name == "値")
            #expect(upload.count == 42)
            #expect(upload.empty == "")
            #expect(upload.binary == binary)
            #expect(Array(upload.document) == fileBytes)
            let document = try #require(Support.parse(Array(body), boundary: form.boundary).last)
            #expect(document.header("Content-Type") == "application/pdf")
            #expect(document.header("Content-Disposition") == "form-data; name=\"document\"; filename=\"document.pdf\"")
        }
    }

    @Test func streamingParserReadsEveryPartByteForByte() async throws {
        try await Support.withTemporaryDirectory { directory in
            let empty = try Support.makeFile("empty.txt", in: directory, bytes: [])
            let large = Support.pattern(64 * 1024 + 1, seed: 9)
            let largeURL = try Support.makeFile("large.bin", in: directory, bytes: large)
            let streamed = Support.pattern(5000, seed: 1)
            let stream = AsyncStream<[UInt8]> { continuation in
                var offset = 0
                while offset < streamed.count {
                    continuation.yield(Array(streamed[offset..<min(streamed.count, offset + 777)]))
                    offset += 777
                }
                continuation.finish()
            }
            var form = MultipartFormData()
            form.append(Data("ünïcødé".utf8), withName: "ключ", fileName: "файл.txt", mimeType: "text/plain")
            form.append(empty, withName: "empty")
            form.append(largeURL, withName: "large")
            form.append(stream, withLength: Int64(streamed.count), name: "stream")
            #expect(form.appendError == nil)

            let body = try await Support.collect(form.makeBodyChunks(chunkSize: 1000))
            #expect(Int64(body.count) == form.contentLength)
            for feedSize in [13, 65_536] {
                let parts = try Support.parse(body, boundary: form.boundary, feedSize: feedSize)
                try #require(parts.count == 4)
                #expect(parts.map(\.name) == ["ключ", "empty", "large", "stream"])
                #expect(parts[0].body == Array("ünïcødé".utf8))
                #expect(
                    parts[0].header("Content-Disposition") == "form-data; name=\"ключ\"; filename=\"файл.txt\""
                )
                #expect(parts[1].body.isEmpty)
                #expect(parts[1].header("Content-Type") == "text/plain")
                #expect(parts[2].body == large)
                #expect(parts[2].header("Content-Type") == "application/octet-stream")
                #expect(parts[3].body == streamed)
            }
        }
    }

    /// The sizes of the files in the length matrix: empty, one byte, around the 64 KiB chunk size, and
    /// more than a mebibyte.
    static let fileSizes = [0, 1, 64 * 1024 - 1, 64 * 1024, 64 * 1024 + 1, 1024 * 1024 + 7]

    @Test(arguments: fileSizes)
    func contentLengthMatchesEncodeAndBodyChunks(fileSize: Int) async throws {
        try await Support.withTemporaryDirectory { directory in
            let bytes = Support.pattern(fileSize, seed: UInt8(fileSize % 251))
            let fileURL = try Support.makeFile("file-\(fileSize).bin", in: directory, bytes: bytes)
            let forms: [(String, MultipartFormData)] = try [
                (
                    "file alone",
                    { () throws(KiteError) in
                        var form = try MultipartFormData(boundary: "B")
                        form.append(fileURL, withName: "file")
                        return form
                    }()
                ),
                (
                    "file among fields",
                    {
                        var form = MultipartFormData()
                        form.append(Data("before".utf8), withName: "before")
                        form.append(fileURL, withName: "file", fileName: "ünï.bin", mimeType: "application/x-test")
                        form.append(Data(), withName: "empty")
                        form.append(Data("after".utf8), withName: "after")
                        return form
                    }()
                ),
            ]
            for (description, form) in forms {
                #expect(form.appendError == nil)
                let encoded = try form.encode()
                #expect(Int64(encoded.count) == form.contentLength, "\(description)")
                for chunkSize in [1000, 64 * 1024] where fileSize < 100_000 || chunkSize == 64 * 1024 {
                    let chunks = try form.makeBodyChunks(chunkSize: chunkSize)
                    let streamed = try await Support.collect(chunks)
                    #expect(Data(streamed) == encoded, "\(description), chunk size \(chunkSize)")
                    let sizes = try await Support.chunkSizes(chunks)
                    #expect(sizes.dropLast().allSatisfy { $0 == chunkSize }, "\(description): full chunks")
                    #expect(sizes.reduce(0, +) == encoded.count)
                }
                if fileSize <= 64 * 1024 + 1 {
                    let parts = try Support.parse(Array(encoded), boundary: form.boundary, feedSize: 65_536)
                    #expect(parts.first { $0.name == "file" }?.body == bytes, "\(description)")
                }
            }
        }
    }

    @Test func bodyChunksCanBeReadAgainAndRereadTheFiles() async throws {
        try await Support.withTemporaryDirectory { directory in
            let fileURL = try Support.makeFile("a.txt", in: directory, bytes: Array("first".utf8))
            var form = try MultipartFormData(boundary: "B")
            form.append(fileURL, withName: "a")
            #expect(form.isReplayable)
            let chunks = try form.makeBodyChunks()
            let first = try await Support.collect(chunks)
            let second = try await Support.collect(chunks)
            let third = try await Support.collect(form.makeBodyChunks())
            #expect(first == second)
            #expect(first == third)
            #expect(String(decoding: first, as: UTF8.self).contains("\r\n\r\nfirst\r\n--B--"))
        }
    }

    @Test func writeEncodedDataWritesTheEncodedBytes() async throws {
        try await Support.withTemporaryDirectory { directory in
            let bytes = Support.pattern(200_000, seed: 5)
            let fileURL = try Support.makeFile("in.bin", in: directory, bytes: bytes)
            var form = MultipartFormData()
            form.append(Data("x".utf8), withName: "x")
            form.append(fileURL, withName: "file")
            let destination = directory.appendingPathComponent("body.multipart")
            try form.writeEncodedData(to: destination)
            let written = try Data(contentsOf: destination)
            #expect(written == (try form.encode()))
            #expect(Int64(written.count) == form.contentLength)
            let attributes = try FileManager.default.attributesOfItem(atPath: destination.path)
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o644)
        }
    }

    @Test func copiesOfAFormAreIndependent() throws {
        var form = try MultipartFormData(boundary: "B")
        form.append(Data("1".utf8), withName: "a")
        var copy = form
        copy.append(Data("2".utf8), withName: "b")
        #expect(form.contentLength < copy.contentLength)
        #expect(try form.encode() != copy.encode())
    }
}
