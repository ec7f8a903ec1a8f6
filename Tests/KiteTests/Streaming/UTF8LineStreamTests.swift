import Foundation
import Testing

@testable import Kite

@Suite struct UTF8LineStreamTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let bytes: [UInt8]
        let lines: [String]

        init(_ name: String, _ text: String, _ lines: [String]) {
            self.init(name, bytes: Array(text.utf8), lines)
        }

        init(_ name: String, bytes: [UInt8], _ lines: [String]) {
            self.name = name
            self.bytes = bytes
            self.lines = lines
        }

        var testDescription: String { self.name }
    }

    static let cases: [Case] = [
        Case("empty stream", "", []),
        Case("one line without newline", "a", ["a"]),
        Case("one line with newline", "a\n", ["a"]),
        Case("last line without newline", "a\nb", ["a", "b"]),
        Case("CRLF", "a\r\nb\r\n", ["a", "b"]),
        Case("CRLF and LF mixed", "a\r\nb\nc\r\n", ["a", "b", "c"]),
        Case("a lone newline is one empty line", "\n", [""]),
        Case("a lone CRLF is one empty line", "\r\n", [""]),
        Case("empty lines are kept", "a\n\nb\n\n", ["a", "", "b", ""]),
        Case("a CR inside a line is kept", "a\rb\n", ["a\rb"]),
        Case("only one CR before LF is dropped", "a\r\r\n", ["a\r"]),
        Case("a CR at the end of the stream is dropped", "a\r", ["a"]),
        Case("multi-byte characters", "héllo wörld €\n😀🇫🇷 naïve\n", ["héllo wörld €", "😀🇫🇷 naïve"]),
        Case("a byte order mark is kept", "\u{FEFF}a\n", ["\u{FEFF}a"]),
        Case(
            "invalid UTF-8 becomes U+FFFD",
            bytes: [0x61, 0xFF, 0x62, 0x0A, 0xE2, 0x82, 0x0A, 0xC3],
            ["a\u{FFFD}b", "\u{FFFD}", "\u{FFFD}"]
        ),
    ]

    @Test(arguments: cases)
    func linesAreTheSameForEveryChunking(_ testCase: Case) {
        let outcome = StreamChunking.sameOutcomeForEverySplit(of: testCase.bytes) { UTF8LineParser() }
        #expect(outcome == .items(testCase.lines))
    }

    @Test(arguments: cases)
    func theSequenceGivesTheParsersLines(_ testCase: Case) async {
        let oneByteChunks = StreamChunking.everySplit(of: testCase.bytes).last ?? []
        let outcome = await StreamChunking.outcome(of: StreamChunking.stream(of: oneByteChunks).utf8Lines())
        #expect(outcome == .items(testCase.lines))
    }

    @Test func invalidUTF8IsReplacedCharacterForCharacter() throws {
        var parser = UTF8LineParser()
        let lines = try parser.parse(Data([0x6F, 0x6B, 0xF0, 0x9F, 0x98, 0x0A]))
        #expect(lines.map { Array($0.unicodeScalars) } == [["o", "k", "\u{FFFD}"]])
    }

    @Test(arguments: [
        ("abc\n", StreamOutcome<String>.items(["abc"])),
        ("abc\r\n", .items(["abc"])),
        ("abc", .items(["abc"])),
        ("abc\r", .items(["abc"])),
        ("ab\n\nabc\n", .items(["ab", "", "abc"])),
        (
            "abcd\n",
            .failure(
                code: .streamLineTooLong,
                message: "line 1 of the stream is longer than the maximum line length of 3 bytes"
            )
        ),
        (
            "abc\r\r\n",
            .failure(
                code: .streamLineTooLong,
                message: "line 1 of the stream is longer than the maximum line length of 3 bytes"
            )
        ),
        (
            "ab\ncdefgh",
            .failure(
                code: .streamLineTooLong,
                message: "line 2 of the stream is longer than the maximum line length of 3 bytes"
            )
        ),
        (
            "€€",
            .failure(
                code: .streamLineTooLong,
                message: "line 1 of the stream is longer than the maximum line length of 3 bytes"
            )
        ),
    ])
    func linesLongerThanTheLimitThrow(_ input: String, _ expected: StreamOutcome<String>) {
        let outcome = StreamChunking.sameOutcomeForEverySplit(of: Array(input.utf8)) {
            UTF8LineParser(maximumLineLength: 3)
        }
        #expect(outcome == expected)
    }

    @Test func theDefaultLimitIsOneMebibyte() throws {
        #expect(UTF8LineParser.defaultMaximumLineLength == 1_048_576)
        let line = Data(repeating: UInt8(ascii: "x"), count: 1_048_576)

        var parser = UTF8LineParser()
        #expect(try parser.parse(line) == [])
        #expect(try parser.parse(Data("\r\n".utf8)).map(\.utf8.count) == [1_048_576])

        var tooLong = UTF8LineParser()
        _ = try tooLong.parse(line)
        let error = #expect(throws: KiteError.self) { try tooLong.parse(Data("x".utf8)) }
        #expect(error?.code == .streamLineTooLong)
        #expect(error?.message == "line 1 of the stream is longer than the maximum line length of 1048576 bytes")
    }

    @Test func afterAnErrorEveryCallThrowsIt() throws {
        var parser = UTF8LineParser(maximumLineLength: 2)
        #expect(throws: KiteError.self) { try parser.parse(Data("abc".utf8)) }
        let again = #expect(throws: KiteError.self) { try parser.parse(Data("\n".utf8)) }
        #expect(again?.message == "line 1 of the stream is longer than the maximum line length of 2 bytes")
        #expect(throws: KiteError.self) { try parser.finish() }
    }

    @Test func finishingResetsTheParserForANewStream() throws {
        var parser = UTF8LineParser()
        #expect(try parser.parse(Data("a\nb".utf8)) == ["a"])
        #expect(try parser.finish() == ["b"])
        #expect(try parser.finish() == [])
        #expect(try parser.parse(Data("c\n".utf8)) == ["c"])
    }

    @Test func theSequenceEndsAfterALineTooLong() async throws {
        let chunks = StreamChunking.stream(of: [Data("ok\n".utf8), Data("toolong\n".utf8), Data("never\n".utf8)])
        var iterator = chunks.utf8Lines(maximumLineLength: 4).makeAsyncIterator()
        #expect(try await iterator.next() == "ok")
        let error = await #expect(throws: KiteError.self) { try await iterator.next() }
        #expect(error?.code == .streamLineTooLong)
        #expect(error?.message == "line 2 of the stream is longer than the maximum line length of 4 bytes")
        #expect(try await iterator.next() == nil)
    }

    @Test func theSequenceIsSendableAndKeepsItsSettings() {
        let lines = UTF8LineSequence(StreamChunking.stream(of: []), maximumLineLength: 10)
        requireSendable(lines)
        #expect(lines.maximumLineLength == 10)
        #expect(UTF8LineParser(maximumLineLength: -5).maximumLineLength == 0)
    }

    @Test func theSequencePassesTheBaseSequencesErrorOn() async throws {
        struct Broken: Error {}
        let (chunks, continuation) = AsyncThrowingStream.makeStream(of: Data.self)
        continuation.yield(Data("a\nb".utf8))
        continuation.finish(throwing: Broken())
        var iterator = chunks.utf8Lines().makeAsyncIterator()
        #expect(try await iterator.next() == "a")
        await #expect(throws: Broken.self) { try await iterator.next() }
        #expect(try await iterator.next() == nil)
    }
}
