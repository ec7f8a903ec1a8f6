import Foundation

/// The values of newline-delimited JSON (JSON Lines, NDJSON) that arrives as an asynchronous sequence of `Data`
/// chunks.
///
/// Decodes as ``JSONLinesParser`` does: one value per line, blank lines skipped, lines split across any chunk
/// boundary, and a line that does not decode an error naming its line number and coding path. The sequence ends
/// after the first error.
///
/// ```swift
/// struct Tick: Decodable, Sendable {
///     var symbol: String
///     var price: Int
/// }
///
/// let (chunks, continuation) = AsyncStream.makeStream(of: Data.self)
/// continuation.yield(Data("{\"symbol\":\"KITE\",\"pr".utf8))
/// continuation.yield(Data("ice\":42}\n".utf8))
/// continuation.finish()
/// for try await tick in chunks.jsonLines(of: Tick.self) {
///     print(tick.symbol, tick.price)  // KITE 42
/// }
/// ```
public struct JSONLinesSequence<Base: AsyncSequence, Value: Decodable & Sendable>: AsyncSequence
where Base.Element == Data {
    /// A decoded line.
    public typealias Element = Value

    /// The chunks.
    public let base: Base

    /// The decoder of each line.
    public let decoder: any DataDecoder

    /// The longest line allowed, in bytes without the line ending.
    public let maximumLineLength: Int

    /// Creates the sequence of the values of the lines of `base`.
    ///
    /// ```swift
    /// let values = JSONLinesSequence(chunks, of: JSONValue.self)
    /// ```
    ///
    /// - Parameters:
    ///   - base: The chunks of text.
    ///   - type: The type of each line's value.
    ///   - decoder: The decoder of each line; a new `JSONDecoder` by default.
    ///   - maximumLineLength: The longest line allowed, in bytes without the line ending; 1 MiB by default.
    public init(
        _ base: Base,
        of type: Value.Type = Value.self,
        decoder: any DataDecoder = JSONDecoder(),
        maximumLineLength: Int = UTF8LineParser.defaultMaximumLineLength
    ) {
        self.base = base
        self.decoder = decoder
        self.maximumLineLength = maximumLineLength
    }

    /// Creates an iterator over the values.
    ///
    /// - Returns: The iterator.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(
            core: ChunkParsingIterator(
                base: self.base.makeAsyncIterator(),
                parser: JSONLinesParser(
                    of: Value.self,
                    decoder: self.decoder,
                    maximumLineLength: self.maximumLineLength
                )
            )
        )
    }

    /// The iterator of a ``JSONLinesSequence``.
    public struct AsyncIterator: AsyncIteratorProtocol {
        private var core: ChunkParsingIterator<Base.AsyncIterator, JSONLinesParser<Value>>

        fileprivate init(core: ChunkParsingIterator<Base.AsyncIterator, JSONLinesParser<Value>>) {
            self.core = core
        }

        /// The next value.
        ///
        /// - Returns: The value of the next non-blank line, or `nil` after the last.
        /// - Throws: The base sequence's error, or a ``KiteError`` with code
        ///   ``KiteError/Code-swift.struct/streamDecodingFailed`` for a line that does not decode or
        ///   ``KiteError/Code-swift.struct/streamLineTooLong`` for a line that is too long.
        public mutating func next() async throws -> Value? {
            try await self.core.next()
        }
    }
}

extension JSONLinesSequence: Sendable where Base: Sendable {}
