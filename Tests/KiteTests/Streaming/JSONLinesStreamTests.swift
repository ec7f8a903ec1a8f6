import Foundation
import Testing

@testable import Kite

@Suite struct JSONLinesStreamTests {
    struct Tick: Codable, Sendable, Equatable {
        var symbol: String
        var price: Int
    }

    struct Batch: Codable, Sendable, Equatable {
        var items: [Tick]
    }

    static let ticks = """
        {"symbol":"KITE","price":1}

          \t
        {"symbol":"€😀","price":2}\r
        {"symbol":"C","price":3}
        """

    @Test func valuesAreTheSameForEveryChunking() {
        let outcome = StreamChunking.sameOutcomeForEverySplit(of: Array(Self.ticks.utf8)) {
            JSONLinesParser(of: Tick.self)
        }
        #expect(
            outcome
                == .items([
                    Tick(symbol: "KITE", price: 1), Tick(symbol: "€😀", price: 2), Tick(symbol: "C", price: 3),
                ])
        )
    }

    @Test(arguments: [
        ("", StreamOutcome<Tick>.items([])),
        ("\n\n \r\n", .items([])),
        ("{\"symbol\":\"A\",\"price\":1}", .items([Tick(symbol: "A", price: 1)])),
        ("{\"symbol\":\"A\",\"price\":1}\n", .items([Tick(symbol: "A", price: 1)])),
        (
            "{\"symbol\":\"A\",\"price\":1}\n\n{\"symbol\":\"B\"}\n{\"symbol\":\"C\",\"price\":3}\n",
            .failure(
                code: .streamDecodingFailed,
                message:
                    "line 3 of the stream could not be decoded as Tick: no value for key \"price\" at the top level"
            )
        ),
        (
            "{\"symbol\":\"A\",\"price\":null}",
            .failure(
                code: .streamDecodingFailed,
                message: "line 1 of the stream could not be decoded as Tick: expected Int but found null at price"
            )
        ),
    ])
    func badLinesNameTheLineNumberAndCodingPath(_ input: String, _ expected: StreamOutcome<Tick>) {
        let outcome = StreamChunking.sameOutcomeForEverySplit(of: Array(input.utf8)) {
            JSONLinesParser(of: Tick.self)
        }
        #expect(outcome == expected)
    }

    @Test func aNestedCodingPathIsNamed() {
        let input = """
            {"items":[]}
            {"items":[{"symbol":"A","price":1},{"symbol":"B"}]}
            """
        let outcome = StreamChunking.sameOutcomeForEverySplit(of: Array(input.utf8)) {
            JSONLinesParser(of: Batch.self)
        }
        #expect(
            outcome
                == .failure(
                    code: .streamDecodingFailed,
                    message:
                        "line 2 of the stream could not be decoded as Batch: no value for key \"price\" at items[1]"
                )
        )
    }

    @Test func aLineThatIsNotJSONIsReportedWithTheUnderlyingError() throws {
        var parser = JSONLinesParser(of: Tick.self)
        // The value before the bad line is delivered; the next call throws.
        let values = try parser.parse(Data("{\"symbol\":\"A\",\"price\":1}\nnot json\n".utf8))
        #expect(values.map(\.symbol) == ["A"])
        let error = #expect(throws: KiteError.self) { try parser.finish() }
        #expect(error?.code == .streamDecodingFailed)
        #expect(
            error?.message.hasPrefix(
                "line 2 of the stream could not be decoded as Tick: the data is corrupted at the top level"
            )
                == true
        )
        #expect(error?.underlyingError is DecodingError)
    }

    @Test func invalidUTF8IsADecodingErrorNotAReplacement() {
        let bytes: [UInt8] = Array("{\"symbol\":\"".utf8) + [0xFF] + Array("\",\"price\":1}\n".utf8)
        let outcome = StreamChunking.outcome(of: [Data(bytes)]) { JSONLinesParser(of: Tick.self) }
        guard case .failure(let code, let message) = outcome else {
            Issue.record("expected a failure, got \(outcome)")
            return
        }
        #expect(code == .streamDecodingFailed)
        #expect(message.hasPrefix("line 1 of the stream could not be decoded as Tick: the data is corrupted"))
    }

    @Test func theDecoderIsUsed() throws {
        struct Order: Decodable, Sendable, Equatable {
            var orderID: Int
        }
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        var parser = JSONLinesParser(of: Order.self, decoder: decoder)
        #expect(try parser.parse(Data("{\"order_i_d\":7}\n".utf8)) == [Order(orderID: 7)])
    }

    @Test func untypedJSONDecodesIntoJSONValue() throws {
        var parser = JSONLinesParser(of: JSONValue.self)
        let values = try parser.parse(Data("{\"a\":[1,true,null]}\n\"text\"\n".utf8)) + parser.finish()
        #expect(values == [.object(["a": .array([.int(1), .bool(true), .null])]), .string("text")])
    }

    @Test func linesLongerThanTheLimitThrow() {
        let outcome = StreamChunking.sameOutcomeForEverySplit(of: Array("1\n12345\n".utf8)) {
            JSONLinesParser(of: Int.self, maximumLineLength: 4)
        }
        #expect(
            outcome
                == .failure(
                    code: .streamLineTooLong,
                    message: "line 2 of the stream is longer than the maximum line length of 4 bytes"
                )
        )
    }

    @Test func theSequenceDeliversValuesBeforeTheBadLineThenEnds() async throws {
        let chunks = StreamChunking.stream(of: [Data("1\n2\nx".utf8), Data("\n4\n".utf8)])
        let lines = chunks.jsonLines(of: Int.self)
        requireSendable(lines)
        var iterator = lines.makeAsyncIterator()
        #expect(try await iterator.next() == 1)
        #expect(try await iterator.next() == 2)
        let error = await #expect(throws: KiteError.self) { try await iterator.next() }
        #expect(error?.code == .streamDecodingFailed)
        #expect(error?.message.hasPrefix("line 3 of the stream could not be decoded as Int: ") == true)
        #expect(try await iterator.next() == nil)
    }

    @Test func theSequenceMatchesTheParserOneByteAtATime() async {
        let oneByteChunks = StreamChunking.everySplit(of: Array(Self.ticks.utf8)).last ?? []
        let outcome = await StreamChunking.outcome(
            of: JSONLinesSequence(StreamChunking.stream(of: oneByteChunks), of: Tick.self)
        )
        #expect(outcome == StreamChunking.outcome(of: [Data(Self.ticks.utf8)]) { JSONLinesParser(of: Tick.self) })
    }

    @Test func finishingResetsLineNumbers() throws {
        var parser = JSONLinesParser(of: Int.self)
        #expect(try parser.parse(Data("1\n2".utf8)) == [1])
        #expect(try parser.finish() == [2])
        let error = #expect(throws: KiteError.self) { try parser.parse(Data("x\n".utf8)) }
        #expect(error?.message.hasPrefix("line 1 of") == true)
    }
}
