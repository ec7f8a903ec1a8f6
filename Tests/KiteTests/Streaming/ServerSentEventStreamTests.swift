import Foundation
import Testing

@testable import Kite

@Suite struct ServerSentEventStreamTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let bytes: [UInt8]
        let events: [ServerSentEvent]

        init(_ name: String, _ text: String, _ events: [ServerSentEvent]) {
            self.init(name, bytes: Array(text.utf8), events)
        }

        init(_ name: String, bytes: [UInt8], _ events: [ServerSentEvent]) {
            self.name = name
            self.bytes = bytes
            self.events = events
        }

        var testDescription: String { self.name }
    }

    /// The examples of WHATWG HTML §9.2.5 "Event stream format" and §9.2.6 "Interpreting an event stream".
    static let specificationExamples: [Case] = [
        Case(
            "stock ticker: data lines are joined",
            "data: YHOO\ndata: +2\ndata: 10\n\n",
            [.init(data: "YHOO\n+2\n10")]
        ),
        Case(
            "comments, ids and a reset id",
            ": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n\n",
            [.init(data: "first event", id: "1"), .init(data: "second event"), .init(data: " third event")]
        ),
        Case(
            "the end of the stream does not dispatch the last event",
            ": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n",
            [.init(data: "first event", id: "1"), .init(data: "second event")]
        ),
        Case(
            "data without a colon, an empty data and a discarded last block",
            "data\n\ndata\ndata\n\ndata:",
            [.init(data: ""), .init(data: "\n")]
        ),
        Case(
            "a space after the colon is optional",
            "data:test\n\ndata: test\n\n",
            [.init(data: "test"), .init(data: "test")]
        ),
        Case(
            "event types",
            "event: add\ndata: 73857293\n\nevent: remove\ndata: 2153\n\nevent: add\ndata: 113411\n\n",
            [
                .init(event: "add", data: "73857293"), .init(event: "remove", data: "2153"),
                .init(event: "add", data: "113411"),
            ]
        ),
    ]

    static let lineEndings: [Case] = [
        Case("LF", "data: a\ndata: b\n\n", [.init(data: "a\nb")]),
        Case("CRLF", "data: a\r\ndata: b\r\n\r\n", [.init(data: "a\nb")]),
        Case("CR", "data: a\rdata: b\r\r", [.init(data: "a\nb")]),
        Case(
            "mixed",
            "data: a\n\r\ndata: b\r\r\ndata: c\r\n\n",
            [.init(data: "a"), .init(data: "b"), .init(data: "c")]
        ),
        Case(
            "CR then LF is one ending, CR CR is two",
            "data: a\r\n\rdata: b\r\r",
            [.init(data: "a"), .init(data: "b")]
        ),
        Case("LF CR is two endings", "data: a\n\rdata: b\n\n", [.init(data: "a"), .init(data: "b")]),
    ]

    static let fields: [Case] = [
        Case("only one space is stripped", "data:  x\n\n", [.init(data: " x")]),
        Case("a tab is not stripped", "data:\tx\n\n", [.init(data: "\tx")]),
        Case("a space alone is an empty value", "data: \n\n", [.init(data: "")]),
        Case("colons after the first are part of the value", "data: a: b:c\n\n", [.init(data: "a: b:c")]),
        Case("comments between data lines", "data: a\n: comment\n:\ndata: b\n\n", [.init(data: "a\nb")]),
        Case("unknown fields are ignored", "foo: bar\nfoo\ndata: a\n\n", [.init(data: "a")]),
        Case("field names are case-sensitive", "Data: x\nEVENT: y\n\ndata: z\n\n", [.init(data: "z")]),
        Case("a block without data dispatches nothing", "event: x\nid: 1\n\n: only\n\n", []),
        Case("the event type resets after each block", "event: x\n\ndata: y\n\n", [.init(data: "y")]),
        Case("an empty event type means message", "event:\ndata: a\n\n", [.init(data: "a")]),
        Case("an explicit message type is kept", "event: message\ndata: a\n\n", [.init(event: "message", data: "a")]),
        Case("the last event type wins", "event: a\nevent: b\ndata: c\n\n", [.init(event: "b", data: "c")]),
        Case(
            "the id persists",
            "id: 7\ndata: a\n\ndata: b\n\n",
            [.init(data: "a", id: "7"), .init(data: "b", id: "7")]
        ),
        Case("an id-only block sets the id", "id: 5\n\ndata: a\n\n", [.init(data: "a", id: "5")]),
        Case(
            "an empty id resets it",
            "id: 5\ndata: a\n\nid:\ndata: b\n\n",
            [.init(data: "a", id: "5"), .init(data: "b")]
        ),
        Case("an id after data in the block counts", "data: a\nid: 9\n\n", [.init(data: "a", id: "9")]),
        Case(
            "an id containing NUL is ignored",
            "id: 1\ndata: a\n\nid: 2\u{0}3\ndata: b\n\n",
            [.init(data: "a", id: "1"), .init(data: "b", id: "1")]
        ),
        Case(
            "retry sets the reconnection time of the next event only",
            "retry: 1000\ndata: a\n\ndata: b\n\n",
            [.init(data: "a", retry: .milliseconds(1000)), .init(data: "b")]
        ),
        Case(
            "retry of a block without data carries over",
            "retry: 250\n\ndata: a\n\n",
            [.init(data: "a", retry: .milliseconds(250))]
        ),
        Case("retry zero", "retry: 0\ndata: a\n\n", [.init(data: "a", retry: .zero)]),
        Case("retry with a letter is ignored", "retry: 10a\ndata: a\n\n", [.init(data: "a")]),
        Case("negative retry is ignored", "retry: -1\ndata: a\n\n", [.init(data: "a")]),
        Case("empty retry is ignored", "retry:\ndata: a\n\n", [.init(data: "a")]),
        Case("retry with two spaces is ignored", "retry:  5\ndata: a\n\n", [.init(data: "a")]),
        Case("fractional retry is ignored", "retry: 1.5\ndata: a\n\n", [.init(data: "a")]),
        Case("retry too large for Int64 is ignored", "retry: 99999999999999999999\ndata: a\n\n", [.init(data: "a")]),
        Case("a byte order mark at the start is skipped", "\u{FEFF}data: x\n\n", [.init(data: "x")]),
        Case("a byte order mark on an empty first line", "\u{FEFF}\ndata: x\n\n", [.init(data: "x")]),
        Case("only the first byte order mark is skipped", "\u{FEFF}\u{FEFF}data: x\n\n", []),
        Case(
            "a byte order mark later is data",
            "data: x\n\ndata: \u{FEFF}y\n\n",
            [.init(data: "x"), .init(data: "\u{FEFF}y")]
        ),
        Case("multi-byte characters", "event: ünï\ndata: €😀 naïve\n\n", [.init(event: "ünï", data: "€😀 naïve")]),
        Case(
            "invalid UTF-8 becomes U+FFFD",
            bytes: Array("data: a".utf8) + [0xFF, 0xE2, 0x82] + Array("\n\n".utf8),
            [.init(data: "a\u{FFFD}\u{FFFD}")]
        ),
        Case("an empty stream", "", []),
        Case("a stream ending inside a line", "data: a\n\ndata: b", [.init(data: "a")]),
        Case("a stream ending after a line but before the blank line", "data: a\n\ndata: b\n", [.init(data: "a")]),
    ]

    @Test(arguments: specificationExamples + lineEndings + fields)
    func eventsAreTheSameForEveryChunking(_ testCase: Case) {
        let outcome = StreamChunking.sameOutcomeForEverySplit(of: testCase.bytes) { ServerSentEventParser() }
        #expect(outcome == .items(testCase.events))
    }

    @Test(arguments: specificationExamples + lineEndings)
    func theSequenceGivesTheParsersEvents(_ testCase: Case) async {
        let oneByteChunks = StreamChunking.everySplit(of: testCase.bytes).last ?? []
        let events = StreamChunking.stream(of: oneByteChunks).serverSentEvents()
        #expect(await StreamChunking.outcome(of: events) == .items(testCase.events))
    }

    @Test func aCRThatEndsAChunkAndAnLFThatStartsTheNextAreOneLineEnding() throws {
        var parser = ServerSentEventParser()
        #expect(try parser.parse(Data("data: a\r".utf8)) == [])
        #expect(try parser.parse(Data("\ndata: b\r".utf8)) == [])
        #expect(try parser.parse(Data()) == [])
        #expect(try parser.parse(Data("\n\r".utf8)) == [ServerSentEvent(data: "a\nb")])
    }

    @Test func lastEventIDChangesOnlyWhenABlockEnds() throws {
        var parser = ServerSentEventParser()
        #expect(parser.lastEventID == nil)
        _ = try parser.parse(Data("id: 1\ndata: a\n\nid: 2\n".utf8))
        #expect(parser.lastEventID == "1")
        _ = try parser.finish()
        #expect(parser.lastEventID == "1")
        #expect(try parser.parse(Data("data: b\n\n".utf8)) == [ServerSentEvent(data: "b", id: "1")])
        _ = try parser.parse(Data("id:\n\n".utf8))
        #expect(parser.lastEventID == nil)
    }

    @Test func aNewConnectionStartsWithTheLastEventIDAndReconnectionTime() throws {
        var parser = ServerSentEventParser(lastEventID: "41")
        #expect(parser.lastEventID == "41")
        #expect(
            try parser.parse(Data("retry: 5000\ndata: a\n\n".utf8)) == [.init(data: "a", id: "41", retry: .seconds(5))]
        )
        _ = try parser.parse(Data("retry: 7000\n\ndata: incomplete".utf8))
        #expect(parser.reconnectionTime == .seconds(7))
        #expect(try parser.finish() == [])
        #expect(parser.reconnectionTime == .seconds(7))
        #expect(try parser.parse(Data("\u{FEFF}data: c\n\n".utf8)) == [.init(data: "c", id: "41")])
    }

    @Test(arguments: [
        ("data: abc\n\n", StreamOutcome<ServerSentEvent>.items([.init(data: "abc")])),
        ("data: abc\r\n\r\n", .items([.init(data: "abc")])),
        (
            "data: abcd\n\n",
            .failure(
                code: .streamLineTooLong,
                message: "line 1 of the stream is longer than the maximum line length of 9 bytes"
            )
        ),
        (
            ": ok\r\ndata: abcdefgh",
            .failure(
                code: .streamLineTooLong,
                message: "line 2 of the stream is longer than the maximum line length of 9 bytes"
            )
        ),
    ])
    func linesLongerThanTheLimitThrow(_ input: String, _ expected: StreamOutcome<ServerSentEvent>) {
        let outcome = StreamChunking.sameOutcomeForEverySplit(of: Array(input.utf8)) {
            ServerSentEventParser(maximumLineLength: 9)
        }
        #expect(outcome == expected)
    }

    @Test func theSequenceExposesReconnectionStateAndEndsAfterAnError() async throws {
        let chunks = StreamChunking.stream(of: [
            Data("retry: 3000\nid: 8\ndata: first\n\n".utf8),
            Data("data: \(String(repeating: "x", count: 100))\n".utf8),
        ])
        let events = chunks.serverSentEvents(maximumLineLength: 50, lastEventID: "7")
        requireSendable(events)
        var iterator = events.makeAsyncIterator()
        #expect(iterator.lastEventID == "7")
        #expect(try await iterator.next() == ServerSentEvent(data: "first", id: "8", retry: .seconds(3)))
        #expect(iterator.lastEventID == "8")
        #expect(iterator.reconnectionTime == .seconds(3))
        let error = await #expect(throws: KiteError.self) { try await iterator.next() }
        #expect(error?.code == .streamLineTooLong)
        #expect(try await iterator.next() == nil)
    }

    @Test func theEventTypeDefaultsToMessage() {
        #expect(ServerSentEvent(data: "x").type == "message")
        #expect(ServerSentEvent(event: "ping", data: "x").type == "ping")
    }
}
