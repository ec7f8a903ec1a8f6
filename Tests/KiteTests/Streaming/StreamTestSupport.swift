import Foundation
import Testing

@testable import Kite

/// What parsing a whole stream gave: its items, or the error's code and message.
enum StreamOutcome<Item: Equatable>: Equatable, CustomStringConvertible {
    case items([Item])
    case failure(code: KiteError.Code, message: String)

    var description: String {
        switch self {
        case .items(let items): "items(\(items))"
        case .failure(let code, let message): "failure(\(code): \(message))"
        }
    }
}

extension StreamOutcome: Sendable where Item: Sendable {}

/// Compiles only when `value` is `Sendable`.
func requireSendable<T: Sendable>(_ value: T) {}

enum StreamChunking {
    /// The ways the tests feed `bytes`: whole, split in two at every offset, and one byte at a time.
    ///
    /// Chunks are slices of one `Data`, so most do not start at index 0, as slices of a network buffer would not.
    static func everySplit(of bytes: [UInt8]) -> [[Data]] {
        let data = Data(bytes)
        var splits: [[Data]] = [[data]]
        for cut in data.startIndex...data.endIndex {
            splits.append([data[data.startIndex..<cut], data[cut..<data.endIndex]])
        }
        splits.append(data.indices.map { data[$0..<$0 + 1] })
        return splits
    }

    /// Feeds `chunks` to a new parser and finishes it.
    static func outcome<Parser: ChunkParser>(
        of chunks: [Data],
        parser makeParser: () -> Parser
    ) -> StreamOutcome<Parser.Item> where Parser.Item: Equatable {
        var parser = makeParser()
        var items: [Parser.Item] = []
        do {
            for chunk in chunks {
                items += try parser.parse(chunk)
            }
            items += try parser.finish()
            return .items(items)
        } catch let error as KiteError {
            return .failure(code: error.code, message: error.message)
        } catch {
            return .failure(code: .streamDecodingFailed, message: "unexpected error type: \(error)")
        }
    }

    /// Parses `bytes` fed in every way of ``everySplit(of:)``, expects every way to give the same outcome, and
    /// returns it.
    static func sameOutcomeForEverySplit<Parser: ChunkParser>(
        of bytes: [UInt8],
        parser makeParser: () -> Parser,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> StreamOutcome<Parser.Item> where Parser.Item: Equatable {
        let splits = self.everySplit(of: bytes)
        let expected = self.outcome(of: splits[0], parser: makeParser)
        for chunks in splits.dropFirst() {
            let outcome = self.outcome(of: chunks, parser: makeParser)
            #expect(
                outcome == expected,
                "chunks of sizes \(chunks.map(\.count))",
                sourceLocation: sourceLocation
            )
            if outcome != expected { break }
        }
        return expected
    }

    /// An `AsyncStream` that yields `chunks` and ends.
    static func stream(of chunks: [Data]) -> AsyncStream<Data> {
        AsyncStream { continuation in
            for chunk in chunks {
                continuation.yield(chunk)
            }
            continuation.finish()
        }
    }

    /// Iterates `sequence` to its end, returning its elements or the error that ended it.
    static func outcome<S: AsyncSequence>(
        of sequence: S
    ) async -> StreamOutcome<S.Element> where S.Element: Equatable {
        var elements: [S.Element] = []
        do {
            for try await element in sequence {
                elements.append(element)
            }
            return .items(elements)
        } catch let error as KiteError {
            return .failure(code: error.code, message: error.message)
        } catch {
            return .failure(code: .streamDecodingFailed, message: "unexpected error type: \(error)")
        }
    }
}
