import NIOCore
import NIOPosix

/// Writes a body's chunks to a ``PoolFile`` in batches of about ``batchBytes``, with one batch on the thread
/// pool while the next one fills: a download hops to the pool and back once per batch instead of once per
/// chunk (NIO reads at most 64 KiB at a time), and receiving goes on while the disk writes. At most two batches
/// are in memory.
struct BatchedFileWriter {
    /// Bytes gathered before a batch is written.
    static let batchBytes = 1 << 20

    private let file: PoolFile
    private var pending: [ByteBuffer] = []
    private var pendingBytes = 0
    private var inFlight: (write: EventLoopFuture<Void>, bytes: Int)?
    /// Where the next batch goes.
    private var nextOffset: Int64
    /// Bytes confirmed written from the start of the file.
    private(set) var written: Int64

    init(file: PoolFile, offset: Int64) {
        self.file = file
        self.nextOffset = offset
        self.written = offset
    }

    /// Adds `chunk`; when a batch is full, waits for the write in flight (if any) and starts the next.
    ///
    /// - Returns: Whether ``written`` grew.
    mutating func append(_ chunk: ByteBuffer) async throws(SystemFile.SystemError) -> Bool {
        self.pending.append(chunk)
        self.pendingBytes += chunk.readableBytes
        guard self.pendingBytes >= Self.batchBytes else { return false }
        let grew = try await self.awaitInFlight()
        self.startBatch()
        return grew
    }

    /// Writes everything gathered and waits until it is on disk.
    mutating func finish() async throws(SystemFile.SystemError) {
        _ = try await self.awaitInFlight()
        self.startBatch()
        _ = try await self.awaitInFlight()
    }

    /// Waits for the write in flight without reporting its error: the request is already failing, and the
    /// file must not be closed while a write still uses its descriptor.
    mutating func abandon() async {
        _ = try? await self.awaitInFlight()
        self.pending = []
        self.pendingBytes = 0
    }

    private mutating func startBatch() {
        guard !self.pending.isEmpty else { return }
        self.inFlight = (self.file.startWriting(self.pending, at: self.nextOffset), self.pendingBytes)
        self.nextOffset += Int64(self.pendingBytes)
        self.pending = []
        self.pendingBytes = 0
    }

    private mutating func awaitInFlight() async throws(SystemFile.SystemError) -> Bool {
        guard let (write, bytes) = self.inFlight else { return false }
        self.inFlight = nil
        do {
            try await write.get()
        } catch let error as SystemFile.SystemError {
            throw error
        } catch {
            throw SystemFile.SystemError(code: ECANCELED)
        }
        self.written += Int64(bytes)
        return true
    }
}
