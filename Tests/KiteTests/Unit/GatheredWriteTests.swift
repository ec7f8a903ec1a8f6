import Foundation
import NIOCore
import Testing

@testable import Kite

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// `SystemFile.write(_:_:at:)`, which writes a download's batch of buffers with `pwritev`, in groups of
/// `SystemFile.maximumVectors`.
@Suite struct GatheredWriteTests {
    /// A new empty file, its descriptor open for reading and writing; the caller closes and removes it.
    private func scratchFile() throws -> (descriptor: CInt, url: URL) {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("kite-gathered-\(UUID().uuidString)")
        let descriptor = try #require(try? SystemFile.openForWriting(url.path, truncate: true).get())
        return (descriptor, url)
    }

    /// Buffers of the given sizes, each filled with bytes that tell its index and position apart.
    private func buffers(sizes: [Int]) -> [ByteBuffer] {
        sizes.enumerated().map { index, size in
            var buffer = ByteBufferAllocator().buffer(capacity: size + 3)
            buffer.writeBytes([0xEE, 0xEE, 0xEE])  // read past, so each buffer starts at a non-zero reader index
            buffer.moveReaderIndex(forwardBy: 3)
            buffer.writeBytes((0..<size).map { UInt8(truncatingIfNeeded: index &* 31 &+ $0) })
            return buffer
        }
    }

    @Test(arguments: [
        [Int](),
        [1],
        [65_536, 65_536, 12],
        // More buffers than one call takes, with empty ones at the start, the end and across a group boundary.
        [0] + (1...200).map { ($0 * 7_919) % 70_000 } + [0, 0],
        (0..<130).map { $0 % 64 == 63 ? 0 : 5 },
    ])
    func writesEveryBufferInOrderAtTheOffset(sizes: [Int]) throws {
        let (descriptor, url) = try self.scratchFile()
        defer {
            SystemFile.close(descriptor)
            try? FileManager.default.removeItem(at: url)
        }
        let offset: Int64 = 4_096
        let buffers = self.buffers(sizes: sizes)
        #expect(SystemFile.write(descriptor, buffers, at: offset) == nil)

        var expected = Data(repeating: 0, count: sizes.isEmpty ? 0 : Int(offset))
        for buffer in buffers { expected.append(contentsOf: buffer.readableBytesView) }
        let written = try Data(contentsOf: url)
        #expect(written.count == expected.count)
        #expect(written == expected)
        #expect(lseek(descriptor, 0, SEEK_CUR) == 0, "the descriptor's position is not moved")
    }

    @Test func aDescriptorThatCannotBeWrittenGivesItsError() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("kite-gathered-\(UUID().uuidString)")
        #expect(FileManager.default.createFile(atPath: url.path, contents: Data("x".utf8)))
        defer { try? FileManager.default.removeItem(at: url) }
        let readOnly = try #require(try? SystemFile.openForReading(url.path).get())
        defer { SystemFile.close(readOnly) }
        let error = SystemFile.write(readOnly, self.buffers(sizes: [10, 20]), at: 0)
        #expect(error?.code == EBADF)
        #expect(try Data(contentsOf: url) == Data("x".utf8), "nothing was written")
    }
}
