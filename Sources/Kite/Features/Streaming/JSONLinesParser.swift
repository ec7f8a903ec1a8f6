import Foundation

/// An incremental decoder of newline-delimited JSON (JSON Lines, NDJSON): feed it chunks, it returns the values of
/// the lines they complete.
///
/// Lines are split as ``UTF8LineParser`` splits them (LF or CRLF, across any chunk boundary, the last line even
/// without a final newline). Lines that are empty or hold only JSON whitespace (spaces, tabs, CRs) are skipped.
/// Every other line is one value, decoded from its raw bytes with a ``DataDecoder`` (`JSONDecoder` by default), so
/// bytes that are not valid UTF-8 are a decoding error rather than replaced.
///
/// A line that does not decode is an error naming the line number, counting every line from 1 including skipped
/// ones, and the coding path. After an error, every later call throws the same error.
///
/// ```swift
/// struct Tick: Decodable, Sendable {
///     var price: Int
/// }
///
/// var parser = JSONLinesParser(of: Tick.self)
/// let ticks = try parser.parse(Data("{\"price\":1}\n\n{\"price\":2}\n".utf8))
/// print(ticks.map(\.price))  // [1, 2]
/// ```
///
/// ``JSONLinesSequence`` is the same parser over an `AsyncSequence` of chunks.
public struct JSONLinesParser<Value: Decodable & Sendable>: Sendable {
    /// The decoder of each line.
    public let decoder: any DataDecoder

    /// The longest line allowed, in bytes without the line ending.
    public var maximumLineLength: Int { self.splitter.maximumLineLength }

    private var splitter: LineSplitter
    private var failure: KiteError?

    /// Creates a parser.
    ///
    /// ```swift
    /// var parser = JSONLinesParser(of: JSONValue.self, decoder: JSONDecoder())
    /// ```
    ///
    /// - Parameters:
    ///   - type: The type of each line's value.
    ///   - decoder: The decoder of each line; a new `JSONDecoder` by default.
    ///   - maximumLineLength: The longest line allowed, in bytes without the line ending; 1 MiB by default.
    public init(
        of type: Value.Type = Value.self,
        decoder: any DataDecoder = JSONDecoder(),
        maximumLineLength: Int = UTF8LineParser.defaultMaximumLineLength
    ) {
        self.decoder = decoder
        self.splitter = LineSplitter(terminators: .lineFeed, maximumLineLength: maximumLineLength)
    }

    /// Parses the next chunk of the stream.
    ///
    /// ```swift
    /// var parser = JSONLinesParser(of: Int.self)
    /// let values = try parser.parse(Data("1\n2\n3".utf8))  // [1, 2]
    /// ```
    ///
    /// - Parameter chunk: The next bytes of the stream.
    /// - Returns: The values of the lines this chunk completes.
    /// - Throws: A ``KiteError`` with code ``KiteError/Code-swift.struct/streamDecodingFailed`` for a line that does
    ///   not decode, or ``KiteError/Code-swift.struct/streamLineTooLong`` for a line longer than
    ///   ``maximumLineLength``.
    ///   When a line fails after others of the chunk completed, their values are returned and the next call throws
    ///   the error: nothing completed before it is lost.
    public mutating func parse(_ chunk: Data) throws -> [Value] {
        try self.run { decoding, splitter in
            try splitter.split(chunk, into: &decoding, emit: Decoding.decode)
        }
    }

    /// Ends the stream, returning the value of its last line if the stream did not end with a newline.
    ///
    /// Afterwards the parser is ready for a new stream, with line numbers counted from 1 again.
    ///
    /// ```swift
    /// var parser = JSONLinesParser(of: Int.self)
    /// _ = try parser.parse(Data("1\n2".utf8))  // [1]
    /// let last = try parser.finish()  // [2]
    /// ```
    ///
    /// - Returns: The value of the unterminated last line, or nothing.
    /// - Throws: A ``KiteError`` with code ``KiteError/Code-swift.struct/streamDecodingFailed`` if that line does not
    ///   decode, or the error of an earlier call.
    public mutating func finish() throws -> [Value] {
        try self.run { decoding, splitter in
            try splitter.finish(emitsUnterminatedLine: true, into: &decoding, emit: Decoding.decode)
        }
    }

    private mutating func run(_ body: (inout Decoding, inout LineSplitter) throws -> Void) throws -> [Value] {
        if let failure { throw failure }
        var decoding = Decoding(decoder: self.decoder)
        do {
            try body(&decoding, &self.splitter)
        } catch {
            let failure = error as? KiteError ?? KiteError(code: .streamDecodingFailed, message: "\(error)")
            self.failure = failure
            self.splitter.reset()
            // The values of the lines completed before the failure are delivered; the next call throws.
            if decoding.values.isEmpty { throw failure }
        }
        return decoding.values
    }

    /// The decoder and the values decoded from one chunk.
    private struct Decoding {
        let decoder: any DataDecoder
        var values: [Value] = []

        static func decode(into decoding: inout Decoding, line: UnsafeRawBufferPointer, number: Int) throws {
            guard line.contains(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0D }) else { return }
            do {
                decoding.values.append(try decoding.decoder.decode(Value.self, from: Data(line)))
            } catch {
                throw KiteError(
                    code: .streamDecodingFailed,
                    message:
                        "line \(number) of the stream could not be decoded as \(Value.self): "
                        + DecodingFailure.describe(error),
                    underlyingError: error
                )
            }
        }
    }
}

extension JSONLinesParser: ChunkParser {}
