import Foundation

/// An incremental parser of a Server-Sent Events stream (`text/event-stream`): feed it chunks of bytes, it returns
/// the events they complete.
///
/// Follows "Interpreting an event stream" of the WHATWG HTML standard (§9.2.6):
///
/// - Lines end with CRLF, LF or CR, also when a CR ends one chunk and the LF starts the next.
/// - A UTF-8 byte order mark at the very start of the stream is skipped; bytes that are not valid UTF-8 become
///   U+FFFD REPLACEMENT CHARACTER.
/// - A line starting with `:` is a comment and is ignored.
/// - `name: value` sets a field; one space after the colon is dropped. A line without a colon is a field name with
///   an empty value. Field names are case-sensitive; unknown fields are ignored.
/// - `event` sets the event type; `data` appends its value and an LF to the data; `id` sets the last event ID,
///   unless the value contains U+0000 NULL; `retry` sets the reconnection time in milliseconds, only if the value
///   is ASCII digits.
/// - A blank line dispatches the event, but only if some `data` field was seen (even an empty one); the final LF of
///   the data is removed. The last event ID persists across events until an `id` field changes it.
/// - At the end of the stream an event not yet followed by a blank line is discarded.
///
/// A line longer than ``maximumLineLength`` bytes, or an event whose data grows past ``maximumEventLength`` bytes
/// (many `data` lines and no blank line), is an error rather than a buffer that grows without bound. After an error,
/// every later call throws the same error.
///
/// ```swift
/// var parser = ServerSentEventParser()
/// var events = try parser.parse(Data("event: add\ndata: 7385".utf8))  // []
/// events += try parser.parse(Data("7293\r\n\r\n".utf8))
/// print(events == [ServerSentEvent(event: "add", data: "73857293")])  // true
/// ```
///
/// ``ServerSentEventSequence`` is the same parser over an `AsyncSequence` of chunks.
public struct ServerSentEventParser: Sendable {
    /// The longest line allowed, in bytes of UTF-8 without the line ending.
    public var maximumLineLength: Int { self.splitter.maximumLineLength }

    /// The most data one event may gather, in bytes; 16 MiB by default.
    public var maximumEventLength: Int { self.state.maximumDataLength }

    /// The default ``maximumEventLength``: 16 MiB.
    public static let defaultMaximumEventLength = 16 * 1024 * 1024

    /// The last event ID: the value of the most recent `id` field of a dispatched block, to send as the
    /// `Last-Event-ID` header when reconnecting; `nil` when there is none or the stream reset it with an empty `id`.
    ///
    /// It changes when a blank line ends a block, whether or not the block dispatched an event, and outlives
    /// ``finish()``, so one parser can follow a stream across reconnections.
    public var lastEventID: String? {
        self.state.lastEventID.isEmpty ? nil : self.state.lastEventID
    }

    /// The most recent reconnection time the stream set with a `retry` field, if any; it outlives ``finish()``.
    public var reconnectionTime: Duration? {
        self.state.reconnectionTime
    }

    private var splitter: LineSplitter
    private var state: EventState
    private var failure: KiteError?

    /// Creates a parser.
    ///
    /// ```swift
    /// // Reconnecting after event 41 was received.
    /// var parser = ServerSentEventParser(lastEventID: "41")
    /// ```
    ///
    /// - Parameters:
    ///   - maximumLineLength: The longest line allowed, in bytes without the line ending; 1 MiB by default.
    ///   - maximumEventLength: The most data one event may gather, in bytes; 16 MiB by default.
    ///   - lastEventID: The last event ID to start with, such as the one sent as `Last-Event-ID` on reconnecting.
    public init(
        maximumLineLength: Int = UTF8LineParser.defaultMaximumLineLength,
        maximumEventLength: Int = Self.defaultMaximumEventLength,
        lastEventID: String? = nil
    ) {
        self.splitter = LineSplitter(terminators: .anyNewline, maximumLineLength: maximumLineLength)
        self.state = EventState(lastEventID: lastEventID ?? "", maximumDataLength: max(0, maximumEventLength))
    }

    /// Parses the next chunk of the stream.
    ///
    /// ```swift
    /// var parser = ServerSentEventParser()
    /// let events = try parser.parse(Data(": keep-alive\ndata: hello\n\n".utf8))
    /// print(events.map(\.data))  // ["hello"]
    /// ```
    ///
    /// - Parameter chunk: The next bytes of the stream.
    /// - Returns: The events dispatched by the blank lines this chunk completes.
    /// - Throws: A ``KiteError`` with code ``KiteError/Code-swift.struct/streamLineTooLong`` when a line is longer than
    ///   ``maximumLineLength``.
    ///   When a line fails after others of the chunk completed, their events are returned and the next call throws
    ///   the error: nothing completed before it is lost.
    public mutating func parse(_ chunk: Data) throws -> [ServerSentEvent] {
        if let failure { throw failure }
        do {
            try self.splitter.split(chunk, into: &self.state, emit: EventState.process)
            if let line = self.state.overflowLine {
                throw KiteError(
                    code: .streamLineTooLong,
                    message: "the event ending at line \(line) of the stream has more than \(self.maximumEventLength) "
                        + "bytes of data (the maximum event length)"
                )
            }
        } catch {
            let failure = error as? KiteError ?? KiteError(code: .streamDecodingFailed, message: "\(error)")
            self.failure = failure
            self.splitter.reset()
            // The events dispatched before the failure are delivered; the next call throws.
            let dispatched = self.state.takeEvents()
            self.state.discardStream()
            if dispatched.isEmpty { throw failure }
            return dispatched
        }
        return self.state.takeEvents()
    }

    /// Ends the stream, discarding an event that no blank line dispatched, as the standard requires.
    ///
    /// Afterwards the parser is ready for a new stream, such as the one after a reconnection; ``lastEventID`` and
    /// ``reconnectionTime`` are kept.
    ///
    /// ```swift
    /// var parser = ServerSentEventParser()
    /// _ = try parser.parse(Data("id: 7\n\ndata: incomplete\n".utf8))
    /// let rest = try parser.finish()  // []
    /// print(parser.lastEventID ?? "none")  // 7
    /// ```
    ///
    /// - Returns: Nothing: a complete event was already returned by ``parse(_:)``. The result is an array so that
    ///   all of Kite's stream parsers finish alike.
    /// - Throws: The error of an earlier call, if one failed.
    public mutating func finish() throws -> [ServerSentEvent] {
        if let failure { throw failure }
        self.splitter.reset()
        self.state.discardStream()
        return []
    }
}

extension ServerSentEventParser: ChunkParser {}

/// The buffers of "Interpreting an event stream", and the events dispatched but not yet returned.
private struct EventState {
    private static let colon = UInt8(ascii: ":")
    private static let space = UInt8(ascii: " ")
    private static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

    /// The last event ID string: the ID buffer as of the latest dispatch.
    private(set) var lastEventID: String
    private(set) var reconnectionTime: Duration?
    private var lastEventIDBuffer: String
    private var eventTypeBuffer = ""
    private var dataBuffer = ""
    /// A `retry` value not yet attached to a dispatched event.
    private var pendingRetry: Duration?
    private var isAtStreamStart = true
    private var events: [ServerSentEvent] = []

    /// The most data one event may gather.
    let maximumDataLength: Int
    /// The line at which the data outgrew ``maximumDataLength``, if it did.
    private(set) var overflowLine: Int?

    init(lastEventID: String, maximumDataLength: Int) {
        self.lastEventID = lastEventID
        self.lastEventIDBuffer = lastEventID
        self.maximumDataLength = maximumDataLength
    }

    /// Returns the dispatched events and forgets them.
    mutating func takeEvents() -> [ServerSentEvent] {
        defer { self.events = [] }
        return self.events
    }

    /// Forgets everything of the current stream but the last event ID string and the reconnection time.
    mutating func discardStream() {
        self.lastEventIDBuffer = self.lastEventID
        self.eventTypeBuffer = ""
        self.dataBuffer = ""
        self.pendingRetry = nil
        self.overflowLine = nil
        self.isAtStreamStart = true
        self.events = []
    }

    /// Processes one line of the stream, without its line ending.
    static func process(into state: inout EventState, line: UnsafeRawBufferPointer, number: Int) {
        var line = line
        if state.isAtStreamStart {
            state.isAtStreamStart = false
            if line.starts(with: Self.byteOrderMark) {
                line = UnsafeRawBufferPointer(rebasing: line.dropFirst(Self.byteOrderMark.count))
            }
        }
        guard let first = line.first else {
            state.dispatch()
            return
        }
        guard first != Self.colon else { return }
        guard let colon = line.firstIndex(of: Self.colon) else {
            state.process(field: line, value: UnsafeRawBufferPointer(rebasing: line[line.endIndex...]), number: number)
            return
        }
        var valueStart = colon + 1
        if valueStart < line.endIndex, line[valueStart] == Self.space {
            valueStart += 1
        }
        state.process(
            field: UnsafeRawBufferPointer(rebasing: line[..<colon]),
            value: UnsafeRawBufferPointer(rebasing: line[valueStart...]),
            number: number
        )
    }

    private mutating func process(field: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, number: Int) {
        if field.elementsEqual("data".utf8) {
            guard self.overflowLine == nil else { return }
            guard self.dataBuffer.utf8.count + value.count + 1 <= self.maximumDataLength else {
                self.overflowLine = number
                return
            }
            self.dataBuffer += String(decoding: value, as: UTF8.self)
            self.dataBuffer += "\n"
        } else if field.elementsEqual("event".utf8) {
            self.eventTypeBuffer = String(decoding: value, as: UTF8.self)
        } else if field.elementsEqual("id".utf8) {
            if !value.contains(0) {
                self.lastEventIDBuffer = String(decoding: value, as: UTF8.self)
            }
        } else if field.elementsEqual("retry".utf8) {
            if let milliseconds = Self.milliseconds(value) {
                self.reconnectionTime = .milliseconds(milliseconds)
                self.pendingRetry = .milliseconds(milliseconds)
            }
        }
    }

    /// The value of a `retry` field: one or more ASCII digits that fit `Int64`, otherwise `nil`.
    private static func milliseconds(_ value: UnsafeRawBufferPointer) -> Int64? {
        guard !value.isEmpty else { return nil }
        var result: Int64 = 0
        for byte in value {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            let (shifted, overflowed) = result.multipliedReportingOverflow(by: 10)
            let (sum, overflowedSum) = shifted.addingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
            guard !overflowed, !overflowedSum else { return nil }
            result = sum
        }
        return result
    }

    /// Dispatches the event, as the blank line that ends a block does.
    private mutating func dispatch() {
        self.lastEventID = self.lastEventIDBuffer
        guard !self.dataBuffer.isEmpty else {
            self.eventTypeBuffer = ""
            return
        }
        if self.dataBuffer.utf8.last == UInt8(ascii: "\n") {
            self.dataBuffer.unicodeScalars.removeLast()
        }
        self.events.append(
            ServerSentEvent(
                event: self.eventTypeBuffer.isEmpty ? nil : self.eventTypeBuffer,
                data: self.dataBuffer,
                id: self.lastEventID.isEmpty ? nil : self.lastEventID,
                retry: self.pendingRetry
            )
        )
        self.pendingRetry = nil
        self.dataBuffer = ""
        self.eventTypeBuffer = ""
    }
}
