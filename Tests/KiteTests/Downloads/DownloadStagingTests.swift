import Foundation
import Testing

@testable import Kite

/// `/dev/shm`, a tmpfs: on Linux another file system than the temporary directory, which is on a disk.
enum SharedMemory {
    static let folder = URL(fileURLWithPath: "/dev/shm", isDirectory: true)

    /// Whether `/dev/shm` exists and is another file system than the temporary directory.
    static var isAnotherFileSystem: Bool {
        guard let shared = SharedMemory.fileSystem(of: Self.folder),
            let temporary = SharedMemory.fileSystem(of: FileManager.default.temporaryDirectory)
        else { return false }
        return shared != temporary
    }

    /// The device number of the file system `url` is on (`st_dev`).
    static func fileSystem(of url: URL) -> UInt64? {
        let attributes = try? FileManager.default.attributesOfItem(atPath: url.path)
        return (attributes?[.systemNumber] as? NSNumber)?.uint64Value
    }

    /// A fresh folder under `/dev/shm`, removed by the caller.
    static func makeFolder() throws -> URL {
        let folder = Self.folder.appendingPathComponent("kite-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }
}

/// A download with a destination on another file system than the temporary directory (`/dev/shm`, a tmpfs, where
/// the temporary directory is on a disk) is staged beside its destination, so moving it into place is a rename.
@Suite(.enabled(if: SharedMemory.isAnotherFileSystem, "needs /dev/shm on another file system than /tmp"))
struct DownloadStagingTests {

    /// The names in `folder`, hidden ones included, sorted.
    static func contents(of folder: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
    }

    /// Whether `name` is a staging file's name for a destination named `destinationName`:
    /// `.<name>.<UUID>.kite-partial`.
    static func isStagingName(_ name: String, for destinationName: String) -> Bool {
        let prefix = ".\(destinationName)."
        let suffix = ".kite-partial"
        guard name.hasPrefix(prefix), name.hasSuffix(suffix) else { return false }
        return UUID(uuidString: String(name.dropFirst(prefix.count).dropLast(suffix.count))) != nil
    }

    /// Starts `request` and suspends it once its first bytes have arrived (the partial file is open by then).
    static func suspendedAfterItsFirstBytes<Value: Sendable>(
        _ request: DownloadRequest,
        _ serializing: (DownloadRequest) -> DownloadTask<Value>
    ) async -> DownloadTask<Value> {
        let progress = request.downloadProgress()
        let task = serializing(request)
        for await value in progress where value.completedBytes > 0 { break }
        request.suspend()
        return task
    }

    @Test func aDownloadIsWrittenBesideItsDestinationAndRenamedIntoPlace() async throws {
        let folder = try SharedMemory.makeFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let target = folder.appendingPathComponent("staged.bin")
        let size = 262_144
        let url = try await Backend.inProcess.url("/range/\(size)?duration=2&chunk_size=4096")
        let request = Session.suite.download(url, to: DownloadTests.destination(target))
        let task = await Self.suspendedAfterItsFirstBytes(request) { $0.validate().serializingDownloadedFileURL() }

        // While the download is under way: one hidden partial file in the destination's folder, on its file system.
        let partial = try #require(request.machine.withLockedValue { $0.record.download.partialURL })
        #expect(partial.deletingLastPathComponent().standardizedFileURL.path == folder.standardizedFileURL.path)
        #expect(!partial.path.hasPrefix(DownloadFiles.directory.path), "not in the temporary directory")
        let during = try Self.contents(of: folder)
        #expect(during == [partial.lastPathComponent], "only the partial file: \(during)")
        #expect(Self.isStagingName(partial.lastPathComponent, for: "staged.bin"), "\(partial.lastPathComponent)")
        #expect(SharedMemory.fileSystem(of: partial) == SharedMemory.fileSystem(of: folder))
        let temporaryDirectory = FileManager.default.temporaryDirectory
        #expect(SharedMemory.fileSystem(of: partial) != SharedMemory.fileSystem(of: temporaryDirectory))

        request.resume()
        let response = await task.response
        #expect(response.error == nil, "\(String(describing: response.error))")
        #expect(response.value == target)
        #expect(try Data(contentsOf: target) == DownloadTests.rangeBody(size))
        #expect(try Self.contents(of: folder) == ["staged.bin"], "no staging file is left")
    }

    @Test func anInvalidDownloadRemovesItsStagingFileAndLeavesTheDestinationUntouched() async throws {
        let folder = try SharedMemory.makeFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let target = folder.appendingPathComponent("existing.bin")
        try Data("old".utf8).write(to: target)
        let url = try await Backend.inProcess.url("/drip?code=404&numbytes=2000&duration=2")
        let request = Session.suite.download(url, to: DownloadTests.destination(target, [.removePreviousFile]))
        let task = await Self.suspendedAfterItsFirstBytes(request) { $0.validate().serializingDownloadedFileURL() }

        // The 404's body goes to the staging file beside the destination, not over the destination.
        let partial = try #require(request.machine.withLockedValue { $0.record.download.partialURL })
        #expect(try Self.contents(of: folder) == [partial.lastPathComponent, "existing.bin"].sorted())
        #expect(Self.isStagingName(partial.lastPathComponent, for: "existing.bin"), "\(partial.lastPathComponent)")

        request.resume()
        let response = await task.response
        #expect(response.error?.code == .responseValidationFailed, "\(String(describing: response.error))")
        #expect(response.response?.status.code == 404)
        #expect(response.fileURL == nil)
        #expect(response.resumeData == nil)
        #expect(try Self.contents(of: folder) == ["existing.bin"], "the staging file is removed")
        #expect(try Data(contentsOf: target) == Data("old".utf8), "the destination is untouched")
    }

    @Test func aCancelledDownloadResumesItsStagingFileInPlace() async throws {
        let folder = try SharedMemory.makeFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let target = folder.appendingPathComponent("resumed.bin")
        let size = 262_144
        let url = try await Backend.inProcess.url("/range/\(size)?duration=2&chunk_size=4096")
        let request = Session.suite.download(url, to: DownloadTests.destination(target))
        let progress = request.downloadProgress()
        let task = request.serializingDownloadedFileURL()
        for await value in progress where value.completedBytes > 10_000 {
            request.cancel(producingResumeData: true)
            break
        }
        let cancelled = await task.response
        #expect(cancelled.error?.code == .cancelled)
        let resumeData = try #require(cancelled.resumeData)
        let token = try ResumeData.decode(resumeData)
        let partial = try #require(token.partialFileURL)
        // The bytes so far stay in the staging file beside the destination, which is not there yet.
        let kept = try Self.contents(of: folder)
        #expect(kept == [partial.lastPathComponent], "\(kept)")
        #expect(Self.isStagingName(partial.lastPathComponent, for: "resumed.bin"), "\(partial.lastPathComponent)")
        #expect(token.bytes > 0)
        #expect(DownloadFiles.size(of: partial) == token.bytes)

        let resumedRequest = Session.suite.download(resumingWith: resumeData, to: DownloadTests.destination(target))
        let resumed = await resumedRequest.validate().serializingDownloadedFileURL().response
        #expect(resumed.error == nil, "\(String(describing: resumed.error))")
        #expect(resumed.response?.status.code == 206)
        #expect(
            resumedRequest.machine.withLockedValue { $0.record.download.partialURL } == partial,
            "continued in place"
        )
        #expect(resumed.metrics?.bytesReceived == Int64(size) - token.bytes, "only the rest was downloaded")
        #expect(try Data(contentsOf: target) == DownloadTests.rangeBody(size))
        #expect(try Self.contents(of: folder) == ["resumed.bin"], "no staging file is left")
    }
}

/// The staging file's name, without a file system.
@Suite struct StagingNameTests {
    @Test(arguments: [
        ("report.pdf", ".report.pdf."),
        (String(repeating: "a", count: 255), "." + String(repeating: "a", count: 160) + "."),
        (String(repeating: "€", count: 85), "." + String(repeating: "€", count: 53) + "."),
    ])
    func aStagingNameStaysWithinTheFileSystemsLimit(name: String, prefix: String) throws {
        let destination = URL(fileURLWithPath: "/data/downloads").appendingPathComponent(name)
        let staging = DownloadFiles.stagingURL(beside: destination)
        #expect(staging.deletingLastPathComponent().path == "/data/downloads")
        let stagingName = staging.lastPathComponent
        #expect(stagingName.hasPrefix(prefix), "\(stagingName)")
        #expect(stagingName.hasSuffix(".kite-partial"))
        #expect(stagingName.utf8.count <= 255, "\(stagingName.utf8.count) bytes")
        let uuid = stagingName.dropFirst(prefix.count).dropLast(".kite-partial".count)
        #expect(UUID(uuidString: String(uuid)) != nil, "\(stagingName)")
    }
}
