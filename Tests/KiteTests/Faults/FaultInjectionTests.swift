import Foundation
import Kite
import NIOConcurrencyHelpers
import Testing

/// Kite against a hostile or unlucky server (`Tests/FaultServer/fault_server.py`): each test provokes
/// one misbehaviour and asserts the exact outcome.
@Suite struct FaultInjectionTests {
    /// A session of its own, so timeouts and limits can be set per test; shut down by `body`'s caller.
    static func withSession<T>(
        _ configuration: Session.Configuration = .init(),
        _ body: (Session) async throws -> T
    ) async throws -> T {
        let session = Session(configuration: configuration)
        do {
            let result = try await body(session)
            try await session.shutdown()
            return result
        } catch {
            try? await session.shutdown()
            throw error
        }
    }

    /// The fault server's deterministic body: byte `i` is `i % 251`.
    static func deterministicBody(_ count: Int, from start: Int = 0) -> Data {
        Data((start..<(start + count)).map { UInt8($0 % 251) })
    }

    // MARK: Bodies cut short

    @Test(arguments: ["fin", "rst"])
    func aBodyCutByTheServerIsALostConnection(mode: String) async throws {
        let url = try await FaultServer.url("/close-after?bytes=10000&length=40000&mode=\(mode)")
        let response = await Session.suite.request(url).serializingData().response
        let error = try #require(response.error)
        #expect(error.code == .connectionLost, "\(error)")
        #expect(response.response?.status.code == 200)
    }

    @Test func aChunkedBodyCutByTheServerIsALostConnection() async throws {
        let url = try await FaultServer.url("/close-after?bytes=10000&length=40000&mode=fin&chunked=1")
        let error = try #require(await Session.suite.request(url).serializingData().response.error)
        #expect(error.code == .connectionLost, "\(error)")
    }

    @Test(arguments: ["fin", "rst"])
    func aDownloadCutByTheServerKeepsItsBytesAndResumesToAnIdenticalFile(mode: String) async throws {
        let folder = try DownloadTests.makeFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let target = folder.appendingPathComponent("cut.bin")
        let url = try await FaultServer.url("/close-after?bytes=30000&length=100000&mode=\(mode)")
        let cut = await Session.suite.download(url, to: DownloadTests.destination(target))
            .serializingDownloadedFileURL()
            .response
        #expect(cut.error?.code == .connectionLost, "\(String(describing: cut.error))")
        #expect(!FileManager.default.fileExists(atPath: target.path))
        let resumeData = try #require(cut.resumeData, "a lost connection with a strong ETag produces resume data")

        let resumed = await Session.suite.download(resumingWith: resumeData, to: DownloadTests.destination(target))
            .validate()
            .serializingDownloadedFileURL()
            .response
        #expect(resumed.error == nil, "\(String(describing: resumed.error))")
        #expect(resumed.response?.status.code == 206)
        #expect(try Data(contentsOf: target) == Self.deterministicBody(100_000))
        // The engine may drop bytes it had buffered when the connection broke: what was on disk is
        // what the resume data says, and exactly the rest was downloaded.
        let token = try JSONSerialization.jsonObject(with: resumeData) as? [String: Any]
        let kept = try #require(token?["bytes"] as? Int)
        #expect(kept > 0 && kept <= 30_000)
        #expect(resumed.metrics?.bytesReceived == Int64(100_000 - kept), "only the rest was downloaded")
    }

    @Test func aCloseDelimitedHTTP10BodyIsComplete() async throws {
        let url = try await FaultServer.url("/http10?size=5000")
        let response = await Session.suite.request(url).serializingData().response
        #expect(response.error == nil, "\(String(describing: response.error))")
        #expect(response.data == Self.deterministicBody(5000))
    }

    // MARK: Malformed responses

    @Test(arguments: ["/garbage-status", "/garbage-status?kind=notHTTP", "/bad-chunk", "/bad-chunk?kind=overflow"])
    func aMalformedResponseIsInvalid(path: String) async throws {
        let url = try await FaultServer.url(path)
        let error = try #require(await Session.suite.request(url).serializingData().response.error)
        #expect(error.code == .invalidResponse, "\(error)")
        #expect(error.message.hasSuffix("the server's response is not valid HTTP"), "\(error.message)")
    }

    @Test func contentLengthWithTransferEncodingIsRejected() async throws {
        // RFC 9112 §6.1: such a message may be a request-smuggling attempt; the parser refuses it.
        let url = try await FaultServer.url("/cl-and-te")
        let error = try #require(await Session.suite.request(url).serializingData().response.error)
        #expect(error.code == .invalidResponse, "\(error)")
    }

    @Test func oversizedHeadersAreRejected() async throws {
        let url = try await FaultServer.url("/huge-headers?size=1048576")
        let error = try #require(await Session.suite.request(url).serializingData().response.error)
        #expect(error.code == .invalidResponse, "\(error)")
    }

    @Test func headersDribbledAByteAtATimeArrive() async throws {
        let url = try await FaultServer.url("/dribble-headers?delay_ms=2")
        let response = await Session.suite.request(url).serializingString().response
        #expect(response.error == nil, "\(String(describing: response.error))")
        #expect(response.value == "hello")
    }

    @Test func informationalResponsesBeforeTheFinalOneAreSkipped() async throws {
        let url = try await FaultServer.url("/informational?codes=100,103")
        let response = await Session.suite.request(url).serializingString().response
        #expect(response.error == nil, "\(String(describing: response.error))")
        #expect(response.response?.status.code == 200)
        #expect(response.value == "final")
    }

    // MARK: Silence and stalls

    @Test func aSilentServerHitsTheIdleReadTimeout() async throws {
        try await Self.withSession(.with { $0.timeouts.idleRead = .milliseconds(300) }) { session in
            let error = try #require(
                await session.request(try await FaultServer.url("/silence")).serializingData().response.error
            )
            #expect(error.code == .timedOut)
            #expect(error.timeout == .idleRead)
        }
    }

    @Test func aServerThatStopsReadingTheUploadHitsTheIdleWriteTimeout() async throws {
        try await Self.withSession(.with { $0.timeouts.idleWrite = .milliseconds(500) }) { session in
            let url = try await FaultServer.url("/stop-reading")
            // Far more than the kernel's socket buffers hold, so the channel turns unwritable.
            let response = await session.upload(Data(count: 64 * 1024 * 1024), to: url).serializingData().response
            let error = try #require(response.error)
            #expect(error.code == .timedOut, "\(error)")
            #expect(error.timeout == .idleWrite)
            #expect(error.message.contains("the idle-write timeout (500 ms) expired"), "\(error.message)")
        }
    }

    // MARK: Answers before the upload is read

    @Test(arguments: [256 * 1024, 8 * 1024 * 1024])
    func anUploadAnsweredBeforeItsBodyIsReadGetsTheAnswer(size: Int) async throws {
        // 401 then drain: the server reads the rest and keeps the connection.
        let url = try await FaultServer.url("/early-status?status=401&then=drain")
        let response = await Session.suite.upload(Data(count: size), to: url).serializingString().response
        #expect(response.error == nil, "\(String(describing: response.error))")
        #expect(response.response?.status.code == 401)
        #expect(response.value == "unauthorized")
    }

    @Test(arguments: [256 * 1024, 64 * 1024 * 1024])
    func anUploadRefusedWith413AndACloseNeverCrashes(size: Int) async throws {
        let url = try await FaultServer.url("/early-status?status=413&then=close")
        let response = await Session.suite.upload(Data(count: size), to: url).serializingString().response
        if let error = response.error {
            // The close can reach the client as a reset before the 413 is read (a server that closes
            // with unread upload bytes resets the connection): then the connection is reported lost.
            #expect(error.code == .connectionLost, "\(error)")
        } else {
            #expect(response.response?.status.code == 413)
            #expect(response.value == "too large")
        }
    }

    /// A server that answers 413 before reading an upload makes async-http-client 1.37 stop sending and keep its
    /// body-streaming task waiting, forever, for a demand that never comes (RELIABILITY.md). That task must keep
    /// neither the request, nor the body in memory, nor the file open: before, every such upload kept its request,
    /// its whole body and its file's descriptor for the life of the process.
    @Test(arguments: ["memory", "file"], ["close", "drain"])
    func anUploadAnsweredEarlyWith413LetsGoOfItsRequestBodyAndFile(source: String, then: String) async throws {
        let folder = try DownloadTests.makeFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("upload.bin")
        let size = 4 * 1024 * 1024
        try Data(count: size).write(to: file)
        let url = try await FaultServer.url("/early-status?status=413&then=\(then)")
        weak var released: UploadRequest?
        do {
            let request =
                source == "file"
                ? Session.suite.upload(file, to: url) : Session.suite.upload(Data(count: size), to: url)
            released = request
            let response = await request.serializingString().response
            #expect(response.response?.status.code == 413 || response.error?.code == .connectionLost, "\(response)")
        }
        // The pipeline lets go of the request once it has delivered, then of the file; at most 5 s. The loop ends
        // as soon as both are gone: a `where` clause here once went on scanning the descriptors 500 times without a
        // pause, which held the 2-core machine's cooperative threads for seconds and stalled every other test.
        var open: [String] = []
        for _ in 0..<500 {
            if released == nil {
                open = try await Self.descriptors(opening: file)
                if open.isEmpty { break }
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(released == nil, "the request outlived its exchange")
        #expect(open.isEmpty, "the file is still open: \(open)")
    }

    /// This process's descriptors open on `file`, read on a thread of their own: the suite holds hundreds open at
    /// once, a `readlink` each, which must not hold a cooperative thread.
    static func descriptors(opening file: URL) async throws -> [String] {
        let path = file.resolvingSymlinksInPath().path
        return try await offThePool {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
            return names.filter { name in
                (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(name)")) == path
            }
        }
    }

    @Test func aFileUploadAnsweredEarlyCompletes() async throws {
        let folder = try DownloadTests.makeFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("upload.bin")
        try Self.deterministicBody(1000).write(to: file)
        for path in ["/upload-ack", "/upload-ack?early=1"] {
            let url = try await FaultServer.url(path)
            let response = await Session.suite.upload(file, to: url).serializingString().response
            #expect(response.error == nil, "\(String(describing: response.error))")
            #expect(response.value == #"{"received":1000}"# || path.hasSuffix("early=1"))
            #expect(response.response?.status.code == 200)
        }
    }

    // MARK: Redirects

    @Test(arguments: ["/redirect-loop?n=0", "/redirect-self"])
    func endlessRedirectsStop(path: String) async throws {
        let error = try #require(
            await Session.suite.request(try await FaultServer.url(path)).serializingData().response.error
        )
        #expect(error.code == .tooManyRedirects, "\(error)")
    }

    @Test(arguments: ["ftp://127.0.0.1/x", "file:///etc/passwd"])
    func aRedirectToAnotherSchemeIsNotFollowed(target: String) async throws {
        let encoded = try #require(target.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
        let url = try await FaultServer.url("/redirect-scheme?to=\(encoded)")
        let response = await Session.suite.request(url).serializingData(emptyResponseCodes: [302]).response
        #expect(response.error == nil, "\(String(describing: response.error))")
        #expect(response.response?.status.code == 302)
        #expect(response.response?.headerFields[.location] == target)
    }

    // MARK: Transparent resends

    @Test(arguments: [HTTPRequest.Method.get, .post])
    func aRequestThatReachedTheServerIsNeverSentAgain(method: HTTPRequest.Method) async throws {
        // The server reads the request and closes without answering: the bytes were written, so
        // the failure is reported, not hidden by a second try.
        let server = FaultServer()
        let base = try await server.baseURL()
        let response = await Session.suite.upload(Data("once".utf8), to: base + "/silence?max_s=0", method: method)
            .serializingData()
            .response
        #expect(response.error?.code == .connectionLost, "\(String(describing: response.error))")
        let stats = try await Session.suite.request(base + "/stats").serializingString().value
        #expect(stats == #"{"connections": 2, "requests": 2}"#, "the closed request and this one")
        await server.stop()
    }

    // MARK: Stray bytes

    @Test(arguments: ["head", "204", "304", "extra"])
    func strayBytesAfterAResponseDoNotFailTheNextRequest(kind: String) async throws {
        try await Self.withSession(.with { $0.maximumConnectionsPerHost = 1 }) { session in
            let stray = try await FaultServer.url("/stray?kind=\(kind)")
            let ok = try await FaultServer.url("/ok")
            for _ in 0..<20 {
                let method: HTTPRequest.Method = kind == "head" ? .head : .get
                _ = await session.request(stray, method: method).serializingData().response
                let response = await session.request(ok).serializingString().response
                #expect(response.error == nil, "\(String(describing: response.error))")
                #expect(response.value == "ok")
            }
        }
    }
}

extension Session.Configuration {
    /// The default configuration changed by `configure`.
    static func with(_ configure: (inout Session.Configuration) -> Void) -> Session.Configuration {
        var configuration = Session.Configuration()
        configure(&configuration)
        return configuration
    }
}
