import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// The cache's disk tier: one directory, bounded in bytes, least recently used evicted first.
///
/// Each entry is two files named by its id: `ID.body`, then `ID.head` (JSON). Both are written under a
/// `.partial` name and renamed into place, the head last, so a process killed mid-write leaves the old entry
/// or none, never a torn one; a head rewritten after a `304` gets a partial name of its own
/// (`ID.head.TOKEN.partial`), so two writers of one head never write into one file. The directory is read
/// once, when the store is first used: a head that does not parse, names another format, or whose body is
/// missing or has another size is a damaged entry, removed then (or when it is first read). Two stores (in two
/// sessions or two processes) may share a directory: each sees the entries that were there when it started and
/// those it stores itself; an entry the other one removed is a miss. A body is opened when it is served, so an
/// entry evicted while its body streams is still read whole.
///
/// File calls run on NIO's blocking-I/O thread pool, never on Swift's cooperative threads.
final class DiskCacheStore: CacheStore {
    let directory: URL
    let capacity: Int64
    let maximumEntrySize: Int64

    /// What a `.head` file holds.
    struct Head: Codable {
        static let currentFormat = "kite-cache-1"
        var format: String
        var id: UUID
        var key: String
        var status: Int
        var reason: String
        /// Name and value of each field, in order.
        var fields: [[String]]
        var method: String
        var varying: [String: String?]
        var requestTime: Double
        var responseTime: Double
        var bodyLength: Int64

        init(_ response: CachedResponse, bodyLength: Int64) {
            self.format = Self.currentFormat
            self.id = response.id
            self.key = response.key
            self.status = response.response.status.code
            self.reason = response.response.status.reasonPhrase
            self.fields = response.response.headerFields.map { [$0.name.rawName, $0.value] }
            self.method = response.requestMethod.rawValue
            self.varying = response.varyingRequestFields
            self.requestTime = response.requestTime.timeIntervalSince1970
            self.responseTime = response.responseTime.timeIntervalSince1970
            self.bodyLength = bodyLength
        }

        /// The response, or `nil` when the head is damaged or foreign.
        var response: CachedResponse? {
            guard self.format == Self.currentFormat, (100...999).contains(self.status), self.bodyLength >= 0,
                let method = HTTPRequest.Method(self.method), self.requestTime.isFinite, self.responseTime.isFinite
            else { return nil }
            var headerFields = HTTPFields()
            for pair in self.fields {
                guard pair.count == 2, let name = HTTPField.Name(pair[0]), HTTPField.isValidValue(pair[1]) else {
                    return nil
                }
                headerFields.append(HTTPField(name: name, value: pair[1]))
            }
            return CachedResponse(
                id: self.id,
                key: self.key,
                response: HTTPResponse(
                    status: HTTPResponse.Status(code: self.status, reasonPhrase: self.reason),
                    headerFields: headerFields
                ),
                requestMethod: method,
                varyingRequestFields: self.varying,
                requestTime: Date(timeIntervalSince1970: self.requestTime),
                responseTime: Date(timeIntervalSince1970: self.responseTime),
                bodyLength: self.bodyLength
            )
        }
    }

    private let state: NIOLockedValueBox<CacheIndex<Void>>
    /// Reads the directory once; every call waits for it first.
    private let loading: Task<Void, Never>

    /// Partial files older than this are left over from a process that died, and removed when the store loads.
    static let abandonedAge: TimeInterval = 3600

    init(directory: URL, capacity: Int64, maximumEntrySize: Int64) {
        self.directory = directory.standardizedFileURL
        self.capacity = max(capacity, 0)
        self.maximumEntrySize = max(min(maximumEntrySize, self.capacity), 0)
        let state = NIOLockedValueBox(CacheIndex<Void>(capacity: self.capacity))
        self.state = state
        let directory = self.directory
        self.loading = Task {
            let found = (try? await PoolFile.run { Self.scan(directory) }) ?? []
            let evicted = state.withLockedValue { state in
                var evicted: [CachedResponse] = []
                for (response, cost, _) in found.sorted(by: { $0.2 < $1.2 }) {
                    evicted += state.insert(response, payload: (), cost: cost).map(\.response)
                }
                return evicted
            }
            if !evicted.isEmpty {
                _ = try? await PoolFile.run {
                    for response in evicted { Self.removeFiles(of: response.id, in: directory) }
                }
            }
        }
    }

    /// The bytes the entries take now.
    var usedBytes: Int64 {
        get async {
            await self.loading.value
            return self.state.withLockedValue { $0.used }
        }
    }

    func path(of id: UUID, _ suffix: String) -> String {
        self.directory.appendingPathComponent("\(id.uuidString).\(suffix)").path
    }

    func responses(forKey key: String) async -> [CachedResponse] {
        await self.loading.value
        return self.state.withLockedValue { $0.responses(forKey: key) }
    }

    /// Marks the entry as just used (a hit the memory tier answered); returns whether this store has it.
    func markUsed(_ response: CachedResponse) async -> Bool {
        await self.loading.value
        return self.state.withLockedValue { $0.use(response.id) } != nil
    }

    func body(of response: CachedResponse) async -> ByteChunks? {
        await self.loading.value
        guard let known = self.state.withLockedValue({ $0.use(response.id)?.response }),
            let length = known.bodyLength
        else { return nil }
        let path = self.path(of: response.id, "body")
        // Opened now, not when the body is first read: an entry evicted (its files unlinked) while its body
        // streams to the caller is still read whole.
        let opened = try? await PoolFile.run { () throws(SystemFile.SystemError) -> OpenBody? in
            let descriptor = try SystemFile.openForReading(path).get()
            guard case .success(length) = SystemFile.size(ofDescriptor: descriptor) else {
                SystemFile.close(descriptor)
                return nil
            }
            return OpenBody(descriptor: descriptor, path: path, length: length)
        }
        guard let body = opened ?? nil else {
            // Removed by another process, or damaged: a miss, and gone.
            await self.remove(known)
            return nil
        }
        return body.chunks(size: 64 * 1024)
    }

    func makeWriter(for response: CachedResponse) async -> (any CacheStoreWriter)? {
        await self.loading.value
        guard self.maximumEntrySize > 0 else { return nil }
        return Writer(store: self, response: response)
    }

    func update(_ response: CachedResponse) async {
        await self.loading.value
        guard let length = self.state.withLockedValue({ $0.entries[response.id]?.response.bodyLength }) else { return }
        var updated = response
        updated.bodyLength = length
        guard let headBytes = try? await self.writeHead(updated, bodyLength: length) else { return }
        let (stored, evicted) = self.state.withLockedValue { state in
            state.replaceHead(updated, cost: length + headBytes)
        }
        // Removed while the head was written: the head just written must not outlive it.
        let removed = stored ? evicted.map(\.response.id) : evicted.map(\.response.id) + [response.id]
        guard !removed.isEmpty else { return }
        let directory = self.directory
        _ = try? await PoolFile.run {
            for id in removed { Self.removeFiles(of: id, in: directory) }
        }
    }

    func remove(_ response: CachedResponse) async {
        await self.loading.value
        self.state.withLockedValue { _ = $0.remove(response.id) }
        let directory = self.directory
        _ = try? await PoolFile.run { Self.removeFiles(of: response.id, in: directory) }
    }

    func removeResponses(forKey key: String) async {
        await self.loading.value
        let removed = self.state.withLockedValue { $0.removeAll(forKey: key).map(\.response.id) }
        guard !removed.isEmpty else { return }
        let directory = self.directory
        _ = try? await PoolFile.run {
            for id in removed { Self.removeFiles(of: id, in: directory) }
        }
    }

    func removeAll() async {
        await self.loading.value
        let removed = self.state.withLockedValue { $0.removeAll().map(\.response.id) }
        let directory = self.directory
        _ = try? await PoolFile.run {
            for id in removed { Self.removeFiles(of: id, in: directory) }
        }
    }

    // MARK: Writing

    /// Writes `response`'s head file atomically.
    fileprivate func writeHead(_ response: CachedResponse, bodyLength: Int64) async throws -> Int64 {
        let data = try JSONEncoder().encode(Head(response, bodyLength: bodyLength))
        // A name of its own: another update of this head (here or in another process) writes its own file.
        let partial = self.path(of: response.id, "head.\(UUID().uuidString).partial")
        let final = self.path(of: response.id, "head")
        try await PoolFile.run { () throws(SystemFile.SystemError) in
            let descriptor = try SystemFile.openForWriting(partial, truncate: true).get()
            let error = data.withUnsafeBytes { SystemFile.write(descriptor, $0) }
            let closeError = SystemFile.close(descriptor)
            if let failure = error ?? closeError ?? SystemFile.rename(partial, to: final) {
                SystemFile.remove(partial)
                throw failure
            }
        }
        return Int64(data.count)
    }

    /// Records a committed entry and evicts what no longer fits.
    fileprivate func committed(_ response: CachedResponse, cost: Int64) async {
        let evicted = self.state.withLockedValue { $0.insert(response, payload: (), cost: cost).map(\.response) }
        guard !evicted.isEmpty else { return }
        let directory = self.directory
        _ = try? await PoolFile.run {
            for response in evicted { Self.removeFiles(of: response.id, in: directory) }
        }
    }

    /// Writes a body to `ID.body.partial` in batches on the thread pool; commits by renaming it and writing the head.
    actor Writer: CacheStoreWriter {
        private let store: DiskCacheStore
        private let response: CachedResponse
        private var file: PoolFile?
        private var writer: BatchedFileWriter?
        private var received: Int64 = 0
        private var failed = false

        init(store: DiskCacheStore, response: CachedResponse) {
            self.store = store
            self.response = response
        }

        private var partialPath: String { self.store.path(of: self.response.id, "body.partial") }

        func write(_ chunk: ByteBuffer) async throws {
            guard !self.failed else { return }
            self.received += Int64(chunk.readableBytes)
            guard self.received <= self.store.maximumEntrySize else {
                await self.abort()
                return
            }
            do throws(SystemFile.SystemError) {
                if self.writer == nil {
                    let file = try await PoolFile.openForWriting(self.partialPath, truncate: true)
                    self.file = file
                    self.writer = BatchedFileWriter(file: file, offset: 0)
                }
                if var writer = self.writer {
                    _ = try await writer.append(chunk)
                    self.writer = writer
                }
            } catch {
                await self.abort()
            }
        }

        func commit(length: Int64) async throws {
            guard !self.failed, length == self.received else {
                await self.abort()
                throw CacheStoreError.tooLarge
            }
            do throws(SystemFile.SystemError) {
                if self.writer == nil {
                    // An empty body: the file still marks the entry as complete.
                    let file = try await PoolFile.openForWriting(self.partialPath, truncate: true)
                    self.file = file
                    self.writer = BatchedFileWriter(file: file, offset: 0)
                }
                if var writer = self.writer {
                    self.writer = nil
                    try await writer.finish()
                }
                try await self.file?.close()
                self.file = nil
                let partial = self.partialPath
                let final = self.store.path(of: self.response.id, "body")
                try await PoolFile.run { () throws(SystemFile.SystemError) in
                    if let error = SystemFile.rename(partial, to: final) { throw error }
                }
            } catch {
                await self.abort()
                throw CacheStoreError.system(error)
            }
            var response = self.response
            response.bodyLength = length
            do {
                let headBytes = try await self.store.writeHead(response, bodyLength: length)
                await self.store.committed(response, cost: length + headBytes)
            } catch {
                let directory = self.store.directory
                let id = self.response.id
                _ = try? await PoolFile.run { DiskCacheStore.removeFiles(of: id, in: directory) }
                throw error
            }
        }

        func abort() async {
            guard !self.failed else { return }
            self.failed = true
            if var writer = self.writer {
                self.writer = nil
                await writer.abandon()
            }
            try? await self.file?.close()
            self.file = nil
            let partial = self.partialPath
            _ = try? await PoolFile.run { SystemFile.remove(partial) }
        }
    }

    /// A body file opened for reading, closed when the last reader lets it go.
    final class OpenBody: Sendable {
        let descriptor: CInt
        let path: String
        let length: Int64
        /// The file as the reading helpers name it, made once (a `URL` from a path asks the file system).
        private let file: MultipartFormData.FileSource

        init(descriptor: CInt, path: String, length: Int64) {
            self.descriptor = descriptor
            self.path = path
            self.length = length
            self.file = MultipartFormData.FileSource(
                url: URL(fileURLWithPath: path, isDirectory: false),
                path: path,
                size: length,
                role: "the cached response body"
            )
        }

        deinit {
            SystemFile.close(self.descriptor)
        }

        /// The body in chunks of `size` bytes, read on the thread pool as they are pulled, from the start again
        /// for each iteration; a file that ends early or runs on is an error, never a short or long body.
        func chunks(size: Int) -> ByteChunks {
            ByteChunks(makeNext: {
                var offset: Int64 = 0
                var ended = false
                return { () async throws -> ByteBuffer? in
                    guard !ended else { return nil }
                    let start = offset
                    let count = Int(min(Int64(size), self.length - start))
                    let chunk: ByteBuffer?
                    do throws(KiteError) {
                        chunk = try await self.read(count, at: start)
                    } catch {
                        // The reading helpers are the multipart ones; the failure is the cached body's.
                        throw KiteError(
                            code: .invalidResponse,
                            message: "the cached response body could not be read: \(error.message)",
                            underlyingError: error.underlyingError
                        )
                    }
                    offset += Int64(count)
                    ended = chunk == nil
                    return chunk
                }
            })
        }

        /// `count` bytes at `offset`; at the end (`count` 0), checks that nothing follows and returns `nil`.
        private func read(_ count: Int, at offset: Int64) async throws(KiteError) -> ByteBuffer? {
            let file = self.file
            let descriptor = self.descriptor
            do {
                return try await NIOThreadPool.singleton.runIfActive { () throws(KiteError) -> ByteBuffer? in
                    guard count > 0 else {
                        try MultipartFormData.checkFileEnds(descriptor, file: file, label: "")
                        return nil
                    }
                    var buffer = ByteBufferAllocator().buffer(capacity: count)
                    var result: Result<Int, SystemFile.SystemError> = .success(0)
                    buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { pointer in
                        result = SystemFile.read(
                            descriptor,
                            into: UnsafeMutableRawBufferPointer(rebasing: pointer[0..<count]),
                            at: offset
                        )
                        return (try? result.get()) ?? 0
                    }
                    try MultipartFormData.checkRead(result, of: file, label: "", offset: offset, expected: count)
                    return buffer
                }
            } catch let error as KiteError {
                throw error
            } catch {
                throw MultipartFormData.readFailure(file, label: "", error, doing: "read")
            }
        }
    }

    // MARK: Files

    static func removeFiles(of id: UUID, in directory: URL) {
        SystemFile.remove(directory.appendingPathComponent("\(id.uuidString).head").path)
        SystemFile.remove(directory.appendingPathComponent("\(id.uuidString).body").path)
    }

    /// The entries in `directory` (made when missing), with their sizes and modification times; damaged ones,
    /// and partial files left by a process that died, are removed.
    static func scan(_ directory: URL) -> [(CachedResponse, Int64, Date)] {
        let manager = FileManager.default
        try? manager.createDirectory(at: directory, withIntermediateDirectories: true)
        let names = (try? manager.contentsOfDirectory(atPath: directory.path)) ?? []
        var found: [(CachedResponse, Int64, Date)] = []
        var heads: Set<String> = []
        let now = Date()
        func modified(_ path: String) -> Date {
            ((try? manager.attributesOfItem(atPath: path))?[.modificationDate] as? Date) ?? now
        }
        for name in names where name.hasSuffix(".head") {
            let stem = String(name.dropLast(".head".count))
            let headPath = directory.appendingPathComponent(name).path
            let bodyPath = directory.appendingPathComponent("\(stem).body").path
            guard let data = manager.contents(atPath: headPath), data.count < 1 << 20,
                let head = try? JSONDecoder().decode(Head.self, from: data), head.id.uuidString == stem,
                let response = head.response,
                case .success(let status) = SystemFile.status(ofPath: bodyPath), status.isRegularFile,
                status.size == head.bodyLength
            else {
                SystemFile.remove(headPath)
                SystemFile.remove(bodyPath)
                continue
            }
            heads.insert(stem)
            found.append((response, head.bodyLength + Int64(data.count), modified(headPath)))
        }
        for name in names where !name.hasSuffix(".head") {
            let path = directory.appendingPathComponent(name).path
            let stem = name.split(separator: ".").first.map(String.init) ?? name
            let orphan = name.hasSuffix(".body") && !heads.contains(stem)
            let partial = name.hasSuffix(".partial")
            if orphan || partial, now.timeIntervalSince(modified(path)) > Self.abandonedAge {
                SystemFile.remove(path)
            }
        }
        return found
    }
}
