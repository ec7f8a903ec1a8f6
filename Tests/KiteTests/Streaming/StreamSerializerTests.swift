import Foundation
import NIOConcurrencyHelpers
import Testing

@testable import Kite

/// Alamofire's closure forms of serialized streams: `responseStreamString`, `responseStreamDecodable` and
/// `responseStream(using:)`.
@Suite struct StreamSerializerTests {
    /// Everything a serialized stream's handler was told, in order.
    final class Recorder<Success: Sendable, Failure: Error>: Sendable {
        let events = NIOLockedValueBox([String]())
        let values = NIOLockedValueBox([Success]())
        let failures = NIOLockedValueBox([KiteError]())

        func record(
            _ stream: DataStreamRequest.SerializedStream<Success, Failure>,
            _ ended: @Sendable (DataStreamRequest.Completion) -> Void
        ) {
            switch stream.event {
            case .stream(.success(let value)):
                self.values.withLockedValue { $0.append(value) }
                self.events.withLockedValue { $0.append("value") }
            case .stream(.failure(let error)):
                self.failures.withLockedValue { $0.append(error as! KiteError) }
                self.events.withLockedValue { $0.append("failure") }
            case .complete(let completion):
                self.events.withLockedValue { $0.append("complete") }
                ended(completion)
            }
        }
    }

    private static func mockSession(chunks: [Data], failingWith error: KiteError? = nil) -> Session {
        let mock = MockTransport()
        mock.stub(
            .get,
            "http://api.test/stream",
            response: .status(200, body: .chunks(chunks, delay: .milliseconds(2), thenFailingWith: error))
        )
        return Session(transport: mock)
    }

    @Test func aCharacterSplitBetweenChunksArrivesWhole() async throws {
        let text = "née → 🪁 ok"
        let bytes = Array(text.utf8)
        // Cut inside "é" (2 bytes), "→" (3 bytes) and "🪁" (4 bytes).
        let kite = bytes.firstIndex(of: 0xF0)!
        let cuts = [2, bytes.firstIndex(of: 0xE2)! + 1, kite + 1, kite + 3]
        let chunks = zip([0] + cuts, cuts + [bytes.count]).map { Data(bytes[$0..<$1]) }
        let recorder = Recorder<String, Never>()
        let completion = await withCheckedContinuation { continuation in
            Self.mockSession(chunks: chunks).streamRequest("http://api.test/stream").responseStreamString { stream in
                recorder.record(stream) { continuation.resume(returning: $0) }
            }
        }
        #expect(completion.error == nil)
        let values = recorder.values.withLockedValue { $0 }
        #expect(values.joined() == text)
        // One text per chunk, each ending at a whole character; the fourth chunk completes none.
        #expect(values == ["n", "ée ", "→ ", "🪁 ok"])
        #expect(!values.contains { $0.contains("\u{FFFD}") }, "\(values)")
        #expect(recorder.events.withLockedValue { $0.last } == "complete")
    }

    @Test func theCarryHoldsOnlyAnUnfinishedLastCharacter() {
        let bytes = Array("aé→🪁".utf8) + [0xFF] + Array("z".utf8)
        // At every split point into two chunks, the text is the whole decoding, U+FFFD only for the 0xFF.
        for split in 0...bytes.count {
            var carry = UTF8Carry()
            let text = carry.decode(Data(bytes[..<split])) + carry.decode(Data(bytes[split...])) + carry.finish()
            #expect(text == "aé→🪁\u{FFFD}z", "split at \(split)")
        }
        var truncated = UTF8Carry()
        #expect(truncated.decode(Data([0x61, 0xF0, 0x9F])) == "a")
        #expect(truncated.finish() == "\u{FFFD}", "an unfinished character at the end is replaced")
    }

    struct Item: Decodable, Sendable, Equatable {
        let id: Int
    }

    @Test func jsonLinesDecodeAcrossChunksAndTheLastLineWithoutANewline() async throws {
        let body = Data("{\"id\":1}\n\n{\"i".utf8)
        let rest = [Data("d\":2}\r\n{\"id\"".utf8), Data(":3}".utf8)]
        let recorder = Recorder<Item, KiteError>()
        let completion = await withCheckedContinuation { continuation in
            Self.mockSession(chunks: [body] + rest).streamRequest("http://api.test/stream")
                .responseStreamDecodable(of: Item.self) { stream in
                    recorder.record(stream) { continuation.resume(returning: $0) }
                }
        }
        #expect(completion.error == nil)
        #expect(recorder.values.withLockedValue { $0 } == [Item(id: 1), Item(id: 2), Item(id: 3)])
        #expect(recorder.events.withLockedValue { $0 } == ["value", "value", "value", "complete"])
    }

    @Test func aLineThatDoesNotDecodeIsDeliveredAndEndsTheRequest() async throws {
        let recorder = Recorder<Item, KiteError>()
        // The chunks after the bad line are on their way when the request is cancelled: they deliver nothing.
        let chunks = [Data("{\"id\":1}\n{\"id\":\"two\"}\n".utf8)] + (3...6).map { Data("{\"id\":\($0)}\n".utf8) }
        let completion = await withCheckedContinuation { continuation in
            Self.mockSession(chunks: chunks).streamRequest("http://api.test/stream")
                .responseStreamDecodable(of: Item.self) { stream in
                    recorder.record(stream) { continuation.resume(returning: $0) }
                }
        }
        #expect(recorder.values.withLockedValue { $0 } == [Item(id: 1)])
        let failure = try #require(recorder.failures.withLockedValue { $0.first })
        #expect(failure.code == .streamDecodingFailed)
        #expect(failure.message.hasPrefix("line 2 "), "\(failure.message)")
        #expect(failure.description.hasPrefix("GET http://api.test/stream failed: line 2 "))
        #expect(completion.error?.code == .streamDecodingFailed, "the request ends with the line's error")
        #expect(recorder.events.withLockedValue { $0 } == ["value", "failure", "complete"])
    }

    @Test func aCutStreamDoesNotDecodeItsUnfinishedLastLine() async throws {
        let lost = KiteError(code: .connectionLost, message: "the server closed the connection midway")
        let recorder = Recorder<Item, KiteError>()
        let completion = await withCheckedContinuation { continuation in
            Self.mockSession(chunks: [Data("{\"id\":1}\n{\"id\":2".utf8)], failingWith: lost)
                .streamRequest("http://api.test/stream")
                .responseStreamDecodable(of: Item.self) { stream in
                    recorder.record(stream) { continuation.resume(returning: $0) }
                }
        }
        #expect(recorder.values.withLockedValue { $0 } == [Item(id: 1)])
        #expect(completion.error?.code == .connectionLost)
        #expect(recorder.events.withLockedValue { $0 } == ["value", "complete"])
    }

    struct Refusing: DataStreamSerializer {
        struct Odd: Error {}
        func serialize(_ data: Data) throws -> Int {
            guard data.count.isMultiple(of: 2) else { throw Odd() }
            return data.count
        }
    }

    @Test func aCustomSerializerSeesEachChunkAndAFailureDoesNotEndTheStream() async throws {
        let recorder = Recorder<Int, KiteError>()
        let chunks = [Data(count: 4), Data(count: 3), Data(count: 2)]
        let completion = await withCheckedContinuation { continuation in
            Self.mockSession(chunks: chunks).streamRequest("http://api.test/stream")
                .responseStream(using: Refusing()) { stream in
                    recorder.record(stream) { continuation.resume(returning: $0) }
                }
        }
        #expect(completion.error == nil)
        #expect(recorder.values.withLockedValue { $0 } == [4, 2])
        #expect(recorder.failures.withLockedValue { $0.map(\.code) } == [.streamDecodingFailed])
        #expect(recorder.events.withLockedValue { $0 } == ["value", "failure", "value", "complete"])
    }

    @Test(arguments: Backend.available)
    func httpbinsStreamDecodesLineByLine(backend: Backend) async throws {
        struct Line: Decodable, Sendable { let id: Int }
        let recorder = Recorder<Line, KiteError>()
        let url = try await backend.url("/stream/4")
        let completion = await withCheckedContinuation { continuation in
            Session.suite.streamRequest(url).validate().responseStreamDecodable(of: Line.self) { stream in
                recorder.record(stream) { continuation.resume(returning: $0) }
            }
        }
        #expect(completion.error == nil)
        #expect(completion.response?.status.code == 200)
        #expect(recorder.values.withLockedValue { $0.map(\.id) } == [0, 1, 2, 3])
        let passthrough = Recorder<Data, KiteError>()
        let end = await withCheckedContinuation { continuation in
            Session.suite.streamRequest(url).responseStream(using: PassthroughStreamSerializer()) { stream in
                passthrough.record(stream) { continuation.resume(returning: $0) }
            }
        }
        #expect(end.error == nil)
        let lines = String(decoding: passthrough.values.withLockedValue { $0.reduce(Data(), +) }, as: UTF8.self)
        #expect(lines.split(separator: "\n").count == 4)
    }
}
