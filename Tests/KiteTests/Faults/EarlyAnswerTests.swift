import Foundation
import HTTPTypes
import NIOCore
import Testing

@testable import Kite

/// async-http-client 1.37 stops pulling an upload once a head of 300 or more arrives before the body was sent; if its
/// body task is then handed a chunk, it waits to write it for a demand that never comes, and keeps the chunk, its
/// transaction and its connection for the life of the process (RELIABILITY.md). Kite's body hands over no chunk after
/// such a head (``UploadWatch``), so the task ends.
@Suite struct EarlyAnswerTests {
    /// Tells a stream when what holds it is released.
    final class Token: Sendable {
        let released: AsyncStream<Void>.Continuation
        init(_ released: AsyncStream<Void>.Continuation) { self.released = released }
        deinit {
            self.released.yield()
            self.released.finish()
        }
    }

    /// The engine is handed the body's second chunk only after the 413 and its end have arrived: before the watch,
    /// the engine's task waited forever with it, and kept the body's iterator (here, the token) with it. The server
    /// drains the body after its answer: one that closes with unread bytes resets the connection, and the reset may
    /// overtake the answer.
    @Test func theEnginesBodyTaskEndsWhenTheServerAnsweredBeforeTheBody() async throws {
        let transport = AHCTransport(configuration: Session.Configuration(), canShutDown: true)
        defer { Task { try? await transport.shutdown() } }
        let url = try #require(URLComponents(string: try await FaultServer.url("/early-status?status=413&then=drain")))
        let head = HTTPRequest(
            method: .post,
            scheme: "http",
            authority: "\(url.host!):\(url.port!)",
            path: "\(url.path)?\(url.query!)"
        )
        let (released, releasedContinuation) = AsyncStream<Void>.makeStream()
        let (gate, opened) = AsyncStream<Void>.makeStream()
        let chunk = ByteBuffer(repeating: 0x6B, count: 64 << 10)
        let body = TransportRequestBody.stream(length: 16 * Int64(chunk.readableBytes), replayable: false) {
            let token = Token(releasedContinuation)
            return ByteChunks(makeNext: {
                var handed = 0
                var gateIterator = gate.makeAsyncIterator()
                return { () async -> ByteBuffer? in
                    _ = token
                    handed += 1
                    if handed == 2 { _ = await gateIterator.next() }
                    return handed <= 16 ? chunk : nil
                }
            })
        }
        let response = try await transport.send(TransportRequest(head: head, body: body))
        #expect(response.head.status.code == 413)
        var text = ""
        for try await part in response.body { text += String(buffer: part) }
        #expect(text == "too large")
        opened.yield()
        // The engine's task lets go of the body once it ends; at most 10 s.
        let ended = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                for await _ in released { return true }
                return true
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(10))
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
        #expect(ended, "the engine's body task still holds the upload")
        #expect(transport.uploadWatches.registeredCount == 0)
    }
}
