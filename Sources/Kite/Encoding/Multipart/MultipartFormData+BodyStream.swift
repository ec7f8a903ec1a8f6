import Foundation
import NIOCore
import NIOPosix

extension MultipartFormData {
    /// The encoded body as chunks, read from the parts' sources as the engine pulls them: files are opened
    /// and read in chunks (64 KiB default) lazily, nothing is loaded whole. Calling it again produces a
    /// fresh stream (re-reads files), except that stream parts are one-shot.
    ///
    /// Every chunk but the last holds exactly `chunkSize` bytes, and the chunks add up to
    /// ``contentLength``: a file whose size changed since it was appended, or a stream part that produces
    /// fewer or more bytes than declared, makes the stream throw a `multipartEncodingFailed` error naming
    /// the file or part instead.
    ///
    /// - Throws: ``appendError``, or a `streamAlreadyConsumed` error when a stream part was already sent.
    func makeBodyChunks(chunkSize: Int = 64 * 1024) throws(KiteError) -> ByteChunks {
        if let appendError {
            throw appendError
        }
        for part in self.parts {
            if case .stream(let stream) = part.body, stream.claim.isTaken {
                throw MultipartBodyReader.alreadyConsumed(part.label)
            }
        }
        let segments = self.segments()
        let chunkSize = max(1, chunkSize)
        return ByteChunks(makeNext: {
            let reader = MultipartBodyReader(segments: segments, chunkSize: chunkSize)
            return { try await reader.next() }
        })
    }

    /// Whether makeBodyChunks can be called again for a retry/redirect (false once any part is a caller stream).
    var isReplayable: Bool {
        !self.parts.contains(where: \.isStream)
    }
}

/// Produces one pass over a form's encoded body, chunk by chunk.
///
/// File bytes are read with `pread` on NIO's shared blocking-I/O thread pool (`NIOThreadPool.singleton`,
/// the pool `NonBlockingFileIO` uses), at most one chunk per read; a read that starts a chunk becomes the
/// chunk, and only a read that completes a chunk begun by other bytes is copied into it: memory stays at
/// about two chunks however large the file, and disk reads never block a thread of Swift's
/// cooperative pool. `NIOFileSystem` would do the same but is not a dependency of Kite, and
/// `NonBlockingFileIO`'s path-based API is deprecated; `FileHandle` reads inside the task would block the
/// cooperative pool.
///
/// Not `Sendable`: one iterator owns it and pulls chunks one after another.
final class MultipartBodyReader {
    private let segments: [MultipartFormData.Segment]
    private let chunkSize: Int
    private var index = 0
    private var progress = Progress.notStarted

    /// How far the reader is into `segments[index]`.
    private enum Progress {
        case notStarted
        case bytes(offset: Int)
        case file(descriptor: CInt, offset: Int64)
        case stream(next: () async throws -> ByteBuffer?, produced: Int64, pending: ByteBuffer)
    }

    init(segments: [MultipartFormData.Segment], chunkSize: Int) {
        self.segments = segments
        self.chunkSize = chunkSize
    }

    deinit {
        self.closeFile()
    }

    /// The next chunk: `chunkSize` bytes, fewer for the last one, `nil` at the end.
    ///
    /// After an error the file in progress is closed and the reader ends.
    func next() async throws(KiteError) -> ByteBuffer? {
        // Allocated by the first segment that writes to it (a file read hands over its own buffer).
        var chunk = ByteBuffer()
        do throws(KiteError) {
            while chunk.readableBytes < self.chunkSize, self.index < self.segments.count {
                try await self.fill(&chunk)
            }
        } catch {
            self.closeFile()
            self.index = self.segments.count
            throw error
        }
        return chunk.readableBytes == 0 ? nil : chunk
    }

    /// Moves some bytes of the current segment into `chunk`, or moves on to the next segment.
    private func fill(_ chunk: inout ByteBuffer) async throws(KiteError) {
        let room = self.chunkSize - chunk.readableBytes
        switch self.segments[self.index] {
        case .bytes(let bytes):
            var offset = 0
            if case .bytes(let current) = self.progress {
                offset = current
            }
            let end = min(bytes.count, offset + room)
            chunk.reserveCapacity(self.chunkSize)
            chunk.writeBytes(bytes[(bytes.startIndex + offset)..<(bytes.startIndex + end)])
            if end == bytes.count {
                self.finishSegment()
            } else {
                self.progress = .bytes(offset: end)
            }
        case .file(let file, let label):
            try await self.fillFromFile(&chunk, room: room, file: file, label: label)
        case .stream(let stream, let label):
            try await self.fillFromStream(&chunk, room: room, stream: stream, label: label)
        }
    }

    private func fillFromFile(
        _ chunk: inout ByteBuffer,
        room: Int,
        file: MultipartFormData.FileSource,
        label: String
    ) async throws(KiteError) {
        let descriptor: CInt
        var offset: Int64
        if case .file(let current, let currentOffset) = self.progress {
            descriptor = current
            offset = currentOffset
        } else {
            descriptor = try await Self.onThreadPool(file, label) { () throws(KiteError) in
                try MultipartFormData.openFile(file, label: label)
            }
            offset = 0
            self.progress = .file(descriptor: descriptor, offset: 0)
        }
        if offset < file.size {
            let count = Int(min(Int64(room), file.size - offset))
            let readOffset = offset
            let bytes = try await Self.onThreadPool(file, label) { () throws(KiteError) -> ByteBuffer in
                var buffer = ByteBufferAllocator().buffer(capacity: count)
                var result: Result<Int, SystemFile.SystemError> = .success(0)
                buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { pointer in
                    let target = UnsafeMutableRawBufferPointer(rebasing: pointer[0..<count])
                    result = SystemFile.read(descriptor, into: target, at: readOffset)
                    return (try? result.get()) ?? 0
                }
                try MultipartFormData.checkRead(result, of: file, label: label, offset: readOffset, expected: count)
                return buffer
            }
            if chunk.readableBytes == 0 {
                chunk = bytes
            } else {
                chunk.reserveCapacity(self.chunkSize)
                chunk.writeImmutableBuffer(bytes)
            }
            offset += Int64(count)
            self.progress = .file(descriptor: descriptor, offset: offset)
        }
        if offset == file.size {
            try await Self.onThreadPool(file, label) { () throws(KiteError) in
                try MultipartFormData.checkFileEnds(descriptor, file: file, label: label)
            }
            self.closeFile()
            self.finishSegment()
        }
    }

    private func fillFromStream(
        _ chunk: inout ByteBuffer,
        room: Int,
        stream: MultipartFormData.StreamSource,
        label: String
    ) async throws(KiteError) {
        let next: () async throws -> ByteBuffer?
        var produced: Int64
        var pending: ByteBuffer
        if case .stream(let currentNext, let currentProduced, let currentPending) = self.progress {
            next = currentNext
            produced = currentProduced
            pending = currentPending
        } else {
            guard stream.claim.take() else {
                throw Self.alreadyConsumed(label)
            }
            next = stream.makeNext()
            produced = 0
            pending = ByteBuffer()
        }
        if pending.readableBytes > 0 {
            if let slice = pending.readSlice(length: min(room, pending.readableBytes)) {
                chunk.reserveCapacity(self.chunkSize)
                chunk.writeImmutableBuffer(slice)
            }
            self.progress = .stream(next: next, produced: produced, pending: pending)
            return
        }
        if produced == stream.length {
            // Everything declared has arrived; the sequence must end now.
            while let extra = try await Self.pull(next, label: label) {
                if extra.readableBytes > 0 {
                    throw Self.lengthMismatch(label, declared: stream.length, "more")
                }
            }
            self.finishSegment()
            return
        }
        guard let element = try await Self.pull(next, label: label) else {
            throw Self.lengthMismatch(label, declared: stream.length, "only \(produced)")
        }
        produced += Int64(element.readableBytes)
        if produced > stream.length {
            throw Self.lengthMismatch(label, declared: stream.length, "more")
        }
        self.progress = .stream(next: next, produced: produced, pending: element)
    }

    private func finishSegment() {
        self.index += 1
        self.progress = .notStarted
    }

    private func closeFile() {
        if case .file(let descriptor, _) = self.progress {
            SystemFile.close(descriptor)
            self.progress = .notStarted
        }
    }

    /// Runs blocking file work on NIO's blocking-I/O thread pool.
    private static func onThreadPool<Value: Sendable>(
        _ file: MultipartFormData.FileSource,
        _ label: String,
        _ work: @escaping @Sendable () throws(KiteError) -> Value
    ) async throws(KiteError) -> Value {
        do {
            return try await NIOThreadPool.singleton.runIfActive { try work() }
        } catch let error as KiteError {
            throw error
        } catch {
            throw MultipartFormData.readFailure(file, label: label, error, doing: "read")
        }
    }

    /// The next element of a caller's stream, with its errors wrapped.
    private static func pull(
        _ next: () async throws -> ByteBuffer?,
        label: String
    ) async throws(KiteError) -> ByteBuffer? {
        do {
            return try await next()
        } catch {
            throw MultipartFormData.Failure.error(
                .streamFailed,
                "stream part \(label) failed: \(error)",
                underlyingError: error
            )
        }
    }

    private static func lengthMismatch(_ label: String, declared: Int64, _ produced: String) -> KiteError {
        MultipartFormData.Failure.error(
            .streamLengthMismatch,
            "stream part \(label) produced \(produced) bytes, but its declared length is \(declared)"
        )
    }

    static func alreadyConsumed(_ label: String) -> KiteError {
        MultipartFormData.Failure.error(
            .streamAlreadyConsumed,
            "stream part \(label) was already sent once; a stream can be read only once, so append a new"
                + " stream to send the form again"
        )
    }
}
