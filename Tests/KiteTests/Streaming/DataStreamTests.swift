import Dispatch
import Foundation
import Kite
import NIOConcurrencyHelpers
import Testing

@Suite struct DataStreamTests {
    @Test(arguments: Backend.available)
    func chunksArriveInOrderAndAddUpToTheBody(backend: Backend) async throws {
        var body = Data()
        for try await chunk in Session.suite.streamRequest(try await backend.url("/stream/5")).validate()
            .streamingData()
        {
            body.append(chunk)
        }
        let lines = String(decoding: body, as: UTF8.self).split(separator: "\n")
        #expect(lines.count == 5)
        for (index, line) in lines.enumerated() {
            let json = try JSONDecoder().decode(JSONValue.self, from: Data(line.utf8))
            #expect(json["id"] == .int(index))
        }
    }

    @Test(arguments: Backend.available)
    func closureReadersGetEveryChunkThenTheCompletionOnTheirQueue(backend: Backend) async throws {
        let queue = DispatchQueue(label: "stream.reader")
        let key = DispatchSpecificKey<Bool>()
        queue.setSpecific(key: key, value: true)
        let events = NIOLockedValueBox([String]())
        let total = NIOLockedValueBox(0)
        let url = try await backend.url("/bytes/50000?seed=4")
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Session.suite.streamRequest(url).responseStream(on: queue) { stream in
                #expect(DispatchQueue.getSpecific(key: key) == true)
                switch stream.event {
                case .data(let chunk):
                    total.withLockedValue { $0 += chunk.count }
                    events.withLockedValue { $0.append("data") }
                case .complete(let completion):
                    events.withLockedValue { $0.append("complete \(completion.response?.status.code ?? 0)") }
                    #expect(completion.error == nil)
                    continuation.resume()
                }
            }
        }
        #expect(total.withLockedValue { $0 } == 50_000)
        #expect(events.withLockedValue { $0.last } == "complete 200")
        #expect(events.withLockedValue { $0.dropLast().allSatisfy { $0 == "data" } })
    }

    @Test func aSlowReaderSlowsTheDownload() async throws {
        let url = try await Backend.inProcess.url("/bytes/33554432")
        let request = Session.suite.streamRequest(url)
        let received = NIOLockedValueBox<Int64>(0)
        request.downloadProgress(queue: .global()) { progress in
            received.withLockedValue { $0 = progress.completedBytes }
        }
        var iterator = request.streamingData().makeAsyncIterator()
        _ = try await iterator.next()
        try await Task.sleep(for: .milliseconds(600))
        let whileBlocked = received.withLockedValue { $0 }
        #expect(whileBlocked < 4 * 1024 * 1024, "the pipeline waited for the reader: \(whileBlocked) bytes")
        var total = 0
        while let chunk = try await iterator.next() { total += chunk.count }
        #expect(total > 0)
    }

    /// A consumer that holds the stream back (suspended, or not reading) for longer than the idle-read timeout:
    /// the engine stops reading meanwhile, and the timeout does not count that pause.
    @Test(arguments: [true, false])
    func aStreamHeldBackLongerThanTheIdleReadTimeoutCompletes(suspends: Bool) async throws {
        let idleRead = Duration.milliseconds(300)
        try await FaultInjectionTests.withSession(.with { $0.timeouts.idleRead = idleRead }) { session in
            let size = 16 << 20
            let request = session.streamRequest(try await FaultServer.url("/huge-body?size=\(size)"))
            var iterator = request.streamingData().makeAsyncIterator()
            var total = try #require(try await iterator.next()).count
            if suspends { request.suspend() }
            try await Task.sleep(for: idleRead * 5)
            if suspends { request.resume() }
            while let chunk = try await iterator.next() { total += chunk.count }
            #expect(total == size)
        }
    }

    @Test(arguments: Backend.available)
    func aFailedValidationDeliversNoBody(backend: Backend) async throws {
        let url = try await backend.url("/status/500")
        let request = Session.suite.streamRequest(url).validate()
        var chunks = 0
        do {
            for try await _ in request.streamingData() { chunks += 1 }
            Issue.record("the stream should fail")
        } catch {
            #expect(error.code == .responseValidationFailed)
            #expect(error.description == "GET \(url) failed: response status 500 is not in 200..<300")
        }
        #expect(chunks == 0)
    }

    @Test func aHandlerCanCancelTheStream() async throws {
        let url = try await Backend.inProcess.url("/drip?duration=2&numbytes=20")
        let dataEvents = NIOLockedValueBox(0)
        let completion: DataStreamRequest.Completion = await withCheckedContinuation { continuation in
            Session.suite.streamRequest(url).responseStream { stream in
                switch stream.event {
                case .data:
                    dataEvents.withLockedValue { $0 += 1 }
                    stream.cancel()
                case .complete(let completion):
                    continuation.resume(returning: completion)
                }
            }
        }
        #expect(completion.error?.code == .cancelled)
        #expect(dataEvents.withLockedValue { $0 } <= 2)
    }

    @Test func leavingTheLoopEarlyCancelsTheRequest() async throws {
        let request = Session.suite.streamRequest(try await Backend.inProcess.url("/drip?duration=3&numbytes=30"))
        let task = request.streamingData()
        for try await _ in task { break }
        try await Task.sleep(for: .milliseconds(200))
        #expect(request.state == .cancelled)
    }

    @Test func cancellingTheReadingTaskCancelsTheRequest() async throws {
        let request = Session.suite.streamRequest(try await Backend.inProcess.url("/drip?duration=3&numbytes=30"))
        let stream = request.streamingData()
        let reader = Task { () -> KiteError.Code? in
            do throws(KiteError) {
                for try await _ in stream {}
            } catch {
                return error.code
            }
            return nil
        }
        try await Task.sleep(for: .milliseconds(300))
        reader.cancel()
        #expect(await reader.value == .cancelled)
        #expect(request.state == .cancelled)
    }
}

@Suite struct StreamDecoderIntegrationTests {
    struct Line: Decodable, Sendable {
        let id: Int
        let url: String
    }

    @Test(arguments: Backend.available)
    func jsonLinesDecodeAsTheyArrive(backend: Backend) async throws {
        var ids: [Int] = []
        for try await line in Session.suite.streamRequest(try await backend.url("/stream/4")).streamingJSONLines(
            of: Line.self
        ) {
            ids.append(line.id)
            #expect(line.url == (try await backend.url("/stream/4")))
        }
        #expect(ids == [0, 1, 2, 3])
    }

    @Test(arguments: Backend.available)
    func linesAreSplitAcrossChunks(backend: Backend) async throws {
        var count = 0
        for try await line in Session.suite.streamRequest(try await backend.url("/stream/3")).streamingLines() {
            #expect(line.hasPrefix("{") && line.hasSuffix("}"))
            count += 1
        }
        #expect(count == 3)
    }
}

@Suite struct ServerSentEventLimitTests {
    @Test func anEventThatNeverEndsCannotGrowPastTheLimit() throws {
        var parser = ServerSentEventParser(maximumEventLength: 25)
        #expect(try parser.parse(Data("data: 0123456789\ndata: 0123456789\n".utf8)) == [])
        #expect(throws: KiteError.self) { try parser.parse(Data("data: 0123456789\n".utf8)) }
        do {
            _ = try parser.parse(Data("\n".utf8))
            Issue.record("a failed parser keeps failing")
        } catch let error as KiteError {
            #expect(error.code == .streamLineTooLong)
            #expect(
                error.message
                    == "the event ending at line 3 of the stream has more than 25 bytes of data (the maximum event length)"
            )
        }
        var fits = ServerSentEventParser(maximumEventLength: 22)
        #expect(
            try fits.parse(Data("data: 0123456789\ndata: 0123456789\n\n".utf8)).map(\.data) == [
                "0123456789\n0123456789"
            ]
        )
    }
}

@Suite struct ServerSentEventIntegrationTests {
    @Test(arguments: ["", "&crlf=1", "&cr=1"])
    func eventsArriveDecodedWhateverTheLineEndings(endings: String) async throws {
        let url = try await Backend.inProcess.url("/sse?count=3&retry=1500\(endings)")
        var events: [ServerSentEvent] = []
        for try await event in Session.suite.streamRequest(url).validate(contentType: ["text/event-stream"])
            .streamingServerSentEvents()
        {
            events.append(event)
        }
        #expect(events.count == 4)
        #expect(events.prefix(3).map(\.type) == ["tick", "tock", "tick"])
        #expect(events.prefix(3).map(\.id) == ["0", "1", "2"])
        #expect(events[1].data == "{\"index\": 1}\nline two of 1")
        #expect(events[0].retry == .milliseconds(1500))
        #expect(events[3].type == "message")
        #expect(events[3].data == "done")
        #expect(events[3].id == "2", "the last event ID persists")
    }

    @Test func eventsArriveAsTheServerSendsThem() async throws {
        let url = try await Backend.inProcess.url("/sse?count=3&interval=0.3")
        let started = ContinuousClock.now
        var arrivals: [Duration] = []
        for try await _ in Session.suite.streamRequest(url).streamingServerSentEvents() {
            arrivals.append(started.duration(to: .now))
        }
        #expect(arrivals.count == 4)
        let first = try #require(arrivals.first)
        let last = try #require(arrivals.last)
        #expect(last >= .milliseconds(800), "paced by the server, not buffered")
        #expect(first < last)
    }

    @Test func linesSplitAtOddChunkBoundariesComeOutWhole() async throws {
        let url = try await Backend.inProcess.url("/stream-lines/50?size=12")
        var lines: [String] = []
        for try await line in Session.suite.streamRequest(url).streamingLines() { lines.append(line) }
        #expect(lines.count == 50)
        #expect(lines[0] == "line 0 xxxxx")
        #expect(lines[49] == "line 49 xxxx")
        #expect(lines.allSatisfy { $0.utf8.count == 12 })
    }
}
