import CompressNIO
import Foundation
import NIOConcurrencyHelpers
import NIOCore

@testable import KiteUnderFuzz

extension FuzzTarget {
    /// gzip and deflate bodies. The first byte chooses the format and the chunk size; the rest is the body.
    /// Decoded as it stands, it gives bytes or a `decompressionFailed` error, and never more than the ratio
    /// allows; compressed with zlib first, it decodes to itself.
    static func fuzzDecompression(_ input: [UInt8]) {
        guard let first = input.first else { return }
        let body = Data(input.dropFirst())
        let format: BodyDecoder.Format = first & 1 == 0 ? .gzip : .deflate
        let chunkSize = 1 + Int(first >> 1) % 64
        let ratioCheckedAfter: Int64 = 64 << 10
        let decoded = Self.decode(body, format: format, chunkSize: chunkSize, ratioCheckedAfter: ratioCheckedAfter)
        switch decoded {
        case .success(let bytes):
            let bound = Int(ratioCheckedAfter) + 100 * body.count + BodyDecoder.outputChunkSize
            require(bytes.count <= bound, "\(body.count) bytes decoded to \(bytes.count), over \(bound)")
        case .failure(let error):
            require(error.code == .decompressionFailed, "decoding failed with \(error.code): \(error.message)")
        }
        let compressed = Self.compress(body, format == .gzip ? .gzip : .zlib)
        let roundTrip = Self.decode(compressed, format: format, chunkSize: chunkSize, ratioCheckedAfter: 10 << 20)
        require(roundTrip == .success(body), "\(body.count) bytes compressed and decoded gave \(roundTrip)")
    }

    private static func compress(_ data: Data, _ algorithm: ZlibAlgorithm) -> Data {
        do {
            let compressor = try ZlibCompressor(algorithm: algorithm)
            var input = ByteBuffer(bytes: data)
            var output = ByteBufferAllocator().buffer(capacity: compressor.maxSize(from: input))
            try compressor.deflate(from: &input, to: &output, flush: .finish)
            return Data(output.readableBytesView)
        } catch {
            fatalError("zlib could not compress \(data.count) bytes: \(error)")
        }
    }

    /// `body` in chunks of `chunkSize` bytes through the decoder, run to its end on a task while this thread
    /// (libFuzzer's, never one of the concurrency pool's) waits.
    private static func decode(
        _ body: Data,
        format: BodyDecoder.Format,
        chunkSize: Int,
        ratioCheckedAfter: Int64
    ) -> Result<Data, KiteError> {
        let chunks = stride(from: 0, to: body.count, by: chunkSize).map {
            ByteBuffer(bytes: body[$0..<min($0 + chunkSize, body.count)])
        }
        let result = NIOLockedValueBox<Result<Data, KiteError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            let decoded = BodyDecoder.decoding(
                ByteChunks(chunks: chunks),
                format: format,
                maximumRatio: 100,
                ratioCheckedAfter: ratioCheckedAfter
            )
            var output = Data()
            let outcome: Result<Data, KiteError>
            do {
                for try await chunk in decoded { output.append(contentsOf: chunk.readableBytesView) }
                outcome = .success(output)
            } catch let error as KiteError {
                outcome = .failure(error)
            } catch {
                outcome = .failure(KiteError(code: .invalidResponse, message: "not a KiteError: \(error)"))
            }
            result.withLockedValue { $0 = outcome }
            done.signal()
        }
        done.wait()
        return result.withLockedValue { $0! }
    }
}
