import Foundation
import Kite
import Testing

@Suite struct FileUploadTests {
    static func temporaryFile(named name: String, contents: Data) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("kite-upload-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let url = folder.appendingPathComponent(name)
        try contents.write(to: url)
        return url
    }

    @Test(arguments: Backend.available)
    func aFileIsStreamedWithItsSizeAsContentLength(backend: Backend) async throws {
        let text = String(repeating: "kite flies high ", count: 20_000)
        let file = try Self.temporaryFile(named: "big.txt", contents: Data(text.utf8))
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let request = Session.suite.upload(
            file,
            to: try await backend.url("/post"),
            headers: [.contentType: "text/plain"]
        )
        let progress = request.uploadProgress()
        let echo = try await request.validate().serializingDecodable(LooseEcho.self).value
        #expect(echo.data == text)
        #expect(echo.headers.header("Content-Length") == "\(text.utf8.count)")
        var last: TransferProgress?
        for await value in progress { last = value }
        #expect(last == TransferProgress(completedBytes: Int64(text.utf8.count), totalBytes: Int64(text.utf8.count)))
    }

    @Test func aFileIsReadAgainWhenA307NeedsTheBody() async throws {
        let file = try Self.temporaryFile(named: "again.txt", contents: Data("twice".utf8))
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let url = try await Backend.inProcess.url("/redirect-to?url=/post&status_code=307")
        let echo = try await Session.suite.upload(file, to: url, headers: [.contentType: "text/plain"])
            .validate()
            .serializingDecodable(LooseEcho.self)
            .value
        #expect(echo.data == "twice")
    }

    @Test func fileProblemsFailTheUploadNamingThePath() async throws {
        let missing = URL(fileURLWithPath: "/tmp/kite-no-such-file-\(UUID().uuidString)")
        let url = try await Backend.inProcess.url("/post")
        let error = try #require(await Session.suite.upload(missing, to: url).serializingData().response.error)
        #expect(error.code == .uploadFailed)
        #expect(error.multipartFailure?.reason == .fileUnreachable)
        #expect(
            error.message.hasPrefix(
                "cannot use \(missing.path) as the upload body: it does not exist or cannot be reached"
            )
        )

        let folder = FileManager.default.temporaryDirectory
        let directory = try #require(await Session.suite.upload(folder, to: url).serializingData().response.error)
        #expect(directory.multipartFailure?.reason == .fileIsDirectory)
        #expect(directory.message.contains("it is a directory, not a file"))

        let webURL = try #require(URL(string: "https://example.com/x"))
        let web = try #require(await Session.suite.upload(webURL, to: url).serializingData().response.error)
        #expect(web.multipartFailure?.reason == .notFileURL)
    }
}

@Suite struct MultipartUploadTests {
    @Test(arguments: Backend.available)
    func formsRoundTripThroughTheServersParser(backend: Backend) async throws {
        let file = try FileUploadTests.temporaryFile(named: "report.txt", contents: Data("hello file\n".utf8))
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        var form = MultipartFormData()
        form.append(Data("kite".utf8), withName: "name")
        form.append(Data("Zoë ✓".utf8), withName: "greeting")
        form.append(file, withName: "doc")
        form.append(Data("a,b\n1,2\n".utf8), withName: "table", fileName: "data.csv", mimeType: "text/csv")
        let expectedLength = form.contentLength

        let response = await Session.suite.upload(multipartFormData: form, to: try await backend.url("/post"))
            .validate()
            .serializingDecodable(LooseEcho.self)
            .response
        let echo = try #require(response.value)
        #expect(echo.form?["name"] == .string("kite"))
        #expect(echo.form?["greeting"] == .string("Zoë ✓"))
        #expect(echo.files?["doc"] == .string("hello file\n"))
        #expect(echo.files?["table"] == .string("a,b\n1,2\n"))
        #expect(echo.headers.header("Content-Length") == "\(expectedLength)")
        #expect(echo.headers.header("Content-Type") == form.contentType)
        #expect(response.metrics?.bytesSent == expectedLength)
    }

    @Test(arguments: Backend.available, [UInt64(0), MultipartFormData.encodingMemoryThreshold])
    func streamedAndInMemoryFormsSendTheSameBytes(backend: Backend, threshold: UInt64) async throws {
        let echo = try await Session.suite.upload(
            multipartFormData: { form in
                form.append(Data("one".utf8), withName: "first")
                form.append(
                    Data(repeating: UInt8(ascii: "x"), count: 200_000),
                    withName: "bulk",
                    fileName: "x.txt",
                    mimeType: "text/plain"
                )
            },
            to: try await backend.url("/post"),
            usingThreshold: threshold
        )
        .validate()
        .serializingDecodable(LooseEcho.self)
        .value
        #expect(echo.form?["first"] == .string("one"))
        #expect(echo.files?["bulk"]?.stringValue?.count == 200_000)
    }

    @Test func aFormWhoseFileFailedItsChecksIsNotSent() async throws {
        var form = MultipartFormData()
        form.append(URL(fileURLWithPath: "/nonexistent/kite.bin"), withName: "blob")
        let error = try #require(
            await Session.suite.upload(multipartFormData: form, to: try await Backend.inProcess.url("/post"))
                .serializingData().response.error
        )
        #expect(error.code == .multipartEncodingFailed)
        #expect(error.multipartFailure?.reason == .fileUnreachable)
        #expect(error.request != nil, "the error names the request")
    }

    @Test func aFormWithAStreamPartIsNotSentTwice() async throws {
        let stream = AsyncStream<Data> { continuation in
            continuation.yield(Data("once".utf8))
            continuation.finish()
        }
        var form = MultipartFormData()
        form.append(stream, withLength: 4, name: "live")
        let url = try await Backend.inProcess.url("/redirect-to?url=/post&status_code=307")
        let error = try #require(
            await Session.suite.upload(multipartFormData: form, to: url).serializingData().response.error
        )
        #expect(error.code == .bodyNotReplayable)
    }
}
