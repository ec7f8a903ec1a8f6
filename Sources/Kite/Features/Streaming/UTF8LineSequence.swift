import Foundation

/// The lines of UTF-8 text that arrives as an asynchronous sequence of `Data` chunks.
///
/// Splits as ``UTF8LineParser`` does: at LF, dropping one CR before it, across any chunk boundary, with invalid
/// UTF-8 replaced by U+FFFD, the last line returned even without a final newline, and lines longer than
/// ``maximumLineLength`` bytes an error. The sequence ends after the first error.
///
/// ```swift
/// let (chunks, continuation) = AsyncStream.makeStream(of: Data.self)
/// continuation.yield(Data("event one\r\nevent ".utf8))
/// continuation.yield(Data("two\n".utf8))
/// continuation.finish()
/// for try await line in chunks.utf8Lines() {
///     print(line)  // "event one", then "event two"
/// }
/// ```
public struct UTF8LineSequence<Base: AsyncSequence>: AsyncSequence where Base.Element == Data {
    /// A line, without its line ending.
    public typealias Element = String

    /// The chunks.
    public let base: Base

    /// The longest line allowed, in bytes of UTF-8 without the line ending.
    public let maximumLineLength: Int

    /// Creates the sequence of lines of `base`.
    ///
    /// ```swift
    /// let lines = UTF8LineSequence(chunks, maximumLineLength: 64 * 1024)
    /// ```
    ///
    /// - Parameters:
    ///   - base: The chunks of text.
    ///   - maximumLineLength: The longest line allowed, in bytes without the line ending; 1 MiB by default.
    public init(_ base: Base, maximumLineLength: Int = UTF8LineParser.defaultMaximumLineLength) {
        self.base = base
        self.maximumLineLength = maximumLineLength
    }

    /// Creates an iterator over the lines.
    ///
    /// - Returns: The iterator.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(
            core: ChunkParsingIterator(
                base: self.base.makeAsyncIterator(),
                parser: UTF8LineParser(maximumLineLength: self.maximumLineLength)
            )
        )
    }

    /// The iterator of a ``UTF8LineSequence``.
    public struct AsyncIterator: AsyncIteratorProtocol {
        private var core: ChunkParsingIterator<Base.AsyncIterator, UTF8LineParser>

        fileprivate init(core: ChunkParsingIterator<Base.AsyncIterator, UTF8LineParser>) {
            self.core = core
        }

        /// The next line.
        ///
        /// - Returns: The next line, or `nil` after the last.
        /// - Throws: The base sequence's error, or a ``KiteError`` with code
        ///   ``KiteError/Code-swift.struct/streamLineTooLong`` for a line that is too long.
        public mutating func next() async throws -> String? {
            try await self.core.next()
        }
    }
}

extension UTF8LineSequence: Sendable where Base: Sendable {}
