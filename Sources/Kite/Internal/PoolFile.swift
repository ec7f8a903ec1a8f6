import NIOCore
import NIOPosix

/// An open file whose blocking calls (``SystemFile``'s `open`, `pread`, `pwritev`, `close`) run on NIO's
/// blocking-I/O thread pool (`NIOThreadPool.singleton`), never on Swift's cooperative threads.
///
/// Chosen over `NonBlockingFileIO`, whose path-based API is deprecated, and over the underscored
/// `_NIOFileSystem` product, whose API is not yet stable.
final class PoolFile: Sendable {
    let descriptor: CInt
    let path: String

    private init(descriptor: CInt, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    /// Opens `path` for writing, creating it (owner read/write) and optionally truncating it.
    static func openForWriting(_ path: String, truncate: Bool) async throws(SystemFile.SystemError) -> PoolFile {
        let descriptor = try await Self.run { () throws(SystemFile.SystemError) in
            try SystemFile.openForWriting(path, truncate: truncate).get()
        }
        return PoolFile(descriptor: descriptor, path: path)
    }

    /// Starts writing `buffers` one after another from `offset` on the thread pool and returns at once; the
    /// future completes when all are written (it runs to the end even if the caller's task is cancelled).
    func startWriting(_ buffers: [ByteBuffer], at offset: Int64) -> EventLoopFuture<Void> {
        let descriptor = self.descriptor
        return NIOThreadPool.singleton.runIfActive(eventLoop: MultiThreadedEventLoopGroup.singleton.any()) {
            if let error = SystemFile.write(descriptor, buffers, at: offset) { throw error }
        }
    }

    /// Closes the file.
    ///
    /// - Throws: The error `close` reports (written data may be lost).
    func close() async throws(SystemFile.SystemError) {
        let descriptor = self.descriptor
        try await Self.run { () throws(SystemFile.SystemError) in
            if let error = SystemFile.close(descriptor) { throw error }
        }
    }

    /// Runs `body` on the thread pool to the end, even when the calling task is cancelled: a chunk that
    /// arrived is written (so resume data covers it) and a file being closed is closed (no descriptor
    /// leaks). NIO's async `runIfActive` would skip work not yet started once the task is cancelled.
    static func run<T: Sendable>(
        _ body: @escaping @Sendable () throws(SystemFile.SystemError) -> T
    ) async throws(SystemFile.SystemError) -> T {
        do {
            return try await NIOThreadPool.singleton.runIfActive(
                eventLoop: MultiThreadedEventLoopGroup.singleton.any()
            ) { try body() }.get()
        } catch let error as SystemFile.SystemError {
            throw error
        } catch {
            throw SystemFile.SystemError(code: ECANCELED)
        }
    }
}
