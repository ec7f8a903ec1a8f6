import Foundation
import NIOCore

/// The memory tier in front of the disk tier: every entry is on disk, and the bodies of small ones are also
/// kept in memory, where a hit reads them without a file.
struct TieredCacheStore: CacheStore {
    let memory: MemoryCacheStore
    let disk: DiskCacheStore

    func responses(forKey key: String) async -> [CachedResponse] {
        await self.disk.responses(forKey: key)
    }

    func body(of response: CachedResponse) async -> ByteChunks? {
        if let buffer = self.memory.bodyBuffer(of: response) {
            // A hit in memory is a use of the entry on disk too, or the disk tier would evict the entries read
            // most as if they were never read; one the disk tier no longer has is dropped from memory.
            if await self.disk.markUsed(response) {
                return ByteChunks(chunks: [buffer])
            }
            await self.memory.remove(response)
            return nil
        }
        guard let chunks = await self.disk.body(of: response) else { return nil }
        // A small body read from disk (after a restart, or once memory evicted it) is kept in memory again.
        guard let length = response.bodyLength, length <= Int64(self.memory.maximumEntrySize) else { return chunks }
        var whole = ByteBuffer()
        do {
            for try await var chunk in chunks { whole.writeBuffer(&chunk) }
        } catch {
            return nil
        }
        self.memory.insert(response, body: whole)
        return ByteChunks(chunks: [whole])
    }

    func makeWriter(for response: CachedResponse) async -> (any CacheStoreWriter)? {
        guard let disk = await self.disk.makeWriter(for: response) else { return nil }
        // A body announced larger than the memory tier keeps goes to disk only (no copy gathered to be dropped).
        let announced = response.response.headerFields[.contentLength].flatMap { Int64($0) }
        let fitsMemory = announced.map { $0 <= Int64(self.memory.maximumEntrySize) } ?? true
        let memory = fitsMemory ? await self.memory.makeWriter(for: response) : nil
        return Writer(disk: disk, memory: memory)
    }

    func update(_ response: CachedResponse) async {
        await self.memory.update(response)
        await self.disk.update(response)
    }

    func remove(_ response: CachedResponse) async {
        await self.memory.remove(response)
        await self.disk.remove(response)
    }

    func removeResponses(forKey key: String) async {
        await self.memory.removeResponses(forKey: key)
        await self.disk.removeResponses(forKey: key)
    }

    func removeAll() async {
        await self.memory.removeAll()
        await self.disk.removeAll()
    }

    /// Writes to disk, and to memory while the body is small enough for it.
    struct Writer: CacheStoreWriter {
        let disk: any CacheStoreWriter
        let memory: (any CacheStoreWriter)?

        func write(_ chunk: ByteBuffer) async throws {
            try await self.disk.write(chunk)
            try await self.memory?.write(chunk)
        }

        func commit(length: Int64) async throws {
            do {
                try await self.disk.commit(length: length)
            } catch {
                await self.memory?.abort()
                throw error
            }
            try? await self.memory?.commit(length: length)
        }

        func abort() async {
            await self.disk.abort()
            await self.memory?.abort()
        }
    }
}
