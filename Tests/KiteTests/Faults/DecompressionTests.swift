import CompressNIO
import Foundation
import NIOCore
import Testing

@testable import Kite

/// Kite's own gzip/deflate decoding: legitimate repetitive bodies pass, bombs stop early in bounded
/// memory, multi-member gzip decodes whole, truncated and corrupt bodies fail clearly.
@Suite struct DecompressionTests {
    // MARK: Against the fault server

    @Test func aLargeRepetitiveJSONArrayDecodes() async throws {
        // ~594 kB of identical objects: about 390 times its gzip size, which a bare ratio limit rejected.
        let url = try await FaultServer.url("/gzip-json?count=11000")
        let response = await Session.suite.request(url).serializingData().response
        #expect(response.error == nil, "\(String(describing: response.error))")
        let array = try JSONSerialization.jsonObject(with: try #require(response.data)) as? [Any]
        #expect(array?.count == 11000)
    }

    @Test func aSmallHighlyCompressibleBodyDecodes() async throws {
        let url = try await FaultServer.url("/gzip-zeros?size=12000")
        let response = await Session.suite.request(url).serializingData().response
        #expect(response.error == nil, "\(String(describing: response.error))")
        #expect(response.data == Data(count: 12000))
    }

    @Test func multiMemberGzipDecodesAllItsMembers() async throws {
        let url = try await FaultServer.url("/gzip-multi?parts=3&size=70000")
        let response = await Session.suite.request(url).serializingData().response
        #expect(response.error == nil, "\(String(describing: response.error))")
        #expect(response.data == FaultInjectionTests.deterministicBody(210_000))
    }

    @Test(arguments: ["chunked", "length"])
    func aGzipBombStopsEarly(mode: String) async throws {
        let url = try await FaultServer.url("/gzip-bomb?size=1073741824&mode=\(mode)")
        let response = await Session.suite.request(url).serializingData().response
        let error = try #require(response.error)
        #expect(error.code == .decompressionFailed, "\(error)")
        #expect(error.message.contains("inflated more than 100 times"), "\(error.message)")
        // Stopped at the 10 MiB floor: the step that crossed it (at most 64 KiB) was never delivered.
        let received = try #require(response.metrics?.bytesReceived)
        let floor: Int64 = 10 * 1024 * 1024
        #expect(received > floor - 64 * 1024 && received <= floor, "\(received)")
    }

    @Test func aGzipBombDownloadStopsEarlyToo() async throws {
        let url = try await FaultServer.url("/gzip-bomb?size=1073741824&mode=chunked")
        let response = await Session.suite.download(url).serializingDownloadedFileURL().response
        #expect(response.error?.code == .decompressionFailed, "\(String(describing: response.error))")
        #expect(response.fileURL == nil)
    }

    @Test func theResponseSizeLimitCountsDecodedBytes() async throws {
        try await FaultInjectionTests.withSession(.with { $0.maximumResponseSize = 1_000_000 }) { session in
            let url = try await FaultServer.url("/gzip-zeros?size=5000000")
            let error = try #require(await session.request(url).serializingData().response.error)
            #expect(error.code == .responseTooLarge, "\(error)")
        }
    }

    @Test func withDecompressionDisabledTheBodyArrivesAsSent() async throws {
        try await FaultInjectionTests.withSession(.with { $0.decompression = .disabled }) { session in
            let url = try await FaultServer.url("/gzip-zeros?size=12000")
            let response = await session.request(url).serializingData().response
            let data = try #require(response.data)
            #expect(data.prefix(2) == Data([0x1F, 0x8B]))
            #expect(response.response?.headerFields[.contentEncoding] == "gzip")
        }
    }

    // MARK: The decoder alone

    static func compress(_ data: Data, _ algorithm: ZlibAlgorithm) throws -> Data {
        let compressor = try ZlibCompressor(algorithm: algorithm)
        var input = ByteBuffer(bytes: data)
        var output = ByteBufferAllocator().buffer(capacity: compressor.maxSize(from: input))
        try compressor.deflate(from: &input, to: &output, flush: .finish)
        return Data(output.readableBytesView)
    }

    /// Decodes `body` split into chunks of `chunkSize` bytes.
    static func decode(
        _ body: Data,
        format: BodyDecoder.Format,
        chunkSize: Int = 7,
        maximumRatio: Int = 100,
        ratioCheckedAfter: Int64 = 10 * 1024 * 1024
    ) async throws -> Data {
        let chunks = stride(from: 0, to: body.count, by: chunkSize).map {
            ByteBuffer(bytes: body[$0..<min($0 + chunkSize, body.count)])
        }
        let decoded = BodyDecoder.decoding(
            ByteChunks(chunks: chunks),
            format: format,
            maximumRatio: maximumRatio,
            ratioCheckedAfter: ratioCheckedAfter
        )
        var result = Data()
        for try await chunk in decoded {
            #expect(chunk.readableBytes <= BodyDecoder.outputChunkSize)
            result.append(contentsOf: chunk.readableBytesView)
        }
        return result
    }

    /// Made for each use: a `Data` in a global is reported leaked by LeakSanitizer (its storage pointer carries
    /// Swift's enum tag in its spare bits, llvm/llvm-project#56751).
    static var text: Data { Data((0..<50_000).map { UInt8(truncatingIfNeeded: $0 * 7 % 61 + 32) }) }

    /// A bomb in one large chunk (as a connection that reads 256 KiB at a time hands it over) stops at the floor
    /// too: the ratio counts the compressed bytes inflated so far, not the whole chunk received. (Counting the
    /// chunk, 10 MiB decoded from a 200 KiB chunk was a ratio of 50, and the check first tripped near 20 MiB.)
    @Test func aBombInOneLargeChunkStopsAtTheFloor() async throws {
        let bomb = try await offThePool { try Self.compress(Data(count: 200 << 20), .gzip) }
        #expect(bomb.count > 150_000, "\(bomb.count) compressed bytes")
        let decoded = BodyDecoder.decoding(
            ByteChunks(chunks: [ByteBuffer(bytes: bomb)]),
            format: .gzip,
            maximumRatio: 100,
            ratioCheckedAfter: 10 << 20
        )
        var delivered = 0
        await #expect {
            for try await chunk in decoded {
                delivered += chunk.readableBytes
                await Task.yield()  // 10 MiB decoded in one task: let other tests' tasks run between chunks.
            }
        } throws: { error in
            (error as? KiteError)?.code == .decompressionFailed
        }
        #expect(delivered > (10 << 20) - BodyDecoder.outputChunkSize && delivered <= 10 << 20, "\(delivered)")
    }

    @Test(arguments: [1, 7, 4096, 1_000_000])
    func membersSplitAcrossChunksDecode(chunkSize: Int) async throws {
        let body = try Self.compress(Self.text, .gzip) + Self.compress(Data("second".utf8), .gzip)
        #expect(try await Self.decode(body, format: .gzip, chunkSize: chunkSize) == Self.text + Data("second".utf8))
    }

    /// `deflate` is zlib-wrapped (RFC 9110 §8.4.1.2) or, from some servers, raw; the first two bytes tell, even when
    /// they arrive in chunks of one byte (found by the `decompression` fuzz target: a wrapped body in 1-byte chunks
    /// was read as raw and failed).
    @Test(arguments: [ZlibAlgorithm.zlib, .deflate], [1, 7])
    func deflateDecodesWrappedAndRaw(algorithm: ZlibAlgorithm, chunkSize: Int) async throws {
        let body = try Self.compress(Self.text, algorithm)
        #expect(try await Self.decode(body, format: .deflate, chunkSize: chunkSize) == Self.text)
    }

    @Test func bytesAfterTheLastMemberAreIgnored() async throws {
        let body = try Self.compress(Self.text, .gzip) + Data(count: 16)
        #expect(try await Self.decode(body, format: .gzip) == Self.text)
    }

    @Test func aTruncatedBodyFails() async throws {
        let body = try Self.compress(Self.text, .gzip)
        await #expect {
            _ = try await Self.decode(body.prefix(body.count - 5), format: .gzip)
        } throws: { error in
            let error = error as? KiteError
            return error?.code == .decompressionFailed
                && error?.message == "the gzip body ended before its data was complete"
        }
    }

    @Test func dataThatIsNotGzipFails() async throws {
        await #expect {
            _ = try await Self.decode(Data("definitely not gzip".utf8), format: .gzip)
        } throws: { error in
            let error = error as? KiteError
            return error?.code == .decompressionFailed && error?.message == "the body is not valid gzip data"
        }
    }

    @Test func theRatioIsCheckedOnlyPastTheFloor() async throws {
        let zeros = Data(count: 2_000_000)
        let body = try Self.compress(zeros, .gzip)
        // Past a 1 MB floor at most 100:1 is allowed: zeros compress about 1000:1.
        await #expect {
            _ = try await Self.decode(body, format: .gzip, chunkSize: 4096, ratioCheckedAfter: 1_000_000)
        } throws: { error in
            (error as? KiteError)?.code == .decompressionFailed
        }
        // Under the floor the same ratio passes.
        #expect(try await Self.decode(body, format: .gzip, chunkSize: 4096, ratioCheckedAfter: 3_000_000) == zeros)
    }
}
