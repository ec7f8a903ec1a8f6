import Foundation

@testable import KiteUnderFuzz

extension FuzzTarget {
    /// The line, event and JSON-lines parsers see a stream in chunks of any size: the input parsed whole and
    /// parsed one byte at a time (every split point at once) gives the same items, or the same error code.
    /// The limits are small, so that inputs of libFuzzer's length reach them.
    static func fuzzServerSentEvents(_ input: [UInt8]) {
        Self.sameInAnyChunks(input, "server-sent events") {
            ServerSentEventParser(maximumLineLength: 256, maximumEventLength: 1024)
        }
    }

    static func fuzzUtf8Lines(_ input: [UInt8]) {
        Self.sameInAnyChunks(input, "UTF-8 lines") { UTF8LineParser(maximumLineLength: 256) }
    }

    static func fuzzJsonLines(_ input: [UInt8]) {
        Self.sameInAnyChunks(input, "JSON lines") { JSONLinesParser<JSONValue>(maximumLineLength: 256) }
    }

    private static func sameInAnyChunks<Parser: ChunkParser>(
        _ input: [UInt8],
        _ what: String,
        _ make: () -> Parser
    ) where Parser.Item: Equatable {
        let whole = Self.items(make(), [Data(input)])
        let bytes = Self.items(make(), input.map { Data([$0]) })
        require(whole == bytes, "\(what) whole: \(whole); one byte at a time: \(bytes)")
    }

    /// The items of `chunks` and `finish()`, or the code of the error that stopped the parser.
    private static func items<Parser: ChunkParser>(_ parser: Parser, _ chunks: [Data]) -> Outcome<Parser.Item> {
        var parser = parser
        var items: [Parser.Item] = []
        do {
            for chunk in chunks { items += try parser.parse(chunk) }
            items += try parser.finish()
            return .items(items)
        } catch let error as KiteError {
            return .failed(error.code, after: items)
        } catch {
            return .failed(nil, after: items)
        }
    }

    private enum Outcome<Item: Equatable>: Equatable {
        case items([Item])
        case failed(KiteError.Code?, after: [Item])
    }
}
