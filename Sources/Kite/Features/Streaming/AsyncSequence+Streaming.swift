import Foundation

extension AsyncSequence where Element == Data {
    /// The lines of the UTF-8 text in these chunks.
    ///
    /// Splits at LF, dropping one CR before it; see ``UTF8LineSequence``.
    ///
    /// ```swift
    /// for try await line in chunks.utf8Lines() {
    ///     print(line)
    /// }
    /// ```
    ///
    /// - Parameter maximumLineLength: The longest line allowed, in bytes without the line ending; 1 MiB by default.
    /// - Returns: The sequence of lines.
    public func utf8Lines(
        maximumLineLength: Int = UTF8LineParser.defaultMaximumLineLength
    ) -> UTF8LineSequence<Self> {
        UTF8LineSequence(self, maximumLineLength: maximumLineLength)
    }

    /// The values of the newline-delimited JSON in these chunks, one per non-blank line.
    ///
    /// See ``JSONLinesSequence``.
    ///
    /// ```swift
    /// for try await value in chunks.jsonLines(of: JSONValue.self) {
    ///     print(value)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - type: The type of each line's value.
    ///   - decoder: The decoder of each line; a new `JSONDecoder` by default.
    ///   - maximumLineLength: The longest line allowed, in bytes without the line ending; 1 MiB by default.
    /// - Returns: The sequence of values.
    public func jsonLines<Value: Decodable & Sendable>(
        of type: Value.Type = Value.self,
        decoder: any DataDecoder = JSONDecoder(),
        maximumLineLength: Int = UTF8LineParser.defaultMaximumLineLength
    ) -> JSONLinesSequence<Self, Value> {
        JSONLinesSequence(self, of: type, decoder: decoder, maximumLineLength: maximumLineLength)
    }

    /// The events of the Server-Sent Events stream in these chunks.
    ///
    /// See ``ServerSentEventSequence``.
    ///
    /// ```swift
    /// for try await event in chunks.serverSentEvents() {
    ///     print(event.type, event.data)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - maximumLineLength: The longest line allowed, in bytes without the line ending; 1 MiB by default.
    ///   - lastEventID: The last event ID to start with, such as the `Last-Event-ID` sent when reconnecting.
    /// - Returns: The sequence of events.
    public func serverSentEvents(
        maximumLineLength: Int = UTF8LineParser.defaultMaximumLineLength,
        lastEventID: String? = nil
    ) -> ServerSentEventSequence<Self> {
        ServerSentEventSequence(self, maximumLineLength: maximumLineLength, lastEventID: lastEventID)
    }
}
