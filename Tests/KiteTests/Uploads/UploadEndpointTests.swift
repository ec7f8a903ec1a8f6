import Crypto
import Foundation
import Kite
import Testing

/// Uploads checked by the in-process server's `/upload`, which parses multipart bodies with
/// vapor/multipart-kit and answers lengths and SHA-256 digests.
@Suite struct UploadEndpointTests {
    struct Receipt: Decodable, Sendable {
        struct Part: Decodable, Sendable {
            let name: String?
            let filename: String?
            let contentType: String?
            let length: Int
            let sha256: String
        }

        let kind: String
        let length: Int
        let sha256: String
        let contentLength: Int?
        let boundary: String?
        let parts: [Part]?
    }

    static func sha256(_ data: Data) -> String {
        SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
    }

    @Test func everyPartRoundTripsByteForByte() async throws {
        let binary = Data((0...255).map { UInt8($0) } + (0...255).reversed().map { UInt8($0) })
        let fileBytes = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        let file = try FileUploadTests.temporaryFile(named: "données ✓.bin", contents: fileBytes)
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        var form = MultipartFormData()
        form.append(Data("kite".utf8), withName: "name")
        form.append(binary, withName: "binary", fileName: "all-bytes.bin", mimeType: "application/octet-stream")
        form.append(Data(), withName: "empty")
        form.append(Data("ünïcödé".utf8), withName: "名前")
        form.append(file, withName: "file")
        let encoded = try form.encode()

        let receipt = try await Session.suite.upload(
            multipartFormData: form,
            to: try await Backend.inProcess.url("/upload"),
            usingThreshold: 0
        )
        .validate()
        .serializingDecodable(Receipt.self)
        .value
        #expect(receipt.kind == "multipart")
        #expect(receipt.length == Int(form.contentLength))
        #expect(receipt.contentLength == receipt.length, "the Content-Length sent equals the bytes the server read")
        #expect(receipt.sha256 == Self.sha256(encoded), "the streamed body equals the in-memory encoding")
        #expect(receipt.boundary == form.boundary)
        let parts = try #require(receipt.parts)
        #expect(parts.map(\.name) == ["name", "binary", "empty", "名前", "file"])
        #expect(parts.map(\.length) == [4, 512, 0, "ünïcödé".utf8.count, 300_000])
        #expect(parts[1].sha256 == Self.sha256(binary))
        #expect(parts[1].filename == "all-bytes.bin")
        #expect(parts[2].sha256 == Self.sha256(Data()))
        #expect(parts[4].sha256 == Self.sha256(fileBytes))
        #expect(parts[4].filename == "données ✓.bin")
        #expect(parts[4].contentType == "application/octet-stream")
    }

    @Test func rawUploadsOfEachSourceArriveWhole() async throws {
        let bytes = Data((0..<200_003).map { UInt8(truncatingIfNeeded: $0 &* 13) })
        let file = try FileUploadTests.temporaryFile(named: "raw.bin", contents: bytes)
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let url = try await Backend.inProcess.url("/upload")
        let stream = AsyncStream<Data> { continuation in
            var offset = 0
            while offset < bytes.count {
                continuation.yield(bytes[offset..<min(offset + 7_001, bytes.count)])
                offset += 7_001
            }
            continuation.finish()
        }
        let receipts = [
            try await Session.suite.upload(bytes, to: url).serializingDecodable(Receipt.self).value,
            try await Session.suite.upload(file, to: url).serializingDecodable(Receipt.self).value,
            try await Session.suite.upload(stream, length: Int64(bytes.count), to: url).serializingDecodable(
                Receipt.self
            ).value,
        ]
        for receipt in receipts {
            #expect(receipt.kind == "raw")
            #expect(receipt.length == bytes.count)
            #expect(receipt.contentLength == bytes.count)
            #expect(receipt.sha256 == Self.sha256(bytes))
        }
    }

    @Test func binaryFilePartsSurviveWerkzeugToo() async throws {
        guard Backend.available.contains(.httpbin) else { return }
        let binary = Data([0x00, 0xFF, 0x10, 0x80, 0x0D, 0x0A, 0x2D, 0x2D])
        let echo = try await Session.suite.upload(
            multipartFormData: { form in
                form.append(binary, withName: "blob", fileName: "b.bin", mimeType: "application/octet-stream")
                form.append(Data(), withName: "empty", fileName: "empty.txt", mimeType: "text/plain")
            },
            to: try await Backend.httpbin.url("/post")
        )
        .validate()
        .serializingDecodable(LooseEcho.self)
        .value
        #expect(echo.files?["blob"] == .string("data:application/octet-stream;base64,\(binary.base64EncodedString())"))
        #expect(echo.files?["empty"] == .string(""))
    }
}
