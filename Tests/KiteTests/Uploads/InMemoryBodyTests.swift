import Foundation
import Kite
import NIOConcurrencyHelpers
import Testing

/// A request whose body is encoded in memory (`parameters:` with a body encoding) is sent like any upload:
/// rate limits, suspension and progress apply to it.
@Suite struct InMemoryBodyTests {
    /// A JSON body of `size` bytes at least: one string parameter.
    private static func parameters(size: Int) -> [String: any Sendable] {
        ["blob": String(repeating: "k", count: size)]
    }

    @Test func aJSONBodyHonoursTheUploadRateLimitAndReportsProgressInSteps() async throws {
        let url = try await Backend.inProcess.url("/post")
        let steps = NIOLockedValueBox<[TransferProgress]>([])
        let started = ContinuousClock.now
        let response = await Session.suite.request(
            url,
            method: .post,
            parameters: Self.parameters(size: 256 * 1024),
            encoding: JSONEncoding.default
        )
        .limitUploadRate(to: 64 * 1024)
        .uploadProgress(queue: .global()) { progress in steps.withLockedValue { $0.append(progress) } }
        .validate()
        .serializingDecodable(LooseEcho.self)
        .response
        let elapsed = started.duration(to: .now)
        let echo = try response.result.get()
        let sent = try #require(echo.headers.header("Content-Length").flatMap { Int($0) })
        #expect(sent > 256 * 1024)
        #expect(echo.data?.utf8.count == sent, "the server got the whole body")
        // More than 256 KiB at 64 KiB/s, less the bucket's first 6.4 KiB: at least ~3.9 s.
        #expect(elapsed >= .seconds(3), "took \(elapsed)")
        let reported = steps.withLockedValue { $0 }
        #expect(reported.count >= 4, "progress in steps, not once: \(reported.map(\.completedBytes))")
        #expect(reported.map(\.completedBytes) == reported.map(\.completedBytes).sorted())
        #expect(reported.last?.completedBytes == Int64(sent))
        #expect(reported.allSatisfy { $0.totalBytes == Int64(sent) })
    }

    @Test func aSuspendedRequestStopsSendingItsBodyInMemory() async throws {
        let url = try await Backend.inProcess.url("/post")
        let request = Session.suite.request(
            url,
            method: .post,
            parameters: Self.parameters(size: 1024 * 1024),
            encoding: JSONEncoding.default
        )
        .limitUploadRate(to: 512 * 1024)
        let steps = NIOLockedValueBox<[TransferProgress]>([])
        let progress = request.uploadProgress()
        request.uploadProgress(queue: .global()) { progress in steps.withLockedValue { $0.append(progress) } }
        let task = request.serializingData()
        var iterator = progress.makeAsyncIterator()
        let first = try #require(await iterator.next())
        request.suspend()
        // A suspended request sends nothing more than the slice already handed over (64 KiB).
        try await Task.sleep(for: .milliseconds(500))
        #expect(request.state == .suspended)
        #expect(request.metrics == nil)
        let latest = try #require(steps.withLockedValue { $0.last })
        #expect(latest.completedBytes <= first.completedBytes + 2 * 64 * 1024, "\(latest) after \(first)")
        #expect(latest.completedBytes < latest.totalBytes ?? 0)
        request.resume()
        let response = await task.response
        #expect(response.error == nil)
        #expect(response.response?.status.code == 200)
    }

    @Test func aValidatorAddedAfterTheRequestFinishedChecksOnlyTheHandlersAttachedAfterIt() async throws {
        let url = try await Backend.inProcess.url("/status/404")
        let request = Session.suite.request(url)
        let before = await request.serializingData(emptyResponseCodes: [404]).response
        #expect(before.error == nil, "no validator yet: a 404 is a response like any other")
        request.validate()
        let after = await request.serializingData(emptyResponseCodes: [404]).response
        #expect(after.error?.code == .responseValidationFailed)
        #expect(after.response?.status.code == 404)
        #expect(request.error == nil, "the outcome the first handler got is not rewritten")
        #expect(before.error == nil)
    }
}
