import Foundation
import Testing

@testable import Kite

/// `DownloadFiles.contents(of:)` reads what `Data(contentsOf:)` reads, without its leak on empty files.
@Suite struct FileContentsTests {
    @Test(arguments: [0, 1, 4096, 70_000])
    func aFileReadsAsItsBytes(size: Int) throws {
        let folder = try DownloadTests.makeFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("f.bin")
        let bytes = Data((0..<size).map { UInt8($0 % 251) })
        try bytes.write(to: file)
        #expect(try DownloadFiles.contents(of: file) == bytes)
    }

    @Test func aKernelFileThatReportsNoSizeIsReadToItsEnd() throws {
        let file = URL(fileURLWithPath: "/proc/self/status")
        #expect(DownloadFiles.size(of: file) == 0, "the kernel reports no size")
        let text = String(decoding: try DownloadFiles.contents(of: file), as: UTF8.self)
        #expect(text.hasPrefix("Name:"))
        #expect(text.contains("\nVmRSS:"))
    }

    @Test func aMissingFileThrows() {
        #expect(throws: (any Error).self) {
            try DownloadFiles.contents(of: URL(fileURLWithPath: "/nonexistent/kite-\(UUID().uuidString)"))
        }
    }

    /// An empty download serializes to empty data (read without the leak).
    @Test func anEmptyDownloadSerializesToNoBytes() async throws {
        let response = await Session.suite.download(try await Backend.inProcess.url("/bytes/0"))
            .serializingDownload(using: DataResponseSerializer(emptyResponseCodes: [200]))
            .response
        #expect(response.value == Data())
        if let file = response.fileURL { try? FileManager.default.removeItem(at: file) }
    }
}
