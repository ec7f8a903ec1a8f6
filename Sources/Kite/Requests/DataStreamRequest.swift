import Dispatch
import Foundation
import HTTPTypes
import NIOConcurrencyHelpers
import NIOCore
import NIOFoundationCompat

/// A request whose response body is delivered as it arrives, never collected whole.
///
/// Read it as an async sequence of `Data` chunks (or of lines, JSON values or server-sent events),
/// or with a closure on a queue. Delivery has backpressure: a slow reader slows the download and
/// memory stays bounded. Validation runs on the response head, before any body is delivered.
///
/// ```swift
/// let request = session.streamRequest("http://127.0.0.1:8080/stream/3").validate()
/// for try await chunk in request.streamingData() {
///     print(chunk.count)
/// }
/// ```
///
/// Readers attached after the body started miss the chunks delivered before them.
// @unchecked: adds no stored state to BaseRequest: its readers are in the request's state machine.
public final class DataStreamRequest: BaseRequest, @unchecked Sendable {
    /// One delivery to a closure reader: a chunk or the end.
    public struct Stream: Sendable {
        /// What happened.
        public let event: Event
        private let request: DataStreamRequest

        init(event: Event, request: DataStreamRequest) {
            self.event = event
            self.request = request
        }

        /// Cancels the request from inside the handler.
        public func cancel() {
            self.request.cancel()
        }
    }

    /// What a closure reader is told.
    public enum Event: Sendable {
        /// A chunk of the body.
        case data(Data)
        /// The request is over.
        case complete(Completion)
    }

    /// How a stream ended.
    public struct Completion: Sendable {
        /// The request head as sent.
        public let request: HTTPRequest?
        /// The response head.
        public let response: HTTPResponse?
        /// The timeline.
        public let metrics: ResponseMetrics?
        /// Why it failed, if it did (including validation and cancellation).
        public let error: KiteError?

        init(_ outcome: RequestOutcome) {
            self.request = outcome.request
            self.response = outcome.response
            self.metrics = outcome.metrics
            self.error = outcome.error
        }
    }

    /// A stream validator's check of the response head.
    public typealias Validation =
        @Sendable (_ request: HTTPRequest?, _ response: HTTPResponse) -> Result<Void, any Error>

    init(session: Session, draft: Result<RequestDraft, KiteError>, body: RequestBodySource = .draft) {
        super.init(session: session, draft: draft, sink: StreamSink(), body: body)
    }

    /// Limits how large this stream's response body may be: a body with a larger `Content-Length` fails with
    /// `responseTooLarge` before any of it is delivered, and one that grows past the limit fails when it does,
    /// after the bytes before. A stream has no limit otherwise: it does not hold its body, so
    /// ``Session/Configuration/maximumResponseSize`` (for bodies held in memory) does not apply. Call it before
    /// the request starts.
    ///
    /// ```swift
    /// for try await chunk in session.streamRequest("http://127.0.0.1:8080/stream-bytes/4096")
    ///     .limitResponseSize(to: 1024)
    ///     .streamingData() {
    ///     print(chunk.count)  // then throws: the response body exceeds the limit of 1024 bytes (… bytes arrived)
    /// }
    /// ```
    ///
    /// - Parameter bytes: The limit in bytes, or `nil` for none.
    /// - Returns: The request.
    @discardableResult
    public func limitResponseSize(to bytes: Int64?) -> Self {
        self.machine.withLockedValue { $0.record.maximumResponseSize = .some(bytes) }
        return self
    }

    /// Registers an async reader and starts the request if so configured.
    func subscribe(automaticallyCancelling: Bool) -> DataStream {
        let subscription = StreamSubscription()
        self.machine.withLockedValue { $0.record.streamReaders.append(.subscription(subscription)) }
        self.appendHandler { outcome in subscription.finish(with: outcome.error) }
        return DataStream(subscription: subscription, request: automaticallyCancelling ? self : nil)
    }

    /// Calls `handler` on `queue` with each chunk as it arrives and once more when the request is over.
    /// The next chunk is not delivered until `handler` has returned, so a slow handler slows the download.
    ///
    /// ```swift
    /// session.streamRequest("http://127.0.0.1:8080/stream/5").responseStream { stream in
    ///     switch stream.event {
    ///     case .data(let chunk): if chunk.isEmpty { stream.cancel() }
    ///     case .complete(let completion): print(completion.error as Any)
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - queue: Where `handler` runs; the session's ``Session/callbackQueue`` by default.
    ///   - handler: Receives each chunk and the completion.
    /// - Returns: The request.
    @discardableResult
    public func responseStream(
        on queue: DispatchQueue? = nil,
        stream handler: @escaping @Sendable (Stream) -> Void
    ) -> Self {
        let queue = queue ?? self.context.callbackQueue
        let reader = StreamSink.Reader.closure(queue) { [weak self] data in
            guard let self else { return }
            handler(Stream(event: .data(data), request: self))
        }
        self.machine.withLockedValue { $0.record.streamReaders.append(reader) }
        self.appendHandler { [self] outcome in
            let completion = Completion(outcome)
            let stream = Stream(event: .complete(completion), request: self)
            queue.async { handler(stream) }
        }
        return self
    }

    /// The body as an async sequence of chunks, as they arrive. Ends when the response does; throws
    /// the request's ``KiteError`` (validation, cancellation, a broken connection).
    ///
    /// ```swift
    /// for try await chunk in session.streamRequest("http://127.0.0.1:8080/drip?numbytes=5").streamingData() {
    ///     print(chunk)
    /// }
    /// ```
    ///
    /// - Parameter automaticallyCancelling: Whether stopping the iteration (leaving the loop or
    ///   cancelling the task) cancels the request.
    /// - Returns: The sequence.
    public func streamingData(automaticallyCancelling: Bool = true) -> DataStream {
        self.subscribe(automaticallyCancelling: automaticallyCancelling)
    }

    /// The body as UTF-8 lines (`\n` or `\r\n` endings, split correctly across chunks).
    ///
    /// ```swift
    /// for try await line in session.streamRequest("http://127.0.0.1:8080/stream/3").streamingLines() {
    ///     print(line)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - maximumLineLength: The longest line accepted, in bytes; a longer one fails with `streamLineTooLong`.
    ///   - automaticallyCancelling: Whether stopping the iteration cancels the request.
    /// - Returns: The sequence.
    public func streamingLines(
        maximumLineLength: Int = UTF8LineParser.defaultMaximumLineLength,
        automaticallyCancelling: Bool = true
    ) -> UTF8LineSequence<DataStream> {
        self.streamingData(automaticallyCancelling: automaticallyCancelling).utf8Lines(
            maximumLineLength: maximumLineLength
        )
    }

    /// The body as newline-delimited JSON, one `Value` per non-blank line.
    ///
    /// ```swift
    /// struct Item: Decodable, Sendable { let id: Int }
    /// for try await item in session.streamRequest("http://127.0.0.1:8080/stream/3").streamingJSONLines(of: Item.self) {
    ///     print(item.id)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - type: The type of each line.
    ///   - decoder: The decoder; `JSONDecoder` by default.
    ///   - automaticallyCancelling: Whether stopping the iteration cancels the request.
    /// - Returns: The sequence; a line that does not decode fails with `streamDecodingFailed` naming its number.
    public func streamingJSONLines<Value: Decodable & Sendable>(
        of type: Value.Type = Value.self,
        decoder: any DataDecoder = JSONDecoder(),
        automaticallyCancelling: Bool = true
    ) -> JSONLinesSequence<DataStream, Value> {
        self.streamingData(automaticallyCancelling: automaticallyCancelling).jsonLines(of: type, decoder: decoder)
    }

    /// The body as Server-Sent Events (`text/event-stream`): event, data, id and retry fields, comments skipped.
    ///
    /// ```swift
    /// for try await event in session.streamRequest("http://127.0.0.1:8080/sse?count=3").streamingServerSentEvents() {
    ///     print(event.type, event.data)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - lastEventID: The last event ID seen before, when reconnecting.
    ///   - automaticallyCancelling: Whether stopping the iteration cancels the request.
    /// - Returns: The sequence.
    public func streamingServerSentEvents(
        lastEventID: String? = nil,
        automaticallyCancelling: Bool = true
    ) -> ServerSentEventSequence<DataStream> {
        self.streamingData(automaticallyCancelling: automaticallyCancelling).serverSentEvents(lastEventID: lastEventID)
    }

    /// Adds a check of the response head, run before any body is delivered.
    ///
    /// ```swift
    /// session.streamRequest(url).validate { _, response in
    ///     response.headerFields[.contentType] == "text/event-stream" ? .success(()) : .failure(KiteError(code: .responseValidationFailed, message: "not SSE"))
    /// }
    /// ```
    ///
    /// - Parameter validation: The check.
    /// - Returns: The request.
    @discardableResult
    public func validate(_ validation: @escaping Validation) -> Self {
        self.appendValidator(
            ResponseValidation.validator { outcome, response in
                validation(outcome.request, response)
            }
        )
        return self
    }

    /// Fails the stream unless its status code is in `acceptableStatusCodes`.
    ///
    /// ```swift
    /// session.streamRequest("http://127.0.0.1:8080/status/500").validate(statusCode: 200..<300)
    /// ```
    ///
    /// - Parameter acceptableStatusCodes: The accepted codes.
    /// - Returns: The request.
    @discardableResult
    public func validate<Codes: Sequence & Sendable>(statusCode acceptableStatusCodes: Codes) -> Self
    where Codes.Element == Int {
        self.validate { _, response in ResponseValidation.status(response, in: acceptableStatusCodes) }
    }

    /// Fails the stream unless its `Content-Type` matches one of `acceptableContentTypes`.
    ///
    /// ```swift
    /// session.streamRequest(url).validate(contentType: ["text/event-stream"])
    /// ```
    ///
    /// - Parameter acceptableContentTypes: The accepted media types.
    /// - Returns: The request.
    @discardableResult
    public func validate(contentType acceptableContentTypes: [String]) -> Self {
        self.validate { _, response in
            ResponseValidation.contentType(
                response,
                bodyIsEmpty: Self.isEmpty(response),
                acceptable: acceptableContentTypes
            )
        }
    }

    /// Fails the stream unless its status is in `200..<300` and, when the request has an `Accept`
    /// header, its `Content-Type` matches it.
    ///
    /// ```swift
    /// let stream = session.streamRequest("http://127.0.0.1:8080/stream/3").validate().streamingData()
    /// ```
    ///
    /// - Returns: The request.
    @discardableResult
    public func validate() -> Self {
        self.appendValidator(
            ResponseValidation.standard { _, response in Self.isEmpty(response) }
        )
        return self
    }

    private static func isEmpty(_ response: HTTPResponse) -> Bool {
        response.headerFields[.contentLength] == "0"
    }
}

/// A stream request's body as an async sequence of `Data` chunks.
///
/// ```swift
/// for try await chunk in session.streamRequest("http://127.0.0.1:8080/stream-bytes/1000").streamingData() {
///     print(chunk.count)
/// }
/// ```
public struct DataStream: AsyncSequence, Sendable {
    public typealias Element = Data
    public typealias Failure = KiteError

    let subscription: StreamSubscription
    /// The request to cancel when the reader stops early, if it should be.
    let request: DataStreamRequest?

    /// Reads the chunks in order.
    public struct AsyncIterator: AsyncIteratorProtocol {
        private let reader: Reader

        init(subscription: StreamSubscription, request: DataStreamRequest?) {
            self.reader = Reader(subscription: subscription, request: request)
        }

        public typealias Failure = KiteError

        /// The next chunk, or `nil` at the end.
        ///
        /// - Throws: The request's ``KiteError``.
        public mutating func next() async throws(KiteError) -> Data? {
            try await self.reader.next()
        }

        /// The next chunk, or `nil` at the end.
        ///
        /// - Parameter actor: The caller's isolation (unused: the chunks come from the pipeline).
        /// - Throws: The request's ``KiteError``.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(KiteError) -> Data? {
            try await self.reader.next()
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(subscription: self.subscription, request: self.request)
    }

    /// Tells the subscription when its reader goes away, so the pipeline never waits for it again.
    final class Reader: Sendable {
        let subscription: StreamSubscription
        let request: DataStreamRequest?
        private let finished = NIOLockedValueBox(false)

        init(subscription: StreamSubscription, request: DataStreamRequest?) {
            self.subscription = subscription
            self.request = request
        }

        deinit {
            if !self.finished.withLockedValue({ $0 }) {
                self.subscription.consumerLeft()
                self.request?.cancel()
            }
        }

        func next() async throws(KiteError) -> Data? {
            do {
                let chunk = try await withTaskCancellationHandler {
                    try await self.subscription.next()
                } onCancel: {
                    self.subscription.consumerLeft()
                    self.request?.cancel()
                }
                if chunk == nil { self.finished.withLockedValue { $0 = true } }
                return chunk
            } catch let error as KiteError {
                self.finished.withLockedValue { $0 = true }
                throw error
            } catch {
                self.finished.withLockedValue { $0 = true }
                throw self.request?.cancellationError
                    ?? KiteError(code: .cancelled, message: "the stream was cancelled")
            }
        }
    }
}
