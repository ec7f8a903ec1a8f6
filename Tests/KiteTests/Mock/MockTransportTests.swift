import Foundation
import HTTPTypes
import NIOCore
import Testing

@testable import Kite

/// The public mock engine. Every session here is made with a ``MockTransport``, so no test opens a socket.
@Suite(.timeLimit(.minutes(1))) struct MockTransportTests {
    struct Item: Codable, Sendable, Equatable {
        var id: Int
        var name: String
    }

    @Test func aStubbedRequestToAClosedPortSucceedsWithoutASocket() async throws {
        let mock = MockTransport()
        mock.stub(.get, "http://127.0.0.1:1/", response: .status(200, body: .string("no socket")))
        let session = Session(transport: mock)
        let response = await session.request("http://127.0.0.1:1/").validate().serializingString().response
        #expect(response.value == "no socket")
        #expect(response.response?.headerFields[.contentType] == "text/plain; charset=utf-8")
        #expect(response.response?.headerFields[.contentLength] == "9")
        #expect(mock.requests.map(\.description) == ["GET http://127.0.0.1:1/"])
    }

    static let matchingCases: [(MockTransport.URLPattern, String, Bool)] = [
        ("http://api.test/users", "http://api.test/users", true),
        ("http://api.test/users", "http://api.test/users?page=2", false),
        ("http://api.test/users", "http://api.test/users/1", false),
        ("http://api.test/users", "https://api.test/users", false),
        ("http://api.test", "http://api.test/", true),
        ("http://api.test?q=1", "http://api.test/?q=1", true),
        (.exact("http://api.test/users?page=2"), "http://api.test/users?page=2", true),
        (.prefix("http://api.test/users"), "http://api.test/users/1?full=true", true),
        (.prefix("http://api.test/users"), "http://other.test/users", false),
        (.regex(#"http://api\.test/users/\d+"#), "http://api.test/users/42", true),
        (.regex(#"http://api\.test/users/\d+"#), "http://api.test/users/42/posts", false),
        (.regex(#"http://api\.test/users/\d+"#), "http://api.test/users/me", false),
        (.regex("(unclosed"), "http://api.test/(unclosed", false),
        (.matching { $0.path == "/users" && $0.authority == "api.test" }, "http://api.test/users", true),
        (.matching { $0.path == "/users" && $0.authority == "api.test" }, "http://api.test/users?x", false),
        (.any, "http://anything.test/at/all?q", true),
    ]

    @Test(arguments: Self.matchingCases)
    func urlPatternsMatchAsDocumented(pattern: MockTransport.URLPattern, url: String, matches: Bool) async throws {
        let mock = MockTransport()
        mock.stub(pattern, response: .status(204))
        let response = await Session(transport: mock).request(url).serializingData(emptyResponseCodes: [204]).response
        if matches {
            #expect(response.error == nil, "\(pattern) should match \(url)")
            #expect(response.response?.status.code == 204)
        } else {
            #expect(response.error?.code == .connectionFailed, "\(pattern) should not match \(url)")
        }
    }

    @Test func stubsAreTriedInTheOrderTheyWereAdded() async throws {
        let mock = MockTransport([
            MockTransport.Stub(.post, "http://api.test/items", response: .status(201, body: .string("created"))),
            MockTransport.Stub(.prefix("http://api.test/"), response: .status(200, body: .string("first"))),
            MockTransport.Stub(.get, "http://api.test/items", response: .status(200, body: .string("second"))),
        ])
        let session = Session(transport: mock)
        #expect(try await session.request("http://api.test/items").serializingString().value == "first")
        #expect(
            try await session.request("http://api.test/items", method: .post).serializingString().value == "created"
        )
        #expect(mock.stubs.map(\.method) == [.post, nil, .get])
    }

    @Test func aStubWithTimesIsPassedOverOnceUsedUp() async throws {
        let mock = MockTransport()
        mock.stub(.get, "http://api.test/job", times: 0, response: .status(500))
        mock.stub(.get, "http://api.test/job", times: 2, response: .status(202, body: .string("pending")))
        mock.stub(.get, "http://api.test/job", response: .status(200, body: .string("done")))
        let session = Session(transport: mock)
        var seen: [String] = []
        for _ in 0..<4 {
            let response = await session.request("http://api.test/job").serializingString().response
            seen.append("\(response.response?.status.code ?? 0) \(response.value ?? "")")
        }
        #expect(seen == ["202 pending", "202 pending", "200 done", "200 done"])
        #expect(mock.requests.count == 4)
    }

    @Test func aStubMatchesOnlyRequestsCarryingAllItsHeaderFields() async throws {
        let mock = MockTransport()
        let apiKey = try #require(HTTPField.Name("X-Api-Key"))
        mock.stub(
            .get,
            "http://api.test/me",
            headers: [.accept: "application/json", apiKey: "k1"],
            response: .status(200, body: .json(Item(id: 1, name: "Ada")))
        )
        mock.stub(.get, "http://api.test/me", response: .status(401))
        let session = Session(transport: mock)
        let shouted = try #require(HTTPField.Name("X-API-KEY"))

        let authorized = await session.request(
            "http://api.test/me",
            headers: [.accept: "application/json", shouted: "k1"]
        )
        .serializingDecodable(Item.self)
        .response
        #expect(authorized.value == Item(id: 1, name: "Ada"), "names compare without regard to case")
        #expect(authorized.response?.headerFields[.contentType] == "application/json")

        let wrongKey = await session.request(
            "http://api.test/me",
            headers: [.accept: "application/json", apiKey: "k2"]
        )
        .serializingData(emptyResponseCodes: [401])
        .response
        #expect(wrongKey.response?.status.code == 401)
        let missing = await session.request("http://api.test/me", headers: [apiKey: "k1"])
            .serializingData(emptyResponseCodes: [401])
            .response
        #expect(missing.response?.status.code == 401)
    }

    @Test func dataUploadsAreRecordedWithTheirHeadAndBytes() async throws {
        let mock = MockTransport()
        mock.stub(.put, "http://api.test/notes/1", response: .status(204))
        let body = Data("kite ✓ note".utf8)
        let response = await Session(transport: mock)
            .upload(body, to: "http://api.test/notes/1", method: .put, headers: [.contentType: "text/plain"])
            .validate()
            .serializingData(emptyResponseCodes: [204])
            .response
        #expect(response.error == nil)
        let sent = try #require(mock.requests.first)
        #expect(mock.requests.count == 1)
        #expect(sent.method == .put)
        #expect(sent.url == URL(string: "http://api.test/notes/1"))
        #expect(sent.headerFields[.contentType] == "text/plain")
        #expect(sent.headerFields[.userAgent] == HTTPFields.kiteDefaults[.userAgent], "the session's defaults as sent")
        #expect(sent.body == body)
        #expect(response.metrics?.bytesSent == Int64(body.count))
    }

    @Test func multipartUploadsAreRecordedByteForByte() async throws {
        let mock = MockTransport()
        mock.stub(.post, "http://api.test/upload", response: .status(201))
        var form = try MultipartFormData(boundary: "kite-test-boundary")
        form.append(Data("Ada".utf8), withName: "name")
        form.append(Data([0x89, 0x50, 0x4E, 0x47]), withName: "avatar", fileName: "a.png", mimeType: "image/png")
        let response = await Session(transport: mock)
            .upload(multipartFormData: form, to: "http://api.test/upload")
            .serializingData(emptyResponseCodes: [201])
            .response
        #expect(response.error == nil)
        let sent = try #require(mock.requests.first)
        #expect(sent.headerFields[.contentType] == "multipart/form-data; boundary=kite-test-boundary")
        #expect(sent.body == (try form.encode()))
        #expect(sent.body?.count == Int(form.contentLength))
    }

    @Test func streamedUploadsAreDrainedAndRecorded() async throws {
        let mock = MockTransport()
        mock.stub(
            .post,
            "http://api.test/stream",
            response: .respond { request in
                .status(200, body: .string("got \(request.body?.count ?? -1) bytes"))
            }
        )
        let chunks = AsyncStream<Data> { continuation in
            for word in ["alpha ", "beta ", "gamma"] { continuation.yield(Data(word.utf8)) }
            continuation.finish()
        }
        let request = Session(transport: mock).upload(chunks, length: 16, to: "http://api.test/stream")
        let progress = request.uploadProgress()
        let value = try await request.validate().serializingString().value
        #expect(value == "got 16 bytes")
        #expect(mock.requests.first?.body == Data("alpha beta gamma".utf8))
        var last: TransferProgress?
        for await update in progress { last = update }
        #expect(last == TransferProgress(completedBytes: 16, totalBytes: 16))
    }

    @Test func aStreamShorterThanItsDeclaredLengthFailsAsAgainstAServer() async throws {
        let mock = MockTransport()
        mock.stub(.any, response: .status(200))
        let chunks = AsyncStream<Data> { continuation in
            continuation.yield(Data("short".utf8))
            continuation.finish()
        }
        let error = try #require(
            await Session(transport: mock).upload(chunks, length: 10, to: "http://api.test/x").serializingData()
                .response.error
        )
        #expect(error.code == .uploadFailed)
        #expect(error.message == "the upload stream produced 5 bytes, but its declared length is 10")
        #expect(mock.requests.first?.body == Data("short".utf8))

        // A body that does not check its own length gets the engine's error.
        let head = HTTPRequest(method: .post, scheme: "http", authority: "api.test", path: "/x")
        let body = TransportRequestBody.stream(length: 10) { ByteChunks(chunks: [ByteBuffer(string: "short")]) }
        do {
            _ = try await mock.send(TransportRequest(head: head, body: body, deadline: nil))
            Issue.record("a body shorter than its declared length was accepted")
        } catch {
            #expect(error.code == .invalidRequest)
            #expect(error.message == "the request body's length differs from its declared Content-Length")
        }
    }

    @Test func redirectsAreFollowedByKiteAndBothHopsAreRecorded() async throws {
        let mock = MockTransport()
        mock.stub(.get, "http://api.test/old", response: .status(302, headers: [.location: "/new?from=old"]))
        mock.stub(.get, "http://api.test/new?from=old", response: .status(200, body: .string("landed")))
        let response = await Session(transport: mock).request("http://api.test/old").validate().serializingString()
            .response
        #expect(response.value == "landed")
        #expect(response.url?.absoluteString == "http://api.test/new?from=old")
        #expect(response.metrics?.redirectCount == 1)
        #expect(
            mock.requests.map(\.description) == ["GET http://api.test/old", "GET http://api.test/new?from=old"]
        )
    }

    @Test func aRetryPolicyRetriesAStubbed503AndGetsThe200() async throws {
        let mock = MockTransport()
        mock.stub(.get, "http://api.test/items/7", times: 1, response: .status(503, body: .string("busy")))
        mock.stub(.get, "http://api.test/items/7", response: .status(200, body: .json(Item(id: 7, name: "kite"))))
        let session = Session(transport: mock, interceptor: RetryPolicy(exponentialBackoffScale: 0, jitter: .none))
        let item = try await session.request("http://api.test/items/7").validate().serializingDecodable(Item.self)
            .value
        #expect(item == Item(id: 7, name: "kite"))
        #expect(mock.requests.count == 2)
        #expect(mock.requests.map(\.description) == ["GET http://api.test/items/7", "GET http://api.test/items/7"])
    }

    @Test func validationFailsOnAStubbed404WithTheBodyInTheError() async throws {
        let mock = MockTransport()
        mock.stub(.get, .prefix("http://api.test/users/"), response: .status(404, body: .string("no such user")))
        let response = await Session(transport: mock).request("http://api.test/users/9").validate().serializingData()
            .response
        let error = try #require(response.error)
        #expect(error.code == .responseValidationFailed)
        #expect(error.responseStatusCode == 404)
        #expect(error.responseBody == Data("no such user".utf8))
        #expect(error.description == "GET http://api.test/users/9 failed: response status 404 is not in 200..<300")
    }

    @Test func aDecodableSerializerFailsOnBadJSON() async throws {
        let mock = MockTransport()
        mock.stub(
            .get,
            "http://api.test/items/1",
            response: .status(200, headers: [.contentType: "application/json"], body: .string(#"{"id": 1, "name": "#))
        )
        let response = await Session(transport: mock).request("http://api.test/items/1").validate()
            .serializingDecodable(Item.self)
            .response
        let error = try #require(response.error)
        #expect(error.code == .responseSerializationFailed)
        #expect(error.underlyingError is DecodingError)
        #expect(response.data == Data(#"{"id": 1, "name": "#.utf8))
    }

    @Test func aFileStubDownloadsToDiskWithProgress() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("kite-mock-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let fixture = folder.appendingPathComponent("fixture.bin")
        let bytes = Data((0..<200_001).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 / 251) })
        try bytes.write(to: fixture)
        let mock = MockTransport()
        mock.stub(.get, "http://files.test/big.bin", response: .status(200, body: .file(fixture, chunkSize: 50_000)))

        let target = folder.appendingPathComponent("out/big.bin")
        let request = Session(transport: mock).download(
            "http://files.test/big.bin",
            to: { _, _ in (target, [.createIntermediateDirectories]) }
        )
        let progress = request.downloadProgress()
        let response = await request.validate().serializingDownloadedFileURL().response
        #expect(response.value == target)
        #expect(try Data(contentsOf: target) == bytes)
        #expect(response.response?.headerFields[.contentLength] == "200001")
        var completed: [Int64] = []
        for await update in progress where completed.last != update.completedBytes {
            #expect(update.totalBytes == 200_001)
            completed.append(update.completedBytes)
        }
        #expect(completed == [50_000, 100_000, 150_000, 200_000, 200_001])
    }

    @Test func aMissingStubFileFailsTheRequestNamingTheFile() async throws {
        let mock = MockTransport()
        mock.stub(.any, response: .status(200, body: .file(URL(fileURLWithPath: "/nonexistent/kite/fixture.bin"))))
        let error = try #require(
            await Session(transport: mock).request("http://files.test/x").serializingData().response.error
        )
        #expect(error.code == .invalidResponse)
        #expect(
            error.message.hasPrefix("cannot use /nonexistent/kite/fixture.bin as the stub's body: it does not exist")
        )
    }

    @Test func aStubbedConnectionErrorSurfacesWithItsCode() async throws {
        let mock = MockTransport()
        let refused = KiteError(
            code: .connectionFailed,
            message: "could not connect to api.test:80: connection refused"
        )
        mock.stub(.any, response: .error(refused))
        let error = try #require(
            await Session(transport: mock).request("http://api.test/health").serializingData().response.error
        )
        #expect(error.code == .connectionFailed)
        #expect(
            error.description
                == "GET http://api.test/health failed: could not connect to api.test:80: connection refused"
        )
        #expect(mock.requests.count == 1)
    }

    @Test func aBodyCanFailMidwayAsALostConnectionDoes() async throws {
        let mock = MockTransport()
        let lost = KiteError(
            code: .connectionLost,
            message: "the server closed the connection before the response was complete"
        )
        mock.stub(.any, response: .status(200, body: .chunks([Data("partial".utf8)], thenFailingWith: lost)))
        let error = try #require(
            await Session(transport: mock).request("http://api.test/big").serializingData().response.error
        )
        #expect(error.code == .connectionLost)
        #expect(error.responseStatusCode == 200)
    }

    @Test func delayedChunksPastTheTotalTimeoutFailWithTheTotalTimeout() async throws {
        let mock = MockTransport()
        let chunks = [Data("first".utf8), Data("never".utf8)]
        mock.stub(.get, "http://api.test/drip", response: .status(200, body: .chunks(chunks, delay: .seconds(3600))))
        var configuration = Session.Configuration()
        configuration.timeouts.total = .milliseconds(200)
        let error = try #require(
            await Session(configuration: configuration, transport: mock).request("http://api.test/drip")
                .serializingData()
                .response.error
        )
        #expect(error.code == .timedOut)
        #expect(error.timeout == .total)
        #expect(
            error.description
                == "GET http://api.test/drip failed: the total timeout (200 ms) expired before the response was complete"
        )
    }

    @Test func theMocksDeadlineGivesTheEnginesTimeoutError() async throws {
        let mock = MockTransport()
        let chunks = [Data("first".utf8), Data("never".utf8)]
        mock.stub(.get, "http://api.test/drip", response: .status(200, body: .chunks(chunks, delay: .seconds(3600))))
        let head = HTTPRequest(method: .get, scheme: "http", authority: "api.test", path: "/drip")
        let response = try await mock.send(
            TransportRequest(head: head, body: nil, deadline: .now() + .milliseconds(100))
        )
        var iterator = response.body.makeAsyncIterator()
        #expect(try await iterator.next() == ByteBuffer(string: "first"))
        do {
            _ = try await iterator.next()
            Issue.record("the second chunk arrived after the deadline")
        } catch let error as KiteError {
            // What AHCTransport maps `HTTPClientError.deadlineExceeded` to.
            #expect(error.code == .timedOut)
            #expect(error.timeout == .total)
            #expect(error.message == "the total timeout expired")
        }
    }

    @Test func cancellingARequestDuringADelayedChunkCancelsIt() async throws {
        let mock = MockTransport()
        let chunks = [Data("first".utf8), Data("never".utf8)]
        mock.stub(.get, "http://api.test/drip", response: .status(200, body: .chunks(chunks, delay: .seconds(3600))))
        let request = Session(transport: mock).request("http://api.test/drip")
        let progress = request.downloadProgress()
        let task = request.serializingData()
        for await update in progress where update.completedBytes == 5 {
            request.cancel()
        }
        let response = await task.response
        #expect(response.error?.code == .cancelled)
    }

    @Test func cancellingTheTaskEndsTheMocksDelayAtOnce() async throws {
        let mock = MockTransport()
        let chunks = [Data("first".utf8), Data("never".utf8)]
        mock.stub(.get, "http://api.test/drip", response: .status(200, body: .chunks(chunks, delay: .seconds(3600))))
        let head = HTTPRequest(method: .get, scheme: "http", authority: "api.test", path: "/drip")
        let reading = Task { () -> KiteError? in
            do {
                let response = try await mock.send(TransportRequest(head: head, body: nil, deadline: nil))
                for try await _ in response.body {}
                return nil
            } catch {
                return error as? KiteError
            }
        }
        reading.cancel()
        let error = await reading.value
        #expect(error?.code == .cancelled)
        #expect(error?.message == "the request was cancelled")
    }

    @Test func anUnmatchedRequestFailsListingEveryStub() async throws {
        let mock = MockTransport()
        mock.stub(.get, "http://api.test/users", response: .status(200, body: .string("[]")))
        mock.stub(
            .post,
            .prefix("http://api.test/users"),
            headers: [.contentType: "application/json"],
            times: 1,
            response: .status(201)
        )
        mock.stub(
            .regex(#"http://api\.test/items/\d+"#),
            response: .error(KiteError(code: .connectionLost, message: "reset"))
        )
        mock.stub(
            .delete,
            .matching { _ in false },
            response: .respond { _ in .status(204) }.delayed(by: .milliseconds(1500))
        )
        mock.stub(
            .get,
            "http://api.test/events",
            response: .status(200, body: .chunks([Data("a".utf8), Data("bc".utf8)], delay: .milliseconds(20)))
        )
        let session = Session(transport: mock)
        let error = try #require(await session.request("http://api.test/missing?q=1").serializingData().response.error)
        #expect(error.code == .connectionFailed)
        #expect(
            error.description == """
                GET http://api.test/missing?q=1 failed: no stub matches GET http://api.test/missing?q=1; the stubs, \
                in the order they are tried:
                1. GET exactly http://api.test/users → status 200, 2 bytes
                2. POST with prefix http://api.test/users, with Content-Type: application/json, at most 1 time \
                (used 0) → status 201
                3. any method matching regex http://api\\.test/items/\\d+ → error connectionLost: reset
                4. DELETE matching a closure → a closure, after 1.5 s
                5. GET exactly http://api.test/events → status 200, 2 chunks (3 bytes) 20 ms apart
                """
        )
        #expect(mock.requests.map(\.description) == ["GET http://api.test/missing?q=1"])

        mock.removeAllStubs()
        let none = try #require(await session.request("http://api.test/users").serializingData().response.error)
        #expect(none.message == "no stub matches GET http://api.test/users: the MockTransport has no stubs")
    }

    @Test func aClosureAnswersFromTheRequestAndItsErrorsFailIt() async throws {
        struct Refusal: Error {}
        let mock = MockTransport()
        mock.stub(
            .post,
            "http://api.test/echo",
            response: .respond { request in
                guard request.headerFields[.contentType] == "application/json" else { return .status(415) }
                return .status(200, headers: [.contentType: "application/json"], body: .data(request.body ?? Data()))
            }
        )
        mock.stub(.get, "http://api.test/broken", response: .respond { _ in throw Refusal() })
        let session = Session(transport: mock)
        let echoed = try await session.request(
            "http://api.test/echo",
            method: .post,
            parameters: Item(id: 3, name: "echo"),
            encoder: JSONParameterEncoder.default
        )
        .validate()
        .serializingDecodable(Item.self)
        .value
        #expect(echoed == Item(id: 3, name: "echo"))

        let error = try #require(await session.request("http://api.test/broken").serializingData().response.error)
        #expect(error.code == .connectionLost)
        #expect(error.underlyingError is Refusal)
    }

    @Test func responsesFollowHTTPsBodyRules() async throws {
        let mock = MockTransport()
        mock.stub(.any, response: .status(200, body: .string("hello")))
        let session = Session(transport: mock)
        let head = await session.request("http://api.test/x", method: .head).serializingData().response
        #expect(head.response?.headerFields[.contentLength] == "5")
        #expect(head.data == Data())

        mock.reset()
        #expect(mock.stubs.isEmpty && mock.requests.isEmpty)
        mock.stub(.any, response: .status(42))
        let invalid = await session.request("http://api.test/x").serializingData().response
        #expect(invalid.error?.code == .invalidResponse)
        #expect(invalid.error?.message == "the response status 42 is not valid")
    }

    @Test func aShutDownSessionFailsWhileTheSharedMockServesOthers() async throws {
        let mock = MockTransport()
        mock.stub(.any, response: .status(200, body: .string("ok")))
        let first = Session(transport: mock)
        let second = Session(transport: mock)
        try await first.shutdown()
        let refused = await first.request("http://api.test/").serializingString().response
        #expect(refused.error?.code == .sessionShutDown)
        #expect(try await second.request("http://api.test/").serializingString().value == "ok")
        #expect(mock.requests.count == 1, "a shut-down session sends nothing")
    }
}
