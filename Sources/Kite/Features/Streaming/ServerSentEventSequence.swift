import Foundation

/// The events of a Server-Sent Events stream (`text/event-stream`) that arrives as an asynchronous sequence of
/// `Data` chunks.
///
/// Parses as ``ServerSentEventParser`` does, following the WHATWG HTML standard: CRLF, LF or CR line endings across
/// any chunk boundary, comments ignored, `data` lines joined with LF, an event dispatched by a blank line, and an
/// incomplete event at the end of the stream discarded. A line longer than ``maximumLineLength`` bytes is an error,
/// and the sequence ends after it.
///
/// ```swift
/// let (chunks, continuation) = AsyncStream.makeStream(of: Data.self)
/// continuation.yield(Data(": welcome\nevent: price\nid: 1\ndata: 42\n\n".utf8))
/// continuation.finish()
/// for try await event in chunks.serverSentEvents() {
///     print(event.type, event.id ?? "", event.data)  // price 1 42
/// }
/// ```
public struct ServerSentEventSequence<Base: AsyncSequence>: AsyncSequence where Base.Element == Data {
    /// A dispatched event.
    public typealias Element = ServerSentEvent

    /// The chunks.
    public let base: Base

    /// The longest line allowed, in bytes without the line ending.
    public let maximumLineLength: Int

    /// The last event ID the stream starts with, such as the `Last-Event-ID` sent when reconnecting.
    public let lastEventID: String?

    /// Creates the sequence of the events of `base`.
    ///
    /// ```swift
    /// let events = ServerSentEventSequence(chunks, lastEventID: "41")
    /// ```
    ///
    /// - Parameters:
    ///   - base: The chunks of the stream.
    ///   - maximumLineLength: The longest line allowed, in bytes without the line ending; 1 MiB by default.
    ///   - lastEventID: The last event ID to start with; events carry it until the stream sends an `id` field.
    public init(
        _ base: Base,
        maximumLineLength: Int = UTF8LineParser.defaultMaximumLineLength,
        lastEventID: String? = nil
    ) {
        self.base = base
        self.maximumLineLength = maximumLineLength
        self.lastEventID = lastEventID
    }

    /// Creates an iterator over the events.
    ///
    /// - Returns: The iterator.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(
            core: ChunkParsingIterator(
                base: self.base.makeAsyncIterator(),
                parser: ServerSentEventParser(
                    maximumLineLength: self.maximumLineLength,
                    lastEventID: self.lastEventID
                )
            )
        )
    }

    /// The iterator of a ``ServerSentEventSequence``.
    ///
    /// Besides the events, it tells what a reconnection needs: the last event ID and the reconnection time.
    ///
    /// ```swift
    /// var iterator = chunks.serverSentEvents().makeAsyncIterator()
    /// while let event = try await iterator.next() {
    ///     print(event.data)
    /// }
    /// print(iterator.lastEventID ?? "no ID", iterator.reconnectionTime ?? .seconds(3))
    /// ```
    public struct AsyncIterator: AsyncIteratorProtocol {
        private var core: ChunkParsingIterator<Base.AsyncIterator, ServerSentEventParser>

        fileprivate init(core: ChunkParsingIterator<Base.AsyncIterator, ServerSentEventParser>) {
            self.core = core
        }

        /// The last event ID so far, as ``ServerSentEventParser/lastEventID``.
        public var lastEventID: String? {
            self.core.currentParser.lastEventID
        }

        /// The latest reconnection time the stream set, as ``ServerSentEventParser/reconnectionTime``.
        public var reconnectionTime: Duration? {
            self.core.currentParser.reconnectionTime
        }

        /// The next event.
        ///
        /// - Returns: The next dispatched event, or `nil` when the stream has ended.
        /// - Throws: The base sequence's error, or a ``KiteError`` with code
        ///   ``KiteError/Code-swift.struct/streamLineTooLong`` for a line that is too long.
        public mutating func next() async throws -> ServerSentEvent? {
            try await self.core.next()
        }
    }
}

extension ServerSentEventSequence: Sendable where Base: Sendable {}
