import Foundation

/// An incremental splitter of UTF-8 text into lines: feed it chunks of bytes, it returns the lines they complete.
///
/// Lines end with LF; one CR before the LF is dropped, so CRLF text works too. A line may be split across any
/// number of chunks, at any byte, including inside a multi-byte character. When the stream ends,
/// ``finish()`` returns the last line if the text did not end with a newline; text that ends with a newline has
/// no empty line after it.
///
/// Bytes that are not valid UTF-8 become U+FFFD REPLACEMENT CHARACTER, one per maximal invalid sequence, as
/// `String(decoding:as:)` does; a byte order mark is kept as U+FEFF.
///
/// A line longer than ``maximumLineLength`` bytes is an error rather than a buffer that grows without bound. After an
/// error, every later call throws the same error.
///
/// ```swift
/// var parser = UTF8LineParser()
/// var lines = try parser.parse(Data("first\r\nsec".utf8))  // ["first"]
/// lines += try parser.parse(Data("ond\nthird".utf8))  // ["second"]
/// lines += try parser.finish()  // ["third"]
/// ```
///
/// ``UTF8LineSequence`` is the same parser over an `AsyncSequence` of chunks.
public struct UTF8LineParser: Sendable {
    /// The default ``maximumLineLength``: 1 MiB.
    public static let defaultMaximumLineLength = 1024 * 1024

    /// The longest line allowed, in bytes of UTF-8 without the line ending.
    public var maximumLineLength: Int { self.splitter.maximumLineLength }

    private var splitter: LineSplitter
    private var failure: KiteError?

    /// Creates a parser.
    ///
    /// ```swift
    /// var parser = UTF8LineParser(maximumLineLength: 64 * 1024)
    /// ```
    ///
    /// - Parameter maximumLineLength: The longest line allowed, in bytes without the line ending; 1 MiB by default.
    ///   A negative value counts as zero.
    public init(maximumLineLength: Int = Self.defaultMaximumLineLength) {
        self.splitter = LineSplitter(terminators: .lineFeed, maximumLineLength: maximumLineLength)
    }

    /// Parses the next chunk of the stream.
    ///
    /// The bytes of an unfinished line are kept until a later chunk ends it.
    ///
    /// ```swift
    /// var parser = UTF8LineParser()
    /// let lines = try parser.parse(Data("a\nb\nc".utf8))  // ["a", "b"]
    /// ```
    ///
    /// - Parameter chunk: The next bytes of the stream.
    /// - Returns: The lines this chunk completes, without their line endings.
    /// - Throws: A ``KiteError`` with code ``KiteError/Code-swift.struct/streamLineTooLong`` when a line is longer than
    ///   ``maximumLineLength``.
    ///   When a line fails after others of the chunk completed, their lines are returned and the next call throws
    ///   the error: nothing completed before it is lost.
    public mutating func parse(_ chunk: Data) throws -> [String] {
        try self.run { lines, splitter in
            try splitter.split(chunk, into: &lines, emit: Self.append)
        }
    }

    /// Ends the stream, returning its last line if the stream did not end with a newline.
    ///
    /// Afterwards the parser is ready for a new stream.
    ///
    /// ```swift
    /// var parser = UTF8LineParser()
    /// _ = try parser.parse(Data("a\nb".utf8))  // ["a"]
    /// let last = try parser.finish()  // ["b"]
    /// ```
    ///
    /// - Returns: The unterminated last line, or nothing.
    /// - Throws: The error of an earlier call, if one failed.
    public mutating func finish() throws -> [String] {
        try self.run { lines, splitter in
            try splitter.finish(emitsUnterminatedLine: true, into: &lines, emit: Self.append)
        }
    }

    private mutating func run(_ body: (inout [String], inout LineSplitter) throws -> Void) throws -> [String] {
        if let failure { throw failure }
        var lines: [String] = []
        do {
            try body(&lines, &self.splitter)
        } catch {
            let failure = error as? KiteError ?? KiteError(code: .streamDecodingFailed, message: "\(error)")
            self.failure = failure
            self.splitter.reset()
            // The lines completed before the failure are delivered; the next call throws.
            if lines.isEmpty { throw failure }
        }
        return lines
    }

    private static func append(to lines: inout [String], line: UnsafeRawBufferPointer, number: Int) {
        lines.append(String(decoding: line, as: UTF8.self))
    }
}

extension UTF8LineParser: ChunkParser {}
