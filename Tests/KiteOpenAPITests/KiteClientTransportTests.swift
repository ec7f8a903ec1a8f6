import Foundation
import HTTPTypes
import InMemoryTracing
import Kite
import KiteOpenAPI
import Logging
import NIOConcurrencyHelpers
import OpenAPIRuntime
import Testing

/// What the transport adds to the pipeline: replay rules, cancellation, streaming, telemetry, the cache.
@Suite struct KiteClientTransportTests {
    /// A policy without waits or a budget, so retries are immediate and counted exactly.
    static func immediatePolicy() -> RetryPolicy {
        RetryPolicy(exponentialBackoffScale: 0, jitter: .none, retryBudget: nil)
    }

    /// A session whose first attempt of each request goes to a closed port (refused), later ones where they
    /// were sent; with `RetryPolicy`, so a refused attempt is retried when it may be.
    static func firstAttemptRefused(attempts: NIOLockedValueBox<Int>) -> Session {
        let adapter = Adapter { request, _ in
            var request = request
            let attempt = attempts.withLockedValue { count in
                count += 1
                return count
            }
            if attempt == 1 { request.authority = "127.0.0.1:1" }
            return request
        }
        return Session(interceptor: Interceptor(adapters: [adapter], retriers: [Self.immediatePolicy()]))
    }

    @Test func theSessionsRetryPolicyResendsAReplayableBody() async throws {
        let attempts = NIOLockedValueBox(0)
        let session = Self.firstAttemptRefused(attempts: attempts)
        defer { Task { try await session.shutdown() } }
        let client = try await Backend.inProcess.client(session: session)
        let key = "replayable-\(UUID().uuidString)"
        let body = HTTPBody("payload")  // iterates .multiple
        let result = try await client.putFlaky(path: .init(key: key), query: .init(failures: 0), body: .binary(body))
            .ok.body.json
        #expect(result.attempt == 1)  // the refused attempt never reached the server
        #expect(attempts.withLockedValue { $0 } == 2)
    }

    @Test func aSingleIterationBodyIsNeverRetried() async throws {
        let attempts = NIOLockedValueBox(0)
        let session = Self.firstAttemptRefused(attempts: attempts)
        defer { Task { try await session.shutdown() } }
        let client = try await Backend.inProcess.client(session: session)
        let chunks = CountingBody(["payload"])
        let body = HTTPBody(chunks, length: .known(7), iterationBehavior: .single)
        do {
            _ = try await client.putFlaky(
                path: .init(key: UUID().uuidString),
                query: .init(failures: 0),
                body: .binary(body)
            )
            Issue.record("the refused attempt was retried")
        } catch {
            #expect(kiteError(of: error)?.code == .connectionFailed)
        }
        #expect(attempts.withLockedValue { $0 } == 1)
        #expect(chunks.iterations <= 1)
    }

    @Test func theRetryMiddlewareRetriesStatusCodesForReplayableBodies() async throws {
        let middleware = RetryPolicyMiddleware(policy: Self.immediatePolicy())
        let client = try await Backend.inProcess.client(middlewares: [middleware])
        let key = "middleware-\(UUID().uuidString)"
        let result = try await client.flaky(path: .init(key: key), query: .init(failures: 2, status: 503)).ok.body.json
        #expect(result.attempt == 3)
        #expect(result.key == key)
    }

    @Test func theRetryMiddlewareSendsASingleIterationBodyOnce() async throws {
        let middleware = RetryPolicyMiddleware(policy: Self.immediatePolicy())
        let client = try await Backend.inProcess.client(middlewares: [middleware])
        let key = "single-\(UUID().uuidString)"
        let chunks = CountingBody(["once"])
        let body = HTTPBody(chunks, length: .known(4), iterationBehavior: .single)
        guard
            case .serviceUnavailable = try await client.putFlaky(
                path: .init(key: key),
                query: .init(failures: 1, status: 503),
                body: .binary(body)
            )
        else {
            Issue.record("the 503 was not returned")
            return
        }
        // The server saw one attempt: the next is its second, which succeeds.
        let next = try await client.flaky(path: .init(key: key), query: .init(failures: 1, status: 503)).ok.body.json
        #expect(next.attempt == 2)
        #expect(chunks.iterations == 1)
    }

    @Test func aRedirectThatKeepsTheBodyResendsOnlyAReplayableOne() async throws {
        let base = try #require(URL(string: try await Backend.inProcess.baseURL()))
        let transport = KiteClientTransport(session: .openAPISuite)
        let head = HTTPRequest(
            method: .post,
            scheme: nil,
            authority: nil,
            path: "/redirect-to?url=/anything&status_code=307"
        )
        let (response, body) = try await transport.send(head, body: HTTPBody("again"), baseURL: base, operationID: "r")
        #expect(response.status == .ok)
        let echoed = try await String(collecting: try #require(body), upTo: 1 << 16)
        #expect(echoed.contains("\"data\": \"again\"") || echoed.contains("\"data\":\"again\""))

        let chunks = CountingBody(["once"])
        let single = HTTPBody(chunks, length: .known(4), iterationBehavior: .single)
        do {
            _ = try await transport.send(head, body: single, baseURL: base, operationID: "r")
            Issue.record("a single-iteration body was sent twice")
        } catch {
            #expect(kiteError(of: error)?.code == .bodyNotReplayable)
        }
        #expect(chunks.iterations == 1)
    }

    /// A session whose data requests hold at most 50,000 bytes.
    static func smallLimitSession() -> Session {
        var configuration = Session.Configuration()
        configuration.maximumResponseSize = 50_000
        return Session(configuration: configuration)
    }

    @Test func theSessionsSizeLimitAppliesToAResponseByDefault() async throws {
        let base = try #require(URL(string: try await Backend.inProcess.baseURL()))
        let client = Client(serverURL: base, transport: KiteClientTransport(session: Self.smallLimitSession()))
        // Content-Length 100,000: refused before a response is returned.
        let error = await #expect(throws: (any Error).self) { _ = try await client.getBytes(path: .init(n: 100_000)) }
        let kite = try #require(error.flatMap(kiteError))
        #expect(kite.code == .responseTooLarge)
        #expect(kite.message.contains("limit of 50000 bytes (Content-Length 100000)"), "\(kite.message)")
        // Within the limit, the whole body.
        let body = try await client.getBytes(path: .init(n: 40_000)).ok.body.binary
        #expect(try await Data(collecting: body, upTo: .max).count == 40_000)
    }

    @Test func aTransportsOwnLimitOverridesTheSessions() async throws {
        let base = try #require(URL(string: try await Backend.inProcess.baseURL()))
        let session = Self.smallLimitSession()
        // No limit: 100,000 bytes where the session holds 50,000.
        let unlimited = Client(
            serverURL: base,
            transport: KiteClientTransport(session: session, maximumResponseSize: nil)
        )
        let whole = try await unlimited.getBytes(path: .init(n: 100_000)).ok.body.binary
        #expect(try await Data(collecting: whole, upTo: .max).count == 100_000)
        // A body sent in chunks, without a length, fails once it passes the transport's limit, after the bytes before.
        let limited = Client(
            serverURL: base,
            transport: KiteClientTransport(session: session, maximumResponseSize: 30_000)
        )
        let streamed = try await limited.streamBytes(path: .init(n: 70_000)).ok.body.binary
        let received = NIOLockedValueBox(0)
        let error = await #expect(throws: (any Error).self) {
            for try await chunk in streamed { received.withLockedValue { $0 += chunk.count } }
        }
        let kite = try #require(error.flatMap(kiteError))
        #expect(kite.code == .responseTooLarge)
        #expect(kite.message.contains("limit of 30000 bytes"), "\(kite.message)")
        #expect(received.withLockedValue { $0 } <= 30_000)
    }

    @Test func theHeadArrivesBeforeTheBodyEnds() async throws {
        let base = try #require(URL(string: try await Backend.inProcess.baseURL()))
        let transport = KiteClientTransport(session: .openAPISuite)
        // Two events ten seconds apart: the first must be readable long before the second is written.
        let head = HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/sse?count=2&interval=10")
        let first = try await within(.seconds(8)) {
            let (_, body) = try await transport.send(head, body: nil, baseURL: base, operationID: "sse")
            for try await event in try #require(body).asDecodedServerSentEvents() where event.id != nil {
                return event
            }
            return OpenAPIRuntime.ServerSentEvent()
        }
        #expect(first.id == "0")
        #expect(first.event == "tick")
    }

    @Test func cancellingTheCallerWhileWaitingForTheHeadCancelsTheRequest() async throws {
        let (sent, sentContinuation) = AsyncStream<Void>.makeStream()
        let monitor = ClosureEventMonitor()
        let finished = FinishedRequests(monitor)
        // The adapter runs just before the head goes to the engine.
        let session = Session(
            interceptor: Adapter { request, _ in
                sentContinuation.yield()
                return request
            },
            eventMonitors: [monitor]
        )
        defer { Task { try await session.shutdown() } }
        let client = try await Backend.inProcess.client(session: session)
        let call = Task { try await client.delay(path: .init(seconds: 10)) }
        var events = sent.makeAsyncIterator()
        _ = await events.next()
        call.cancel()
        let error = await #expect(throws: (any Error).self) { try await within(.seconds(5)) { try await call.value } }
        #expect(error.flatMap(kiteError)?.code == .cancelled)
        #expect(await finished.next()?.code == .cancelled)
    }

    @Test func cancellingTheCallerWhileItReadsTheBodyStopsTheExchange() async throws {
        let client = try await Backend.inProcess.client()
        let body = try await client.drip(query: .init(numbytes: 10, duration: 20, delay: 0)).ok.body.binary
        let (firstChunk, firstChunkContinuation) = AsyncStream<Void>.makeStream()
        let reader = Task {
            var total = 0
            for try await chunk in body {
                total += chunk.count
                firstChunkContinuation.yield()
            }
            return total
        }
        var chunks = firstChunk.makeAsyncIterator()
        _ = await chunks.next()
        reader.cancel()
        let error = await #expect(throws: (any Error).self) { try await within(.seconds(5)) { try await reader.value } }
        #expect(error.flatMap(kiteError)?.code == .cancelled)
    }

    @Test func cancellingTheCallerWhileTheBodyIsSentStopsTheExchange() async throws {
        let client = try await Backend.inProcess.client()
        let chunks = CountingBody(["a first chunk"], holdsEnd: true)
        let body = HTTPBody(chunks, length: .unknown, iterationBehavior: .single)
        let call = Task { try await client.uploadBytes(body: .binary(body)) }
        var pulled = chunks.pulledAll.makeAsyncIterator()
        _ = await pulled.next()
        call.cancel()
        let error = await #expect(throws: (any Error).self) { try await within(.seconds(5)) { try await call.value } }
        #expect(error.flatMap(kiteError)?.code == .cancelled)
    }

    @Test func droppingAnUnfinishedBodyCancelsTheRequest() async throws {
        let monitor = ClosureEventMonitor()
        let finished = FinishedRequests(monitor)
        let session = Session(eventMonitors: [monitor])
        defer { Task { try await session.shutdown() } }
        let client = try await Backend.inProcess.client(session: session)
        do {
            let output = try await client.drip(query: .init(numbytes: 10, duration: 20, delay: 0))
            _ = try output.ok.body.binary  // held, never read, then dropped
        }
        let error = try await within(.seconds(5)) { await finished.next() }
        #expect(error?.code == .cancelled)
    }

    @Test func aHeadRequestHasNoBodyAndFinishesUncancelled() async throws {
        let monitor = ClosureEventMonitor()
        let finished = FinishedRequests(monitor)
        let session = Session(eventMonitors: [monitor])
        defer { Task { try await session.shutdown() } }
        let base = try #require(URL(string: try await Backend.inProcess.baseURL()))
        let transport = KiteClientTransport(session: session)
        let head = HTTPRequest(method: .head, scheme: nil, authority: nil, path: "/bytes/10")
        let (response, body) = try await transport.send(head, body: nil, baseURL: base, operationID: "head")
        #expect(response.status == .ok)
        #expect(body == nil)
        // The request ends as a success: the transport does not cancel it once it has the head.
        let error = try await within(.seconds(5)) { await finished.next() }
        #expect(error == nil)
    }

    /// A transport on a session over `mock`, and a count of the session's running requests. A request leaves
    /// them when it ends, before its handlers run, so it is gone by the time the end hands the head out.
    static func mockTransport(_ mock: MockTransport) -> (KiteClientTransport, running: () -> Int) {
        let session = Session(transport: mock)
        return (KiteClientTransport(session: session), { session.withAllRequests { $0.count } })
    }

    @Test func aBodyThatIsAllThereIsBufferedBeforeTheHeadIsHandedOut() async throws {
        let mock = MockTransport()
        mock.stub(.get, "http://api.test/small", response: .status(200, body: .string("a small body")))
        let (transport, running) = Self.mockTransport(mock)
        let get = HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/small")
        let base = try #require(URL(string: "http://api.test"))
        let (response, body) = try await transport.send(get, body: nil, baseURL: base, operationID: "small")
        // The caller wakes once: the request had ended, its body buffered, when the head was handed out.
        #expect(running() == 0)
        #expect(response.headerFields[.contentLength] == "12")
        let bytes = try await Data(collecting: try #require(body), upTo: 1 << 10)
        #expect(String(decoding: bytes, as: UTF8.self) == "a small body")
    }

    @Test func aBodyLargerThanTheBufferHandsTheHeadOutBeforeTheBufferIsFull() async throws {
        let mock = MockTransport()
        // Five 64 KiB parts: the stream buffers three before the pipeline would wait for the reader.
        let payload = Data((0..<(5 << 16)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        mock.stub(.get, "http://api.test/large", response: .status(200, body: .data(payload)))
        let (transport, running) = Self.mockTransport(mock)
        let get = HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/large")
        let base = try #require(URL(string: "http://api.test"))
        let (_, body) = try await within(.seconds(5)) {
            try await transport.send(get, body: nil, baseURL: base, operationID: "large")
        }
        #expect(running() == 1, "the body waits for its reader")
        let bytes = try await within(.seconds(5)) { try await Data(collecting: try #require(body), upTo: 1 << 20) }
        #expect(bytes == payload)
    }

    @Test func aServerURLWithAQueryKeepsItsPathAndTakesTheRequestsQuery() async throws {
        let server = try await Backend.inProcess.baseURL()
        let base = try #require(URL(string: server + "/?dropped=1"))
        let transport = KiteClientTransport(session: .openAPISuite)
        let get = HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/get?kept=2")
        let (response, body) = try await transport.send(get, body: nil, baseURL: base, operationID: "get")
        #expect(response.status == .ok)
        let bytes = try await Data(collecting: try #require(body), upTo: 1 << 20)
        let json = try #require(try JSONSerialization.jsonObject(with: bytes) as? [String: Any])
        #expect(json["args"] as? [String: String] == ["kept": "2"])
        #expect((json["url"] as? String)?.hasSuffix("/get?kept=2") == true)
    }

    @Test func aPathThatIsNotAURLIsAKiteError() async throws {
        let transport = KiteClientTransport(session: .openAPISuite)
        let head = HTTPRequest(method: .get, scheme: nil, authority: nil, path: "//[::1")
        let base = try #require(URL(string: "http://127.0.0.1:1"))
        let error = await #expect(throws: KiteError.self) {
            try await transport.send(head, body: nil, baseURL: base, operationID: "bad")
        }
        #expect(error?.code == .invalidURL)
    }

    @Test func theSessionsCacheAnswersTheSecondRequest() async throws {
        var configuration = Session.Configuration()
        configuration.cache = ResponseCache(memoryCapacity: 1 << 20, addsCacheStatusField: true)
        let session = Session(configuration: configuration)
        defer { Task { try await session.shutdown() } }
        let base = try #require(URL(string: try await Backend.inProcess.baseURL()))
        let transport = KiteClientTransport(session: session)
        let key = UUID().uuidString
        let head = HTTPRequest(
            method: .get,
            scheme: nil,
            authority: nil,
            path: "/cached/\(key)?Cache-Control=max-age%3D60"
        )
        let (_, firstBody) = try await transport.send(head, body: nil, baseURL: base, operationID: "cached")
        let first = try await String(collecting: try #require(firstBody), upTo: 1 << 16)
        let (second, secondBody) = try await transport.send(head, body: nil, baseURL: base, operationID: "cached")
        #expect(try await String(collecting: try #require(secondBody), upTo: 1 << 16) == first)
        #expect(second.headerFields[HTTPField.Name("Cache-Status")!]?.contains("hit") == true)
    }

    @Test func theOperationIDIsInTheLogAndTheSpan() async throws {
        let recorder = RecordingLogHandler.Recorder()
        let tracer = InMemoryTracer()
        var configuration = Session.Configuration()
        configuration.tracing = .tracer(tracer)
        let session = Session(configuration: configuration, logger: recorder.logger(level: .info))
        defer { Task { try await session.shutdown() } }
        let client = try await Backend.inProcess.client(session: session)
        _ = try await client.getJSON().ok.body.json
        let logged = recorder.all.compactMap { $0.metadata["openapi.operation_id"] }
        #expect(logged.map(\.description) == ["getJSON"])
        let span = try #require(tracer.finishedSpans.first)
        #expect(span.attributes["openapi.operation_id"]?.toSpanAttribute() == "getJSON")
    }
}

/// The errors requests of a session finished with, in order (`nil` for a success).
final class FinishedRequests: Sendable {
    let errors: AsyncStream<KiteError?>

    init(_ monitor: ClosureEventMonitor) {
        let (stream, continuation) = AsyncStream<KiteError?>.makeStream()
        self.errors = stream
        monitor.requestDidFinish = { request in continuation.yield(request.error) }
    }

    /// The next request's error; one caller at a time.
    func next() async -> KiteError? {
        await self.errors.first { _ in true } ?? nil
    }
}
