import Foundation
import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The blocking POSIX file calls behind file uploads, multipart file parts and downloads.
///
/// These block the calling thread. The synchronous APIs (``MultipartFormData/encode()``,
/// ``MultipartFormData/writeEncodedData(to:)``, appending) call them directly, as their callers chose
/// a blocking API; body streams and downloads call them on NIO's blocking-I/O thread pool
/// (see ``PoolFile``).
enum SystemFile {
    /// What `stat` says about a path, following symbolic links.
    struct Status {
        var isDirectory: Bool
        var isRegularFile: Bool
        var size: Int64
        /// What kind of file this is, for messages: `a FIFO`, `a socket`, …
        var kindDescription: String
    }

    /// The status of the file at `path`, following symbolic links.
    static func status(ofPath path: String) -> Result<Status, SystemError> {
        // A NUL would end the C string early and name another file (Foundation keeps %00 encoded in
        // URL.path, so this is a second line of defence).
        guard !path.utf8.contains(0) else { return .failure(SystemError(code: EINVAL)) }
        var info = stat()
        let result = path.withCString { stat($0, &info) }
        guard result == 0 else { return .failure(SystemError.current()) }
        let type = info.st_mode & S_IFMT
        let kind: String
        switch type {
        case S_IFREG: kind = "a regular file"
        case S_IFDIR: kind = "a directory"
        case S_IFIFO: kind = "a FIFO"
        case S_IFSOCK: kind = "a socket"
        case S_IFCHR: kind = "a character device"
        case S_IFBLK: kind = "a block device"
        default: kind = "not a regular file"
        }
        return .success(
            Status(
                isDirectory: type == S_IFDIR,
                isRegularFile: type == S_IFREG,
                size: Int64(info.st_size),
                kindDescription: kind
            )
        )
    }

    /// Opens `path` for reading and returns its descriptor.
    static func openForReading(_ path: String) -> Result<CInt, SystemError> {
        // A NUL would end the C string early and name another file.
        guard !path.utf8.contains(0) else { return .failure(SystemError(code: EINVAL)) }
        let descriptor = path.withCString { open($0, O_RDONLY | O_CLOEXEC | O_NONBLOCK) }
        guard descriptor >= 0 else { return .failure(SystemError.current()) }
        return .success(descriptor)
    }

    /// Creates `path` for writing, failing with `EEXIST` when something is already there.
    static func createForWriting(_ path: String) -> Result<CInt, SystemError> {
        // A NUL would end the C string early and name another file.
        guard !path.utf8.contains(0) else { return .failure(SystemError(code: EINVAL)) }
        let descriptor = path.withCString { open($0, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644) }
        guard descriptor >= 0 else { return .failure(SystemError.current()) }
        return .success(descriptor)
    }

    /// Opens (creating it, owner read/write) `path` for writing; `truncate` empties an existing file.
    static func openForWriting(_ path: String, truncate: Bool) -> Result<CInt, SystemError> {
        guard !path.utf8.contains(0) else { return .failure(SystemError(code: EINVAL)) }
        let flags = O_WRONLY | O_CREAT | O_CLOEXEC | (truncate ? O_TRUNC : 0)
        let descriptor = path.withCString { open($0, flags, 0o600) }
        guard descriptor >= 0 else { return .failure(SystemError.current()) }
        return .success(descriptor)
    }

    /// Buffers handed to one `pwritev` call at most: fewer than any system's `IOV_MAX`, and a bound on the
    /// nesting that pins the buffers' bytes while the call runs.
    static let maximumVectors = 64

    /// Writes all of `buffers`, one after another from `offset`, with `pwritev`: one system call for up to
    /// ``maximumVectors`` buffers instead of one per buffer (a download's batch holds a socket read's worth
    /// per buffer, at most 64 KiB). The descriptor's position is neither used nor moved.
    static func write(_ descriptor: CInt, _ buffers: [ByteBuffer], at offset: Int64) -> SystemError? {
        var position = offset
        var start = buffers.startIndex
        while start < buffers.endIndex {
            let group = buffers[start..<min(buffers.endIndex, start + Self.maximumVectors)]
            var vectors: [iovec] = []
            vectors.reserveCapacity(group.count)
            let failure = Self.withVectors(of: group, &vectors) { vectors in
                Self.writeAll(descriptor, &vectors, at: position)
            }
            if let failure { return failure }
            for buffer in group { position += Int64(buffer.readableBytes) }
            start = group.endIndex
        }
        return nil
    }

    /// Calls `body` with one `iovec` per buffer, each buffer's bytes pinned until `body` returns.
    private static func withVectors<R>(
        of buffers: ArraySlice<ByteBuffer>,
        _ vectors: inout [iovec],
        _ body: (inout [iovec]) -> R
    ) -> R {
        guard let first = buffers.first else { return body(&vectors) }
        return first.withUnsafeReadableBytes { bytes in
            vectors.append(iovec(iov_base: UnsafeMutableRawPointer(mutating: bytes.baseAddress), iov_len: bytes.count))
            return Self.withVectors(of: buffers.dropFirst(), &vectors, body)
        }
    }

    /// Writes everything `vectors` point at from `offset`, calling `pwritev` again after a short write.
    private static func writeAll(_ descriptor: CInt, _ vectors: inout [iovec], at offset: Int64) -> SystemError? {
        var position = offset
        var index = 0
        while true {
            // Skip what is written, and empty buffers.
            while index < vectors.count, vectors[index].iov_len == 0 { index += 1 }
            guard index < vectors.count else { return nil }
            let first = index
            let count = vectors.withUnsafeBufferPointer { all in
                pwritev(descriptor, all.baseAddress! + first, CInt(all.count - first), off_t(position))
            }
            if count < 0 {
                let error = SystemError.current()
                if error.code == EINTR { continue }
                return error
            }
            // A regular file takes at least one byte or fails; 0 would loop forever.
            if count == 0 { return SystemError(code: EIO) }
            position += Int64(count)
            var rest = count
            while rest > 0 {
                let taken = min(rest, vectors[index].iov_len)
                vectors[index].iov_base = vectors[index].iov_base.map { $0 + taken }
                vectors[index].iov_len -= taken
                rest -= taken
                if vectors[index].iov_len == 0 { index += 1 }
            }
        }
    }

    /// The current size of the open file `descriptor`.
    static func size(ofDescriptor descriptor: CInt) -> Result<Int64, SystemError> {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return .failure(SystemError.current()) }
        return .success(Int64(info.st_size))
    }

    /// Reads into `buffer` from `offset` until the buffer is full or the file ends; returns the count read.
    ///
    /// Uses `pread`, so the descriptor's position is neither used nor moved.
    static func read(
        _ descriptor: CInt,
        into buffer: UnsafeMutableRawBufferPointer,
        at offset: Int64
    ) -> Result<Int, SystemError> {
        guard let base = buffer.baseAddress else { return .success(0) }
        var total = 0
        while total < buffer.count {
            let count = pread(descriptor, base + total, buffer.count - total, off_t(offset + Int64(total)))
            if count < 0 {
                let error = SystemError.current()
                if error.code == EINTR { continue }
                return .failure(error)
            }
            if count == 0 { break }
            total += count
        }
        return .success(total)
    }

    /// Writes all of `bytes` to `descriptor`.
    static func write(_ descriptor: CInt, _ bytes: UnsafeRawBufferPointer) -> SystemError? {
        guard let base = bytes.baseAddress else { return nil }
        var total = 0
        while total < bytes.count {
            #if canImport(Darwin)
            let count = Darwin.write(descriptor, base + total, bytes.count - total)
            #elseif canImport(Glibc)
            let count = Glibc.write(descriptor, base + total, bytes.count - total)
            #else
            let count = Musl.write(descriptor, base + total, bytes.count - total)
            #endif
            if count < 0 {
                let error = SystemError.current()
                if error.code == EINTR { continue }
                return error
            }
            total += count
        }
        return nil
    }

    /// Closes `descriptor`; returns the error a failed close reports (data may not have been written).
    @discardableResult
    static func close(_ descriptor: CInt) -> SystemError? {
        #if canImport(Darwin)
        let result = Darwin.close(descriptor)
        #elseif canImport(Glibc)
        let result = Glibc.close(descriptor)
        #else
        let result = Musl.close(descriptor)
        #endif
        return result == 0 ? nil : SystemError.current()
    }

    /// Renames `source` to `destination`, replacing a file there atomically (`rename(2)`).
    static func rename(_ source: String, to destination: String) -> SystemError? {
        guard !source.utf8.contains(0), !destination.utf8.contains(0) else { return SystemError(code: EINVAL) }
        let result = source.withCString { from in destination.withCString { to in Foundation.rename(from, to) } }
        return result == 0 ? nil : SystemError.current()
    }

    /// Removes the file at `path`, ignoring failures (for cleaning up a partly written file).
    static func remove(_ path: String) {
        _ = path.withCString { unlink($0) }
    }

    /// An `errno` value from a failed system call.
    struct SystemError: Error, Sendable, CustomStringConvertible {
        let code: CInt

        static func current() -> SystemError {
            SystemError(code: errno)
        }

        /// The system's text for the code, such as `No such file or directory`.
        var description: String {
            String(cString: strerror(self.code))
        }

        /// Whether the call failed because something already exists at the path (`EEXIST`).
        var isAlreadyExists: Bool {
            self.code == EEXIST
        }

        /// The code as Foundation's `POSIXError`, for underlying errors users see.
        var posixError: any Error {
            guard let code = POSIXErrorCode(rawValue: self.code) else { return self }
            return POSIXError(code)
        }
    }
}
