import Foundation
import Kite
import NIOConcurrencyHelpers
import Testing

@Suite struct UploadTests {
    @Test(arguments: Backend.available)
    func dataIsUploadedWithAnExactContentLength(backend: Backend) async throws {
        let body = Data("kite ✓ upload".utf8)
        let echo = try await Session.suite.upload(
            body,
            to: try await backend.url("/post"),
            headers: [.contentType: "text/plain"]
        )
        .validate()
        .serializingDecodable(LooseEcho.self)
        .value
        #expect(echo.data == "kite ✓ upload")
        #expect(echo.headers.header("Content-Length") == "\(body.count)")
    }

    @Test(arguments: Backend.available)
    func asyncSequencesAreUploadedWithOrWithoutALength(backend: Backend) async throws {
        func chunks() -> AsyncStream<Data> {
            AsyncStream { continuation in
                for word in ["alpha ", "beta ", "gamma"] { continuation.yield(Data(word.utf8)) }
                continuation.finish()
            }
        }
        let url = try await backend.url("/put")
        let sized = try await Session.suite.upload(
            chunks(),
            length: 16,
            to: url,
            method: .put,
            headers: [.contentType: "text/plain"]
        )
        .validate()
        .serializingDecodable(LooseEcho.self)
        .value
        #expect(sized.data == "alpha beta gamma")
        #expect(sized.headers.header("Content-Length") == "16")

        let chunked = try await Session.suite.upload(
            chunks(),
            length: nil,
            to: url,
            method: .put,
            headers: [.contentType: "text/plain"]
        )
        .validate()
        .serializingDecodable(LooseEcho.self)
        .value
        #expect(chunked.data == "alpha beta gamma")
        #expect(chunked.headers.header("Transfer-Encoding")?.lowercased() == "chunked")
    }

    @Test(arguments: [
        (Int64(20), "the upload stream produced 16 bytes, but its declared length is 20"),
        (Int64(10), "the upload stream produced more than 10 bytes, but its declared length is 10"),
    ])
    func aStreamThatBreaksItsLengthFails(declared: Int64, message: String) async throws {
        let stream = AsyncStream<[UInt8]> { continuation in
            continuation.yield(Array("alpha beta ".utf8))
            continuation.yield(Array("gamma".utf8))
            continuation.finish()
        }
        let url = try await Backend.inProcess.url("/post")
        let error = try #require(
            await Session.suite.upload(stream, length: declared, to: url).serializingData().response.error
        )
        #expect(error.code == .uploadFailed)
        #expect(error.message == message)
    }

    @Test(arguments: Backend.available)
    func uploadProgressIsMonotonicAndEndsAtTheTotal(backend: Backend) async throws {
        let body = Data(repeating: 0x5A, count: 300_000)
        let seen = NIOLockedValueBox([TransferProgress]())
        let request = Session.suite.upload(body, to: try await backend.url("/post"))
            .uploadProgress(queue: .global()) { progress in seen.withLockedValue { $0.append(progress) } }
        let stream = request.uploadProgress()
        _ = try await request.validate().serializingData().value
        var streamed: [TransferProgress] = []
        for await progress in stream { streamed.append(progress) }

        #expect(streamed.count >= 5, "300 kB in 64 KiB slices")
        #expect(streamed.map(\.completedBytes) == streamed.map(\.completedBytes).sorted())
        #expect(streamed.last == TransferProgress(completedBytes: 300_000, totalBytes: 300_000))
        #expect(streamed.allSatisfy { $0.totalBytes == 300_000 })
        try await Task.sleep(for: .milliseconds(100))
        // The handler runs on a concurrent queue, yet in order.
        let handled = seen.withLockedValue { $0 }
        #expect(handled.map(\.completedBytes) == handled.map(\.completedBytes).sorted())
        #expect(handled.last == TransferProgress(completedBytes: 300_000, totalBytes: 300_000))
        #expect(request.metrics?.bytesSent == 300_000)
    }

    @Test(arguments: Backend.available)
    func aRedirectResendsDataButRefusesAOneShotStream(backend: Backend) async throws {
        let target = try await backend.url("/redirect-to?url=/post&status_code=307")
        let echo = try await Session.suite.upload(
            Data("again".utf8),
            to: target,
            headers: [.contentType: "text/plain"]
        )
        .validate()
        .serializingDecodable(LooseEcho.self)
        .value
        #expect(echo.data == "again")

        let stream = AsyncStream<Data> { continuation in
            continuation.yield(Data("once".utf8))
            continuation.finish()
        }
        let error = try #require(
            await Session.suite.upload(stream, length: 4, to: target).serializingData().response.error
        )
        #expect(error.code == .bodyNotReplayable)
        #expect(
            error.message
                == "the server redirected with status 307, which needs the body again, but the upload stream cannot be "
                + "sent twice; upload Data or a file to allow that"
        )
        #expect(error.response?.status.code == 307)
    }

    @Test func uploadRateLimitSlowsTheBody() async throws {
        let url = try await Backend.inProcess.url("/post")
        let started = ContinuousClock.now
        let response = await Session.suite.upload(Data(count: 256 * 1024), to: url)
            .limitUploadRate(to: 512 * 1024)
            .serializingData()
            .response
        let elapsed = started.duration(to: .now)
        #expect(response.error == nil)
        // 256 KiB at 512 KiB/s, less the bucket's first 51 KiB: at least ~0.39 s.
        #expect(elapsed >= .milliseconds(350), "took \(elapsed)")
    }

    @Test func sessionUploadRateIsSharedByItsRequests() async throws {
        var configuration = Session.Configuration()
        configuration.maximumUploadRate = 512 * 1024
        let session = Session(configuration: configuration)
        let url = try await Backend.inProcess.url("/post")
        let started = ContinuousClock.now
        async let first = session.upload(Data(count: 128 * 1024), to: url).serializingData().response
        async let second = session.upload(Data(count: 128 * 1024), to: url).serializingData().response
        let (a, b) = await (first, second)
        #expect(a.error == nil && b.error == nil)
        #expect(started.duration(to: .now) >= .milliseconds(350))
        try await session.shutdown()
    }

    @Test func aSuspendedUploadStopsPullingItsBody() async throws {
        let (stream, continuation) = AsyncStream.makeStream(of: Data.self)
        let url = try await Backend.inProcess.url("/post")
        let request = Session.suite.upload(stream, length: 8, to: url)
        let progress = request.uploadProgress()
        let task = request.serializingData()
        continuation.yield(Data("1234".utf8))
        var iterator = progress.makeAsyncIterator()
        #expect(await iterator.next()?.completedBytes == 4)
        request.suspend()
        continuation.yield(Data("5678".utf8))
        continuation.finish()
        try await Task.sleep(for: .milliseconds(300))
        #expect(request.metrics == nil)
        #expect(request.state == .suspended)
        request.resume()
        #expect(await iterator.next()?.completedBytes == 8)
        let response = await task.response
        #expect(response.error == nil)
    }
}
