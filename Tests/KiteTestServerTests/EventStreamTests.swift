import AsyncHTTPClient
import Testing

/// A response body as it arrived: each buffer with the time since the request was sent.
struct ArrivedPieces: Sendable {
    var status: Int
    var headers: [(name: String, value: String)]
    var pieces: [(bytes: [UInt8], at: Duration)]

    /// The whole body as text.
    var text: String {
        String(decoding: self.pieces.flatMap(\.bytes), as: UTF8.self)
    }

    /// The offsets in the body at which a piece starts.
    var pieceStarts: Set<Int> {
        var starts: Set<Int> = []
        var offset = 0
        for piece in self.pieces {
            starts.insert(offset)
            offset += piece.bytes.count
        }
        return starts
    }

    func header(_ name: String) -> String? {
        self.headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }
}

extension Harness {
    /// Sends a GET to `path` and records the body buffers as they arrive.
    func arrivals(_ path: String) async throws -> ArrivedPieces {
        let request = HTTPClientRequest(url: self.server.baseURL + path)
        let clock = ContinuousClock()
        let start = clock.now
        let response = try await self.client.execute(request, timeout: .seconds(30))
        var pieces: [(bytes: [UInt8], at: Duration)] = []
        for try await buffer in response.body {
            pieces.append((Array(buffer.readableBytesView), start.duration(to: clock.now)))
        }
        return ArrivedPieces(
            status: Int(response.status.code),
            headers: response.headers.map { ($0.name, $0.value) },
            pieces: pieces
        )
    }
}

@Suite("Server-Sent Events")
struct EventStreamTests {
    /// Event `index` as `/sse` writes it, with `eol` ending each line.
    static func event(_ index: Int, eol: String = "\n") -> String {
        "id: \(index)\(eol)event: \(index % 2 == 0 ? "tick" : "tock")\(eol)data: {\"index\": \(index)}\(eol)"
            + "data: line two of \(index)\(eol)\(eol)"
    }

    @Test("/sse sends the comment, the events and the final data event with LF line endings")
    func eventStreamBytes() async throws {
        try await withHarness { harness in
            let response = try await harness.fetch("/sse?count=3")
            #expect(response.status == 200)
            #expect(response.header("Content-Type") == "text/event-stream")
            #expect(response.header("Cache-Control") == "no-cache")
            #expect(response.header("Transfer-Encoding") == "chunked")
            let expected = """
                : kite test stream

                id: 0
                event: tick
                data: {"index": 0}
                data: line two of 0

                id: 1
                event: tock
                data: {"index": 1}
                data: line two of 1

                id: 2
                event: tick
                data: {"index": 2}
                data: line two of 2

                data: done


                """
            #expect(response.text == expected)
        }
    }

    @Test("/sse uses CRLF or CR line endings on request and announces retry")
    func eventStreamLineEndings() async throws {
        try await withHarness { harness in
            let crlf = try await harness.fetch("/sse?count=1&crlf=1&retry=1500")
            #expect(crlf.status == 200)
            #expect(
                crlf.text
                    == ": kite test stream\r\n\r\nretry: 1500\r\n\r\nid: 0\r\nevent: tick\r\n"
                    + "data: {\"index\": 0}\r\ndata: line two of 0\r\n\r\ndata: done\r\n\r\n"
            )
            let cr = try await harness.fetch("/sse?count=2&cr=true")
            #expect(
                cr.text == ": kite test stream\r\r" + Self.event(0, eol: "\r") + Self.event(1, eol: "\r")
                    + "data: done\r\r"
            )
            let none = try await harness.fetch("/sse?count=0&retry=0")
            #expect(none.text == ": kite test stream\n\nretry: 0\n\ndata: done\n\n")
            let defaults = try await harness.fetch("/sse")
            #expect(
                defaults.text == ": kite test stream\n\n" + (0..<3).map { Self.event($0) }.joined() + "data: done\n\n"
            )
        }
    }

    @Test("/sse sends each event as its own chunk, interval apart")
    func eventsArriveSeparately() async throws {
        try await withHarness { harness in
            let response = try await harness.arrivals("/sse?count=3&interval=0.2")
            #expect(response.status == 200)
            let preamble = ": kite test stream\n\n"
            let events = (0..<3).map { Self.event($0) }
            #expect(response.text == preamble + events.joined() + "data: done\n\n")
            // Everything written after a pause starts a new piece.
            var offset = preamble.utf8.count + events[0].utf8.count
            var starts = [offset]
            for event in events.dropFirst() {
                offset += event.utf8.count
                starts.append(offset)
            }
            let pieceStarts = response.pieceStarts
            #expect(starts.allSatisfy { pieceStarts.contains($0) }, "\(starts) in \(pieceStarts.sorted())")
            // The server waits 0.2 s before each of the last three pieces.
            let last = try #require(response.pieces.last)
            #expect(last.at >= .milliseconds(600))
            #expect(last.at < .seconds(10))
        }
    }

    @Test("/sse rejects invalid options")
    func eventStreamValidation() async throws {
        let queries = [
            "count=-1", "count=abc", "interval=-1", "interval=soon", "retry=-5", "retry=1.5", "crlf=maybe",
            "crlf=1&cr=1",
        ]
        try await withHarness { harness in
            for query in queries {
                let response = try await harness.fetch("/sse?\(query)")
                #expect(response.status == 400, "\(query)")
            }
        }
    }
}

@Suite("Streamed lines")
struct StreamLinesTests {
    @Test("/stream-lines sends n padded lines")
    func linesArePadded() async throws {
        try await withHarness { harness in
            let response = try await harness.fetch("/stream-lines/3?size=12")
            #expect(response.status == 200)
            #expect(response.header("Content-Type") == "text/plain; charset=utf-8")
            #expect(response.text == "line 0 xxxxx\nline 1 xxxxx\nline 2 xxxxx\n")
            let defaults = try await harness.fetch("/stream-lines/2")
            #expect(defaults.text == "line 0 xxxxxxxxxxxxx\nline 1 xxxxxxxxxxxxx\n")
            let short = try await harness.fetch("/stream-lines/11?size=3")
            #expect(short.text.split(separator: "\n").last == "line 10 ")
            #expect(try await harness.fetch("/stream-lines/0").body.isEmpty)
        }
    }

    @Test("/stream-lines splits lines across chunks")
    func chunksSplitLines() async throws {
        try await withHarness { harness in
            let response = try await harness.arrivals("/stream-lines/3?size=12")
            #expect(response.text == "line 0 xxxxx\nline 1 xxxxx\nline 2 xxxxx\n")
            #expect(response.pieces.map(\.bytes.count) == [7, 7, 7, 7, 7, 4])
            let custom = try await harness.arrivals("/stream-lines/2?size=4&chunk_size=3")
            #expect(
                custom.pieces.map { String(decoding: $0.bytes, as: UTF8.self) } == [
                    "lin", "e 0", " \nl", "ine", " 1 ", "\n",
                ]
            )
        }
    }

    @Test("/stream-lines rejects invalid options")
    func streamLinesValidation() async throws {
        let paths = [
            "/stream-lines/abc", "/stream-lines/3?size=-1", "/stream-lines/3?chunk_size=0", "/stream-lines/3?size=x",
        ]
        try await withHarness { harness in
            for path in paths {
                let response = try await harness.fetch(path)
                #expect(response.status == 400, "\(path)")
            }
        }
    }
}
