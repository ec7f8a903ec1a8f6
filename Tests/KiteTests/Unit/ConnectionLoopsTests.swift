import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import Kite

/// The loop a stream's engine delegate runs on: that of the connection that last started a request.
@Suite struct ConnectionLoopsTests {
    /// An HTTP/1 client pipeline as async-http-client builds it (encoder, then decoder), with the noting handler.
    static func connection(_ loops: ConnectionLoops) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHTTPClientHandlers()
        try loops.install(on: channel)
        return channel
    }

    static func head(_ uri: String) -> HTTPClientRequestPart {
        .head(HTTPRequestHead(version: .http1_1, method: .GET, uri: uri, headers: ["Host": "example.test"]))
    }

    @Test func aRequestHeadNotesItsConnectionsLoopAndGoesOutUnchanged() throws {
        let loops = ConnectionLoops()
        #expect(loops.last == nil)
        let channel = try Self.connection(loops)
        try channel.writeOutbound(Self.head("/first"))
        #expect(loops.last === channel.eventLoop)
        let bytes = try #require(try channel.readOutbound(as: ByteBuffer.self))
        #expect(String(buffer: bytes) == "GET /first HTTP/1.1\r\nHost: example.test\r\n\r\n")
        _ = try channel.finish()
    }

    @Test func theConnectionThatLastStartedARequestWins() throws {
        let loops = ConnectionLoops()
        let first = try Self.connection(loops)
        let second = try Self.connection(loops)
        #expect(first.eventLoop !== second.eventLoop)
        try first.writeOutbound(Self.head("/a"))
        try second.writeOutbound(Self.head("/b"))
        #expect(loops.last === second.eventLoop)
        // A body part is not a new request: the loop stays.
        try first.writeOutbound(HTTPClientRequestPart.body(.byteBuffer(ByteBuffer(string: "x"))))
        #expect(loops.last === second.eventLoop)
        try first.writeOutbound(Self.head("/c"))
        #expect(loops.last === first.eventLoop)
        _ = try first.finish(acceptAlreadyClosed: true)
        _ = try second.finish(acceptAlreadyClosed: true)
    }
}
