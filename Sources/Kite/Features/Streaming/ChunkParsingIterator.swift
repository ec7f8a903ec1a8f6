import Foundation

/// An incremental parser: fed chunks of a stream, it returns the items each chunk completes.
///
/// ``UTF8LineParser``, ``JSONLinesParser`` and ``ServerSentEventParser`` conform, so one iterator drives them all.
protocol ChunkParser {
    /// What the parser produces.
    associatedtype Item

    /// Parses the next chunk and returns the items it completes.
    mutating func parse(_ chunk: Data) throws -> [Item]

    /// Ends the stream and returns the items still pending.
    mutating func finish() throws -> [Item]
}

/// The iterator behind the streaming sequences: pulls chunks from a base iterator through a ``ChunkParser``.
///
/// After the base ends or anything throws, it returns `nil` for ever, as an `AsyncIteratorProtocol` should.
struct ChunkParsingIterator<Base: AsyncIteratorProtocol, Parser: ChunkParser> where Base.Element == Data {
    private var base: Base
    private var parser: Parser
    /// Items parsed but not yet returned, and the index of the next one.
    private var buffered: [Parser.Item] = []
    private var nextIndex = 0
    private var isFinished = false

    /// The parser, for state it exposes such as the last event ID.
    var currentParser: Parser { self.parser }

    init(base: Base, parser: Parser) {
        self.base = base
        self.parser = parser
    }

    mutating func next() async throws -> Parser.Item? {
        while true {
            if self.nextIndex < self.buffered.count {
                defer { self.nextIndex += 1 }
                return self.buffered[self.nextIndex]
            }
            if self.isFinished {
                return nil
            }
            self.buffered.removeAll(keepingCapacity: true)
            self.nextIndex = 0
            do {
                if let chunk = try await self.base.next() {
                    self.buffered = try self.parser.parse(chunk)
                } else {
                    self.isFinished = true
                    self.buffered = try self.parser.finish()
                }
            } catch {
                self.isFinished = true
                self.buffered = []
                throw error
            }
        }
    }
}
