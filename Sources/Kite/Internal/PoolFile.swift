import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An open file whose blocking calls (`open`, `pread`, `pwrite`, `close`) run on NIO's
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
    static func openForWriting(_ path: String, truncate: Bool) async throws(PoolFileError) -> PoolFile {
        let flags = O_WRONLY | O_CREAT | O_CLOEXEC | (truncate ? O_TRUNC : 0)
        return try await Self.open(path, flags: flags, mode: S_IRUSR | S_IWUSR)
    }

    /// Opens `path` for reading.
    static func openForReading(_ path: String) async throws(PoolFileError) -> PoolFile {
        try await Self.open(path, flags: O_RDONLY | O_CLOEXEC, mode: 0)
    }

    private static func open(_ path: String, flags: CInt, mode: mode_t) async throws(PoolFileError) -> PoolFile {
        let descriptor = try await Self.run { () throws(PoolFileError) -> CInt in
            let descriptor = systemOpen(path, flags, mode)
            guard descriptor >= 0 else { throw PoolFileError(operation: "open", errno: errno) }
            return descriptor
        }
        return PoolFile(descriptor: descriptor, path: path)
    }

    /// Writes all of `buffer` at `offset`.
    func write(_ buffer: ByteBuffer, at offset: Int64) async throws(PoolFileError) {
        let descriptor = self.descriptor
        try await Self.run { () throws(PoolFileError) in
            var written = 0
            while written < buffer.readableBytes {
                let result = buffer.withUnsafeReadableBytes { bytes in
                    pwrite(
                        descriptor,
                        bytes.baseAddress.map { $0 + written },
                        bytes.count - written,
                        off_t(offset) + off_t(written)
                    )
                }
                if result < 0 {
                    if errno == EINTR { continue }
                    throw PoolFileError(operation: "write", errno: errno)
                }
                written += result
            }
        }
    }

    /// Reads up to `count` bytes at `offset`; fewer only at the end of the file.
    func read(count: Int, at offset: Int64) async throws(PoolFileError) -> ByteBuffer {
        let descriptor = self.descriptor
        return try await Self.run { () throws(PoolFileError) -> ByteBuffer in
            var buffer = ByteBufferAllocator().buffer(capacity: count)
            while buffer.readableBytes < count {
                let already = buffer.readableBytes
                let result = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count - already) { bytes in
                    let read = pread(descriptor, bytes.baseAddress, count - already, off_t(offset) + off_t(already))
                    return max(read, 0)
                }
                if result == 0 { break }
            }
            return buffer
        }
    }

    /// Closes the file; errors are ignored (nothing is left to recover).
    func close() async {
        let descriptor = self.descriptor
        try? await Self.run { () throws(PoolFileError) in _ = systemClose(descriptor) }
    }

    private static func run<T: Sendable>(
        _ body: @escaping @Sendable () throws(PoolFileError) -> T
    ) async throws(PoolFileError) -> T {
        do {
            return try await NIOThreadPool.singleton.runIfActive { try body() }
        } catch let error as PoolFileError {
            throw error
        } catch {
            throw PoolFileError(operation: "schedule", errno: ECANCELED)
        }
    }
}

/// A failed file call: which one and its `errno`.
struct PoolFileError: Error, CustomStringConvertible {
    let operation: String
    let errno: CInt

    var description: String {
        "\(self.operation) failed: \(String(cString: strerror(self.errno)))"
    }
}

private func systemOpen(_ path: String, _ flags: CInt, _ mode: mode_t) -> CInt {
    open(path, flags, mode)
}

private func systemClose(_ descriptor: CInt) -> CInt {
    close(descriptor)
}
