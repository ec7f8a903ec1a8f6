import Foundation
import Kite
import Testing

/// Behaviour the documentation promises that had no test of its own.
@Suite struct DocumentedBehaviourTests {
    // MARK: The response size limit

    @Test func aBodyAnnouncedLargerThanTheLimitFailsBeforeItIsRead() async throws {
        try await FaultInjectionTests.withSession(.with { $0.maximumResponseSize = 1_000_000 }) { session in
            let url = try await FaultServer.url("/huge-body?size=2000000")
            let response = await session.request(url).serializingData().response
            let error = try #require(response.error)
            #expect(error.code == .responseTooLarge)
            #expect(error.message.contains("Content-Length 2000000"), "\(error.message)")
            #expect((response.metrics?.bytesReceived ?? .max) < 1_000_000)
        }
    }

    @Test func aBodyWithoutALengthFailsOnceItPassesTheLimit() async throws {
        try await FaultInjectionTests.withSession(.with { $0.maximumResponseSize = 1_000_000 }) { session in
            let url = try await FaultServer.url("/http10?size=3000000")
            let error = try #require(await session.request(url).serializingData().response.error)
            #expect(error.code == .responseTooLarge)
            #expect(error.message.contains("bytes arrived"), "\(error.message)")
        }
    }

    @Test func aRequestsOwnLimitOverridesTheSessions() async throws {
        let url = try await FaultServer.url("/huge-body?size=200000")
        let error = try #require(
            await Session.suite.request(url).limitResponseSize(to: 100_000).serializingData().response.error
        )
        #expect(error.code == .responseTooLarge)
    }

    @Test func aStreamHasNoSizeLimitUnlessItAsksForOne() async throws {
        try await FaultInjectionTests.withSession(.with { $0.maximumResponseSize = 1_000 }) { session in
            let url = try await FaultServer.url("/huge-body?size=200000")
            var received = 0
            for try await chunk in session.streamRequest(url).streamingData() { received += chunk.count }
            #expect(received == 200_000)
        }
    }

    /// The bytes a stream of `path` (on the fault server) limited to 100,000 bytes delivered, and how it failed.
    private func streamLimited(_ path: String) async throws -> (received: Int, error: KiteError?) {
        let url = try await FaultServer.url(path)
        var received = 0
        let error = await #expect(throws: KiteError.self) {
            for try await chunk in Session.suite.streamRequest(url).limitResponseSize(to: 100_000).streamingData() {
                received += chunk.count
            }
        }
        #expect(error?.code == .responseTooLarge)
        return (received, error)
    }

    @Test func aStreamsLimitRefusesAnAnnouncedBodyBeforeAnyOfIt() async throws {
        let (received, error) = try await self.streamLimited("/huge-body?size=200000")
        let message = error?.message ?? ""
        #expect(message.contains("limit of 100000 bytes (Content-Length 200000)"), "\(message)")
        #expect(received == 0)
    }

    @Test func aStreamGrowingPastItsLimitFailsAfterTheBytesBefore() async throws {
        let (received, error) = try await self.streamLimited("/http10?size=300000")
        #expect(error?.message.contains("bytes arrived") == true, "\(String(describing: error))")
        #expect(received > 0)
        #expect(received <= 100_000)
    }

    // MARK: Downloads

    @Test func aDownloadThatTimesOutMidBodyResumesToAnIdenticalFile() async throws {
        let folder = try DownloadTests.makeFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let target = folder.appendingPathComponent("timed-out.bin")
        // 30 kB of 100 kB, then silence; the idle-read timeout is 0.5 s.
        let url = try await FaultServer.url("/close-after?bytes=30000&length=100000&mode=stall&max_s=10")
        try await FaultInjectionTests.withSession(.with { $0.timeouts.idleRead = .milliseconds(500) }) { session in
            let timedOut = await session.download(url, to: DownloadTests.destination(target))
                .serializingDownloadedFileURL()
                .response
            #expect(timedOut.error?.code == .timedOut)
            #expect(timedOut.error?.timeout == .idleRead)
            let resumeData = try #require(timedOut.resumeData)
            let resumed = await Session.suite.download(
                resumingWith: resumeData,
                to: DownloadTests.destination(target)
            )
            .validate()
            .serializingDownloadedFileURL()
            .response
            #expect(resumed.error == nil, "\(String(describing: resumed.error))")
            #expect(try Data(contentsOf: target) == FaultInjectionTests.deterministicBody(100_000))
        }
    }

    /// README's and the Downloads article's resume example, as written there (the server's address aside):
    /// cancelled after its first bytes, it has resume data, and resuming it gives the whole file. (The example
    /// once cancelled before anything started the download, so it never had anything to resume.)
    @Test func theResumeExampleResumes() async throws {
        let folder = try DownloadTests.makeFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let session = Session.default
        let download = session.download(
            try await Backend.inProcess.url("/range/1048576?duration=2"),
            to: DownloadRequest.suggestedDownloadDestination(in: folder)
        )
        let task = download.serializingDownloadedFileURL()  // attaching a handler starts the download
        for await progress in download.downloadProgress() where progress.completedBytes > 0 {
            download.cancel(producingResumeData: true)  // after the first bytes: there is something to resume
            break
        }
        let resumeData = try #require(await task.response.resumeData)
        let fileURL = try await session.download(resumingWith: resumeData).serializingDownloadedFileURL().value
        defer { try? FileManager.default.removeItem(at: fileURL) }
        #expect(try Data(contentsOf: fileURL) == DownloadTests.rangeBody(1_048_576))
    }

    @Test func cancelByProducingResumeDataHandsTheTokenToTheClosure() async throws {
        let folder = try DownloadTests.makeFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let target = folder.appendingPathComponent("closure.bin")
        let url = try await Backend.inProcess.url("/range/100000?duration=10&chunk_size=10000")
        let request = Session.suite.download(url, to: DownloadTests.destination(target))
        let progress = request.downloadProgress()
        let task = request.serializingDownloadedFileURL()
        for await value in progress where value.completedBytes > 0 { break }
        let resumeData: Data? = await withCheckedContinuation { continuation in
            request.cancel { continuation.resume(returning: $0) }
        }
        #expect(await task.response.error?.code == .cancelled)
        let token = try #require(resumeData)
        let resumed = await Session.suite.download(resumingWith: token, to: DownloadTests.destination(target))
            .validate()
            .serializingDownloadedFileURL()
            .response
        #expect(resumed.error == nil, "\(String(describing: resumed.error))")
        #expect(resumed.response?.status.code == 206)
        #expect(try Data(contentsOf: target) == DownloadTests.rangeBody(100_000))
    }

    @Test func theSuggestedDestinationInAStandardFolderUsesTheServersName() async throws {
        let name = "kite-suggested-\(UUID().uuidString).txt"
        let disposition = "attachment; filename=\"\(name)\""
        let query = try #require(disposition.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
        let url = try await Backend.inProcess.url("/response-headers?Content-Disposition=\(query)")
        let fileURL = try await Session.suite.download(
            url,
            to: DownloadRequest.suggestedDownloadDestination(for: .cachesDirectory)
        )
        .serializingDownloadedFileURL()
        .value
        defer { try? FileManager.default.removeItem(at: fileURL) }
        let folder = try #require(FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask).first)
        #expect(fileURL.standardizedFileURL == folder.appendingPathComponent(name).standardizedFileURL)
        #expect(FileManager.default.fileExists(atPath: fileURL.path))
    }

    @Test func theSessionsDownloadRateSlowsTheBody() async throws {
        try await FaultInjectionTests.withSession(.with { $0.maximumDownloadRate = 512 * 1024 }) { session in
            let url = try await Backend.inProcess.url("/bytes/262144")
            let started = ContinuousClock.now
            let response = await session.request(url).serializingData().response
            let elapsed = started.duration(to: .now)
            #expect(response.data?.count == 262_144)
            // 256 KiB at 512 KiB/s, less the bucket's first 51 KiB: at least ~0.39 s.
            #expect(elapsed >= .milliseconds(350), "took \(elapsed)")
        }
    }

    // MARK: Property lists

    struct Settings: Codable, Sendable, Equatable {
        let name: String
        let retries: Int
    }

    static func plistURL() async throws -> String {
        let encoder = PropertyListEncoder()
        encoder.outputFormat = .xml
        let plist = try encoder.encode(Settings(name: "kite", retries: 3))
        let value = plist.base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
        return try await Backend.inProcess.url("/base64/\(value)")
    }

    @Test func serializingPropertyListDecodesAPlist() async throws {
        let settings = try await Session.suite.request(try await Self.plistURL())
            .serializingPropertyList(Settings.self)
            .value
        #expect(settings == Settings(name: "kite", retries: 3))
    }

    @Test func responsePropertyListDeliversToTheClosure() async throws {
        let url = try await Self.plistURL()
        let response: DataResponse<Settings, KiteError> = await withCheckedContinuation { continuation in
            Session.suite.request(url).responsePropertyList(of: Settings.self) { continuation.resume(returning: $0) }
        }
        #expect(response.value == Settings(name: "kite", retries: 3))
    }

    @Test func aBodyThatIsNotAPlistIsASerializationError() async throws {
        let url = try await Backend.inProcess.url("/bytes/16")
        let error = try #require(
            await Session.suite.request(url).serializingPropertyList(Settings.self).response.error
        )
        #expect(error.code == .responseSerializationFailed)
    }
}
