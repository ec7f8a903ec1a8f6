import Foundation
import HTTPTypes
import HTTPTypesFoundation
import NIOConcurrencyHelpers

/// An HTTP response cache that follows RFC 9111 (and RFC 5861's `stale-while-revalidate` and `stale-if-error`),
/// in memory and on disk: what URLCache gives URLSession on Apple platforms, for Kite on Linux.
///
/// Give it to a session (``Session/Configuration/cache``); each request's
/// ``Session/Configuration/requestCachePolicy`` or ``BaseRequest/cachePolicy(_:)`` (URLRequest's cases) says
/// how it is used, and every response's ``ResponseMetrics/cacheStatus`` says where it came from.
///
/// ```swift
/// var configuration = Session.Configuration.default
/// configuration.cache = ResponseCache(
///     memoryCapacity: 10 * 1024 * 1024,
///     diskCapacity: 100 * 1024 * 1024,
///     directory: FileManager.default.temporaryDirectory.appendingPathComponent("kite-cache")
/// )
/// let session = Session(configuration: configuration)
/// ```
///
/// Two sessions in one process may share a cache, and two processes a directory.
public final class ResponseCache: Sendable {
    /// Whose cache it is, which decides what it may store (RFC 9111 §1).
    public enum Mode: Sendable, Hashable {
        /// A client's own cache (the default): stores `private` and authenticated responses.
        case `private`
        /// A cache shared by many users (a gateway's): honours `s-maxage` and `proxy-revalidate`, never stores
        /// `private` responses, and stores authenticated ones only when they allow it (§3.5).
        case shared
    }

    /// Whose cache it is.
    public let mode: Mode
    /// The largest body stored, in bytes: a larger response goes to the caller but not into the cache.
    public let maximumEntrySize: Int64
    /// Whether every response the cache handled carries a `Cache-Status` field (RFC 9211) saying what it did:
    /// `Kite; hit; ttl=42`, `Kite; fwd=stale; fwd-status=304`, `Kite; fwd=miss`.
    public let addsCacheStatusField: Bool

    let store: any CacheStore
    let flights = FetchCoalescer()
    /// The keys being revalidated in the background (`stale-while-revalidate`), each at most once at a time.
    let backgroundRevalidations = NIOLockedValueBox(Set<String>())
    var isShared: Bool { self.mode == .shared }

    /// A cache in memory, and on disk when `directory` is given and `diskCapacity` is above zero.
    ///
    /// - Parameters:
    ///   - memoryCapacity: The bytes the memory tier holds (bodies plus their heads).
    ///   - diskCapacity: The bytes the disk tier holds.
    ///   - directory: Where the disk tier keeps its files (made when missing); `nil`: memory only.
    ///   - mode: ``Mode/private`` (a client's cache) or ``Mode/shared`` (a gateway's).
    ///   - maximumEntrySize: The largest body stored; by default a twentieth of the larger tier (URLCache's 5 %).
    ///   - addsCacheStatusField: Whether responses carry RFC 9211's `Cache-Status` field.
    public convenience init(
        memoryCapacity: Int = 10 * 1024 * 1024,
        diskCapacity: Int = 0,
        directory: URL? = nil,
        mode: Mode = .private,
        maximumEntrySize: Int64? = nil,
        addsCacheStatusField: Bool = false
    ) {
        let largest = Int64(max(memoryCapacity, directory == nil ? 0 : diskCapacity))
        // A tier keeps no entry larger than itself: the limit says what is really kept.
        let entryLimit = min(maximumEntrySize ?? largest / 20, largest)
        let memory = MemoryCacheStore(capacity: memoryCapacity, maximumEntrySize: Int(clamping: entryLimit))
        if let directory, diskCapacity > 0 {
            let disk = DiskCacheStore(directory: directory, capacity: Int64(diskCapacity), maximumEntrySize: entryLimit)
            self.init(
                store: TieredCacheStore(memory: memory, disk: disk),
                mode: mode,
                maximumEntrySize: entryLimit,
                addsCacheStatusField: addsCacheStatusField
            )
        } else {
            self.init(
                store: memory,
                mode: mode,
                maximumEntrySize: entryLimit,
                addsCacheStatusField: addsCacheStatusField
            )
        }
    }

    /// A cache kept in your own storage.
    ///
    /// - Parameters:
    ///   - storage: Where responses are kept.
    ///   - mode: ``Mode/private`` (a client's cache) or ``Mode/shared`` (a gateway's).
    ///   - maximumEntrySize: The largest body stored.
    ///   - addsCacheStatusField: Whether responses carry RFC 9211's `Cache-Status` field.
    public convenience init(
        storage: any ResponseCacheStorage,
        mode: Mode = .private,
        maximumEntrySize: Int64 = .max,
        addsCacheStatusField: Bool = false
    ) {
        self.init(
            store: UserCacheStore(storage: storage),
            mode: mode,
            maximumEntrySize: maximumEntrySize,
            addsCacheStatusField: addsCacheStatusField
        )
    }

    init(store: any CacheStore, mode: Mode, maximumEntrySize: Int64, addsCacheStatusField: Bool = false) {
        self.store = store
        self.mode = mode
        self.maximumEntrySize = max(maximumEntrySize, 0)
        self.addsCacheStatusField = addsCacheStatusField
    }

    /// The stored responses for a `GET` of `url`, every variant.
    ///
    /// - Parameter url: The URL.
    /// - Returns: The stored heads.
    public func cachedResponses(for url: URL) async -> [CachedResponse] {
        guard let key = Self.key(for: url) else { return [] }
        return await self.store.responses(forKey: key)
    }

    /// Removes the stored responses for a `GET` of `url`.
    ///
    /// - Parameter url: The URL.
    public func removeCachedResponses(for url: URL) async {
        guard let key = Self.key(for: url) else { return }
        await self.store.removeResponses(forKey: key)
    }

    /// Removes every stored response.
    public func removeAllCachedResponses() async {
        await self.store.removeAll()
    }

    /// The cache key of a `GET` of `url`: the absolute URL without its fragment, scheme and host lowercased; `nil`
    /// for a URL no request could have. The head is made as a request's is: swift-http-types' `HTTPRequest(method:url:)`
    /// traps on a URL without a scheme ("Schemeless URL is not supported").
    static func key(for url: URL) -> String? {
        guard let head = try? RequestDraft(method: .get, url: url).makeHTTPRequest() else { return nil }
        return Self.key(for: head)
    }

    /// The cache key of `head`, or `nil` when it has no absolute URL.
    static func key(for head: HTTPRequest) -> String? {
        guard let scheme = head.scheme?.lowercased(), let authority = head.authority?.lowercased() else { return nil }
        let path = head.path ?? "/"
        return "\(scheme)://\(Self.withoutDefaultPort(authority, scheme: scheme))\(path.isEmpty ? "/" : path)"
    }

    private static func withoutDefaultPort(_ authority: String, scheme: String) -> Substring {
        let port = scheme == "https" ? ":443" : scheme == "http" ? ":80" : nil
        if let port, authority.hasSuffix(port) { return authority.dropLast(port.count) }
        return authority[...]
    }
}

/// One network fetch at a time per cache key: requests for a resource being fetched wait for that fetch to
/// end, then read the cache, instead of each going to the server. No lock is held while anyone waits.
final class FetchCoalescer: Sendable {
    private struct Waiter {
        var id: UInt64
        var continuation: CheckedContinuation<Bool, Never>
    }

    private struct State {
        var nextID: UInt64 = 0
        /// The keys being fetched and who waits for each.
        var flights: [String: [Waiter]] = [:]
    }

    private let state = NIOLockedValueBox(State())

    /// The fetch the caller leads: end it with ``Flight/finish(stored:)`` (or let it go: it then ends unstored).
    final class Flight: Sendable {
        private let coalescer: FetchCoalescer
        let key: String
        private let finished = NIOLockedValueBox(false)

        init(coalescer: FetchCoalescer, key: String) {
            self.coalescer = coalescer
            self.key = key
        }

        func finish(stored: Bool) {
            let first = self.finished.withLockedValue { finished in
                defer { finished = true }
                return !finished
            }
            if first { self.coalescer.land(self.key, stored: stored) }
        }

        deinit {
            self.finish(stored: false)
        }
    }

    enum Join {
        /// Nobody was fetching: the caller fetches and must end the flight.
        case lead(Flight)
        /// Another request fetched it; `stored` says whether the cache now has it.
        case followed(stored: Bool)
    }

    /// Leads the fetch of `key`, or waits for the one under way.
    func join(_ key: String) async -> Join {
        enum Decision {
            case lead
            case wait(UInt64)
        }
        let decision = self.state.withLockedValue { state -> Decision in
            guard state.flights[key] != nil else {
                state.flights[key] = []
                return .lead
            }
            state.nextID += 1
            return .wait(state.nextID)
        }
        switch decision {
        case .lead:
            return .lead(Flight(coalescer: self, key: key))
        case .wait(let id):
            let stored = await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    let waiting = self.state.withLockedValue { state in
                        guard state.flights[key] != nil else { return false }
                        state.flights[key]?.append(Waiter(id: id, continuation: continuation))
                        return true
                    }
                    // The flight landed before the waiter was added: read the cache again.
                    if !waiting { continuation.resume(returning: true) }
                }
            } onCancel: {
                let waiter = self.state.withLockedValue { state -> Waiter? in
                    guard let index = state.flights[key]?.firstIndex(where: { $0.id == id }) else { return nil }
                    return state.flights[key]?.remove(at: index)
                }
                waiter?.continuation.resume(returning: false)
            }
            return .followed(stored: stored)
        }
    }

    fileprivate func land(_ key: String, stored: Bool) {
        let waiters = self.state.withLockedValue { $0.flights.removeValue(forKey: key) } ?? []
        for waiter in waiters { waiter.continuation.resume(returning: stored) }
    }
}
