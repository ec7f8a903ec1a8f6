import Foundation
import HTTPTypes
import HTTPTypesFoundation
import NIOConcurrencyHelpers
import NIOCore
import NIOFoundationCompat

/// An engine that answers requests from stubs instead of the network, for testing code that uses Kite.
///
/// Give it to a ``Session`` with
/// ``Session/init(configuration:transport:callbackQueue:logger:interceptor:redirectHandler:eventMonitors:)``
/// and everything above the engine runs as it does against a server: adapters, redirects, retries,
/// validation, serializers, progress, downloads to disk and timeouts. No socket is opened.
///
/// Each request is matched against the stubs in the order they were added (method, URL and header
/// fields, see ``Stub``); the first that matches and is not used up answers it with a status, header
/// fields and a body, with an error, or with a closure (see ``Response``). Every request is recorded,
/// head and body bytes, in ``requests``. A request no stub matches fails with
/// ``KiteError/Code-swift.struct/connectionFailed``, as a request to a host without a server would, and
/// the message lists the request and every stub.
///
/// ```swift
/// let mock = MockTransport()
/// mock.stub(.get, "https://api.example.com/users/1", response: .status(200, body: .json(["name": "Ada"])))
/// mock.stub(.post, .prefix("https://api.example.com/users"), response: .status(201))
///
/// let session = Session(transport: mock)
/// let user = try await session.request("https://api.example.com/users/1")
///     .validate()
///     .serializingDecodable([String: String].self)
///     .value
/// print(user["name"] ?? "")  // Ada
/// print(mock.requests.map(\.description))  // ["GET https://api.example.com/users/1"]
/// ```
///
/// One mock may serve several sessions, and its stubs may change while requests run; it is safe to use
/// from any task.
public final class MockTransport: Sendable {
    /// A stub as registered, with how many requests it answered.
    struct Entry: Sendable {
        var stub: Stub
        var uses = 0
        let id: Int

        /// Whether the stub may answer one more request.
        var isAvailable: Bool {
            guard let times = self.stub.times else { return true }
            return self.uses < times
        }
    }

    struct State: Sendable {
        var entries: [Entry] = []
        var requests: [Request] = []
        var nextID = 0
    }

    private let state = NIOLockedValueBox(State())

    /// Creates a mock transport that answers with `stubs`, tried in order.
    ///
    /// ```swift
    /// let mock = MockTransport([
    ///     MockTransport.Stub(.get, "http://api.test/health", response: .status(204)),
    ///     MockTransport.Stub(.prefix("http://api.test/"), response: .status(404, body: .string("no such page"))),
    /// ])
    /// ```
    ///
    /// - Parameter stubs: The first stubs; add more with ``stub(_:)``.
    public init(_ stubs: [Stub] = []) {
        for stub in stubs {
            self.stub(stub)
        }
    }

    /// Adds a stub after the ones already added: it answers requests that no earlier stub answers.
    ///
    /// ```swift
    /// let mock = MockTransport()
    /// mock.stub(MockTransport.Stub(.get, "http://api.test/users", response: .status(200, body: .json([1, 2, 3]))))
    /// ```
    ///
    /// - Parameter stub: The stub.
    public func stub(_ stub: Stub) {
        self.state.withLockedValue { state in
            state.entries.append(Entry(stub: stub, id: state.nextID))
            state.nextID += 1
        }
    }

    /// Adds a stub for requests with `method` after the ones already added.
    ///
    /// ```swift
    /// let mock = MockTransport()
    /// // The first attempt gets a 503, every later one a 200.
    /// mock.stub(.get, "http://api.test/report", times: 1, response: .status(503))
    /// mock.stub(.get, "http://api.test/report", response: .status(200, body: .string("ready")))
    /// ```
    ///
    /// - Parameters:
    ///   - method: The method a request must have; `nil` matches every method.
    ///   - url: What the request's URL must match; a string literal is an exact URL.
    ///   - headers: Header fields the request must carry, each with the same value.
    ///   - times: How many requests the stub answers at most; `nil` answers every matching request.
    ///   - response: What the stub answers.
    public func stub(
        _ method: HTTPRequest.Method?,
        _ url: URLPattern,
        headers: HTTPFields = [:],
        times: Int? = nil,
        response: Response
    ) {
        self.stub(Stub(method, url, headers: headers, times: times, response: response))
    }

    /// Adds a stub for requests with any method after the ones already added.
    ///
    /// ```swift
    /// let mock = MockTransport()
    /// mock.stub(.prefix("http://api.test/admin/"), response: .status(403))
    /// mock.stub(.any, response: .status(404))  // everything else
    /// ```
    ///
    /// - Parameters:
    ///   - url: What the request's URL must match; a string literal is an exact URL.
    ///   - headers: Header fields the request must carry, each with the same value.
    ///   - times: How many requests the stub answers at most; `nil` answers every matching request.
    ///   - response: What the stub answers.
    public func stub(
        _ url: URLPattern,
        headers: HTTPFields = [:],
        times: Int? = nil,
        response: Response
    ) {
        self.stub(Stub(nil, url, headers: headers, times: times, response: response))
    }

    /// The stubs, in the order they are tried (used-up ones included).
    ///
    /// ```swift
    /// for stub in mock.stubs { print(stub) }  // GET exactly http://api.test/users → status 200, 7 bytes
    /// ```
    public var stubs: [Stub] {
        self.state.withLockedValue { $0.entries.map(\.stub) }
    }

    /// Removes every stub; requests made afterwards fail until new stubs are added. Recorded requests stay.
    ///
    /// ```swift
    /// mock.removeAllStubs()
    /// mock.stub(.get, .prefix("http://api.test/"), response: .status(500))
    /// ```
    public func removeAllStubs() {
        self.state.withLockedValue { $0.entries.removeAll() }
    }

    /// Every request the mock received, in the order they arrived: as sent, after adapters and
    /// redirects, with their body bytes. A request is recorded whether or not a stub answered it.
    ///
    /// ```swift
    /// _ = await session.upload(Data("hi".utf8), to: "http://api.test/notes").serializingData().response
    /// let sent = try #require(mock.requests.last)
    /// #expect(sent.method == .post)
    /// #expect(sent.body == Data("hi".utf8))
    /// ```
    public var requests: [Request] {
        self.state.withLockedValue { $0.requests }
    }

    /// Forgets the recorded requests; the stubs and their use counts stay.
    ///
    /// ```swift
    /// mock.removeAllRequests()
    /// #expect(mock.requests.isEmpty)
    /// ```
    public func removeAllRequests() {
        self.state.withLockedValue { $0.requests.removeAll() }
    }

    /// Removes every stub and every recorded request, as a new mock has none.
    ///
    /// ```swift
    /// mock.reset()
    /// #expect(mock.stubs.isEmpty && mock.requests.isEmpty)
    /// ```
    public func reset() {
        self.state.withLockedValue { $0 = State() }
    }

    /// The first available stub that matches `head`, counted as used; `nil` when none does.
    ///
    /// Matchers run outside the lock (a closure may be slow or read the mock), then the stub is claimed
    /// under it; one used up in between by a concurrent request is passed over.
    private func claimStub(for head: HTTPRequest, url: String) -> Stub? {
        let entries = self.state.withLockedValue { $0.entries }
        for entry in entries where entry.isAvailable && entry.stub.matches(head, url: url) {
            let claimed = self.state.withLockedValue { state -> Bool in
                guard let index = state.entries.firstIndex(where: { $0.id == entry.id }),
                    state.entries[index].isAvailable
                else { return false }
                state.entries[index].uses += 1
                return true
            }
            if claimed {
                return entry.stub
            }
        }
        return nil
    }

    /// The error of a request no stub answers: the request, then every stub on a line of its own.
    private func unmatchedError(for head: HTTPRequest) -> KiteError {
        let entries = self.state.withLockedValue { $0.entries }
        let request = RequestSummary(head)
        guard !entries.isEmpty else {
            return KiteError(
                code: .connectionFailed,
                message: "no stub matches \(request): the MockTransport has no stubs"
            )
        }
        var message = "no stub matches \(request); the stubs, in the order they are tried:"
        for (index, entry) in entries.enumerated() {
            message += "\n\(index + 1). \(entry.stub.description(uses: entry.uses))"
        }
        return KiteError(code: .connectionFailed, message: message)
    }
}

extension MockTransport: Transport {
    nonisolated(nonsending) func send(_ request: TransportRequest) async throws(KiteError) -> TransportResponse {
        if Task.isCancelled {
            throw Self.cancelled
        }
        let (body, bodyError) = await Self.read(request.body)
        let recorded = Request(head: request.head, body: body)
        self.state.withLockedValue { $0.requests.append(recorded) }
        if let bodyError {
            throw bodyError
        }
        guard let stub = self.claimStub(for: request.head, url: recorded.urlString) else {
            throw self.unmatchedError(for: request.head)
        }
        return try await stub.response.answer(recorded, deadline: request.deadline)
    }

    func shutdown() async throws(KiteError) {}

    func shutdownInBackground() {}

    /// Reads a request body whole, as a server would before answering: its bytes, `nil` for no body, and
    /// the error that stopped it (the bytes read until then are kept).
    private static func read(_ body: TransportRequestBody?) async -> (Data?, KiteError?) {
        switch body {
        case .none:
            return (nil, nil)
        case .bytes(let buffer):
            return (Data(buffer: buffer), nil)
        case .stream(let length, _, let makeChunks):
            var collected = ByteBuffer()
            do {
                for try await var chunk in makeChunks() {
                    collected.writeBuffer(&chunk)
                }
            } catch let error as KiteError {
                return (Data(buffer: collected), error)
            } catch is CancellationError {
                return (Data(buffer: collected), Self.cancelled)
            } catch {
                let failure = KiteError(
                    code: .uploadFailed,
                    message: "the request body's stream failed",
                    underlyingError: error
                )
                return (Data(buffer: collected), failure)
            }
            if let length, length != Int64(collected.readableBytes) {
                // What the engine reports for a body whose length differs from its Content-Length.
                let failure = KiteError(
                    code: .invalidRequest,
                    message: "the request body's length differs from its declared Content-Length"
                )
                return (Data(buffer: collected), failure)
            }
            return (Data(buffer: collected), nil)
        }
    }

    /// What the engine reports for a cancelled exchange.
    static let cancelled = KiteError(code: .cancelled, message: "the request was cancelled")

    /// What the engine reports when the request's deadline passes.
    static let deadlineExceeded = KiteError(code: .timedOut, message: "the total timeout expired", timeout: .total)

    /// Waits `delay`, or until `deadline` when that comes first, and then fails as the engine does when the
    /// deadline passes; cancelling the task ends the wait at once.
    static func pause(_ delay: Duration, deadline: NIODeadline?) async throws(KiteError) {
        let now = ContinuousClock.now
        let wake = now.advanced(by: delay)
        if let deadline {
            let end = now.advanced(by: NIODeadline.now().duration(to: deadline))
            if end < wake {
                try await Self.sleep(until: end)
                throw Self.deadlineExceeded
            }
        }
        try await Self.sleep(until: wake)
    }

    private static func sleep(until instant: ContinuousClock.Instant) async throws(KiteError) {
        do {
            try await Task.sleep(until: instant, clock: .continuous)
        } catch {
            throw Self.cancelled
        }
    }
}

/// A ``MockTransport`` as one session's engine: the session's ``Session/shutdown()`` stops this session's
/// requests (with `sessionShutDown`, as the real engine does) without touching the mock other sessions share.
final class MockSessionTransport: Transport {
    let mock: MockTransport
    private let isShutDown = NIOLockedValueBox(false)

    init(_ mock: MockTransport) {
        self.mock = mock
    }

    nonisolated(nonsending) func send(_ request: TransportRequest) async throws(KiteError) -> TransportResponse {
        if self.isShutDown.withLockedValue({ $0 }) {
            throw KiteError(code: .sessionShutDown, message: "the session was shut down")
        }
        return try await self.mock.send(request)
    }

    func shutdown() async throws(KiteError) {
        self.isShutDown.withLockedValue { $0 = true }
    }

    func shutdownInBackground() {
        self.isShutDown.withLockedValue { $0 = true }
    }
}
