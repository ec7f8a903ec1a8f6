import Foundation
import Kite
import Testing

/// The examples in the streaming DocC comments, checked against what the comments say they give.
@Suite struct StreamingDocumentationExampleTests {
    struct Tick: Decodable, Sendable, Equatable {
        var symbol: String
        var price: Int
    }

    @Test func utf8LineParser() throws {
        var parser = UTF8LineParser()
        var lines = try parser.parse(Data("first\r\nsec".utf8))
        #expect(lines == ["first"])
        lines += try parser.parse(Data("ond\nthird".utf8))
        #expect(lines == ["first", "second"])
        lines += try parser.finish()
        #expect(lines == ["first", "second", "third"])

        var other = UTF8LineParser()
        #expect(try other.parse(Data("a\nb\nc".utf8)) == ["a", "b"])
        #expect(try other.finish() == ["c"])
    }

    @Test func utf8LineSequence() async throws {
        let (chunks, continuation) = AsyncStream.makeStream(of: Data.self)
        continuation.yield(Data("event one\r\nevent ".utf8))
        continuation.yield(Data("two\n".utf8))
        continuation.finish()
        var lines: [String] = []
        for try await line in chunks.utf8Lines() {
            lines.append(line)
        }
        #expect(lines == ["event one", "event two"])
    }

    @Test func jsonLinesParser() throws {
        var parser = JSONLinesParser(of: Int.self)
        #expect(try parser.parse(Data("1\n2\n3".utf8)) == [1, 2])
        #expect(try parser.finish() == [3])

        struct Price: Decodable, Sendable {
            var price: Int
        }
        var prices = JSONLinesParser(of: Price.self)
        #expect(try prices.parse(Data("{\"price\":1}\n\n{\"price\":2}\n".utf8)).map(\.price) == [1, 2])
    }

    @Test func jsonLinesSequence() async throws {
        let (chunks, continuation) = AsyncStream.makeStream(of: Data.self)
        continuation.yield(Data("{\"symbol\":\"KITE\",\"pr".utf8))
        continuation.yield(Data("ice\":42}\n".utf8))
        continuation.finish()
        var ticks: [Tick] = []
        for try await tick in chunks.jsonLines(of: Tick.self) {
            ticks.append(tick)
        }
        #expect(ticks == [Tick(symbol: "KITE", price: 42)])
    }

    @Test func serverSentEventParser() throws {
        var parser = ServerSentEventParser()
        var events = try parser.parse(Data("event: add\ndata: 7385".utf8))
        #expect(events == [])
        events += try parser.parse(Data("7293\r\n\r\n".utf8))
        #expect(events == [ServerSentEvent(event: "add", data: "73857293")])

        var keepAlive = ServerSentEventParser()
        #expect(try keepAlive.parse(Data(": keep-alive\ndata: hello\n\n".utf8)).map(\.data) == ["hello"])

        var incomplete = ServerSentEventParser()
        _ = try incomplete.parse(Data("id: 7\n\ndata: incomplete\n".utf8))
        #expect(try incomplete.finish() == [])
        #expect(incomplete.lastEventID == "7")
    }

    @Test func serverSentEventSequence() async throws {
        let (chunks, continuation) = AsyncStream.makeStream(of: Data.self)
        continuation.yield(Data(": welcome\nevent: price\nid: 1\ndata: 42\n\n".utf8))
        continuation.finish()
        var iterator = chunks.serverSentEvents().makeAsyncIterator()
        let event = try await iterator.next()
        #expect(event?.type == "price")
        #expect(event?.id == "1")
        #expect(event?.data == "42")
        #expect(try await iterator.next() == nil)
        #expect(iterator.lastEventID == "1")
        #expect(iterator.reconnectionTime == nil)
    }

    @Test func serverSentEvent() {
        let event = ServerSentEvent(event: "price", data: "{\"symbol\":\"KITE\",\n\"price\":7}", id: "42")
        #expect(event.type == "price")
        #expect(ServerSentEvent(data: "hi").type == "message")
    }
}
