import Foundation
import NIOCore

/// Where a ``ResponseCache`` keeps its responses: implement it to back the cache with your own store (a
/// database, a shared volume).
///
/// The cache calls it from many requests at once, so an implementation is safe to call concurrently. It never
/// holds a lock of its own across these calls. Bodies move in chunks: a response is written while it streams
/// to the caller, and read back as it streams out again.
///
/// ```swift
/// let cache = ResponseCache(storage: MyStore(), mode: .private)
/// ```
public protocol ResponseCacheStorage: Sendable {
    /// The stored responses under `key` (every variant), heads only.
    func responses(forKey key: String) async -> [CachedResponse]

    /// The stored body of `response`, or `nil` when it is gone or damaged (the cache then removes the entry and
    /// treats it as a miss).
    func body(of response: CachedResponse) async -> AsyncThrowingStream<Data, any Error>?

    /// Starts storing `response`; `nil` when it will not be stored (no room). Nothing is visible to
    /// ``responses(forKey:)`` until the writer commits.
    func makeWriter(for response: CachedResponse) async -> (any ResponseCacheWriter)?

    /// Replaces the stored head of the entry with `response`'s id (after a `304` refreshed it).
    func update(_ response: CachedResponse) async

    /// Removes one entry.
    func remove(_ response: CachedResponse) async

    /// Removes every entry under `key`.
    func removeResponses(forKey key: String) async

    /// Removes every entry.
    func removeAll() async
}

/// Writes one response's body into a ``ResponseCacheStorage``.
public protocol ResponseCacheWriter: Sendable {
    /// Appends the next part of the body.
    func write(_ chunk: Data) async throws
    /// Makes the entry visible, atomically, with the body written so far (`length` bytes), replacing no other
    /// entry. Throwing leaves nothing stored.
    func commit(length: Int64) async throws
    /// Drops what was written; the entry is never visible.
    func abort() async
}

/// The storage the cache uses inside: Kite's own stores move `ByteBuffer`s without copying them into `Data`.
protocol CacheStore: Sendable {
    func responses(forKey key: String) async -> [CachedResponse]
    func body(of response: CachedResponse) async -> ByteChunks?
    func makeWriter(for response: CachedResponse) async -> (any CacheStoreWriter)?
    func update(_ response: CachedResponse) async
    func remove(_ response: CachedResponse) async
    func removeResponses(forKey key: String) async
    func removeAll() async
}

/// Writes one body into a ``CacheStore``.
protocol CacheStoreWriter: Sendable {
    func write(_ chunk: ByteBuffer) async throws
    func commit(length: Int64) async throws
    func abort() async
}

/// A user's ``ResponseCacheStorage`` as a ``CacheStore``.
struct UserCacheStore: CacheStore {
    let storage: any ResponseCacheStorage

    func responses(forKey key: String) async -> [CachedResponse] {
        await self.storage.responses(forKey: key)
    }

    /// The storage's body, checked against the stored length: one that ends early or runs on is an error, never
    /// a short or long body delivered as complete.
    func body(of response: CachedResponse) async -> ByteChunks? {
        guard let stream = await self.storage.body(of: response) else { return nil }
        let expected = response.bodyLength
        let key = response.key
        return ByteChunks(makeNext: {
            var iterator = stream.makeAsyncIterator()
            var received: Int64 = 0
            return { () async throws -> ByteBuffer? in
                guard let data = try await iterator.next() else {
                    if let expected, received != expected {
                        throw Self.lengthMismatch(key, "ended after \(received) of its \(expected) bytes")
                    }
                    return nil
                }
                received += Int64(data.count)
                if let expected, received > expected {
                    throw Self.lengthMismatch(key, "ran past its \(expected) bytes")
                }
                return ByteBuffer(data: data)
            }
        })
    }

    static func lengthMismatch(_ key: String, _ what: String) -> KiteError {
        KiteError(
            code: .invalidResponse,
            message: "the stored body of \(key) from the cache storage \(what), so it is not the stored response"
        )
    }

    func makeWriter(for response: CachedResponse) async -> (any CacheStoreWriter)? {
        guard let writer = await self.storage.makeWriter(for: response) else { return nil }
        return Writer(writer: writer)
    }

    func update(_ response: CachedResponse) async { await self.storage.update(response) }
    func remove(_ response: CachedResponse) async { await self.storage.remove(response) }
    func removeResponses(forKey key: String) async { await self.storage.removeResponses(forKey: key) }
    func removeAll() async { await self.storage.removeAll() }

    struct Writer: CacheStoreWriter {
        let writer: any ResponseCacheWriter

        func write(_ chunk: ByteBuffer) async throws {
            try await self.writer.write(Data(buffer: chunk))
        }

        func commit(length: Int64) async throws { try await self.writer.commit(length: length) }
        func abort() async { await self.writer.abort() }
    }
}
