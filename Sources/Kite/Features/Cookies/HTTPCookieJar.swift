import Foundation
import NIOConcurrencyHelpers

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Kite's cookie jar: RFC 6265bis's cookie store in memory, optionally kept in a JSON file.
///
/// The jar stores what ``Cookie/init(setCookie:for:now:)`` accepts and returns what a request may send.
/// Beyond the parsing rules it applies the store's own (RFC 6265bis §5.7):
///
/// - A cookie with the same name, domain, host-only flag and path replaces the stored one and keeps its
///   creation time; one that has already expired only deletes it.
/// - A non-`Secure` cookie set over an insecure connection is refused when a `Secure` cookie of the same name
///   is stored for a related domain and a path it would shadow ("leave secure cookies alone").
/// - Expired cookies are removed whenever a lookup or a store comes across them.
/// - Limits: a name and value together over ``maximumCookieSize`` bytes are refused; after a store,
///   a domain with more than ``maximumCookiesPerDomain`` cookies loses its expired ones, then non-`Secure`
///   ones before `Secure` ones, each by the least recent ``Cookie/lastAccessTime`` (then the earliest
///   creation time); a jar with more than ``maximumCookieCount`` loses its expired ones, then the least
///   recently accessed of all. The cookie just stored counts as accessed now, so it goes after every other
///   cookie of its kind.
///
/// ```swift
/// let jar = HTTPCookieJar()
/// let url = URL(string: "https://example.com/")!
/// jar.store(setCookieHeaders: ["sid=abc; Path=/; HttpOnly"], from: url)
/// print(jar.cookieHeader(for: url) as Any)  // Optional("sid=abc")
/// print(jar.allCookies.count)  // 1
/// ```
///
/// ## Persistence
///
/// ``init(persistingTo:persistsSessionCookies:)`` loads the file if it exists and writes it again after each
/// change to the cookies it keeps: stored, replaced, deleted or evicted ones, not mere lookups (the access
/// times they update are written with the next change, or by ``save()``). Each write is atomic: the JSON
/// goes to a temporary file in the same directory, readable by its owner only, which is synced and then
/// renamed over the old one, so a crash leaves either the old file or the new one. Writes are not coalesced:
/// each happens on the thread that made the change, outside the jar's lock, and a write older than one
/// already done is skipped. A failed write is kept in ``persistenceError`` and tried again with the next
/// change. Only persistent cookies (those with an expiry) are written unless `persistsSessionCookies` is
/// set. The file is `{"version": 1, "cookies": [...]}`, each cookie with ``Cookie``'s property names and
/// its dates as seconds since 1970.
public final class HTTPCookieJar: CookieJar {
    /// The longest a cookie's name and value may be together, in bytes: 4096.
    public static let maximumCookieSize = Cookie.maximumNameValueLength

    /// The most cookies the jar keeps for one domain: 50.
    public static let maximumCookiesPerDomain = 50

    /// The most cookies the jar keeps in all: 3000.
    public static let maximumCookieCount = 3000

    /// The file the jar is kept in, or `nil` for a jar in memory only.
    public let fileURL: URL?

    /// Whether the file also keeps session cookies (those without an expiry).
    public let persistsSessionCookies: Bool

    private let state: NIOLockedValueBox<CookieStore>
    private let writer = NIOLockedValueBox(Writer())

    /// Creates an empty jar in memory.
    ///
    /// ```swift
    /// let jar = HTTPCookieJar()
    /// ```
    public init() {
        self.fileURL = nil
        self.persistsSessionCookies = false
        self.state = NIOLockedValueBox(CookieStore(persistsSessionCookies: false))
    }

    /// Creates a jar kept in the JSON file at `fileURL`, loading the cookies already there.
    ///
    /// A missing or empty file gives an empty jar; the file is created with the first change. Cookies in the
    /// file that have expired are dropped. The directory must exist.
    ///
    /// ```swift
    /// let file = URL(filePath: NSTemporaryDirectory()).appending(path: "cookies.json")
    /// let jar = try HTTPCookieJar(persistingTo: file)
    /// jar.store(setCookieHeaders: ["sid=abc; Max-Age=3600"], from: URL(string: "https://example.com/")!)
    /// // cookies.json now holds the cookie; a new jar on the same file loads it.
    /// ```
    ///
    /// - Parameters:
    ///   - fileURL: The JSON file to load and keep the cookies in.
    ///   - persistsSessionCookies: Whether to keep session cookies in the file too.
    /// - Throws: A ``KiteError`` naming the file when it cannot be read or is not a cookie jar's JSON.
    public convenience init(persistingTo fileURL: URL, persistsSessionCookies: Bool = false) throws(KiteError) {
        try self.init(persistingTo: fileURL, persistsSessionCookies: persistsSessionCookies, now: Date())
    }

    /// Creates a jar kept in `fileURL`, dropping the loaded cookies that have expired at `now`.
    init(persistingTo fileURL: URL, persistsSessionCookies: Bool, now: Date) throws(KiteError) {
        self.fileURL = fileURL
        self.persistsSessionCookies = persistsSessionCookies
        var store = CookieStore(persistsSessionCookies: persistsSessionCookies)
        for cookie in try Self.load(fileURL) {
            _ = store.insert(cookie.normalized(), from: nil, keepsCreationTime: false, now: now)
        }
        store.generation = 0
        self.state = NIOLockedValueBox(store)
    }

    /// Every cookie in the jar, ordered by domain, then path, then creation time.
    ///
    /// Expired cookies are included until a lookup or a store comes across them.
    ///
    /// ```swift
    /// for cookie in jar.allCookies { print(cookie.domain, cookie.name) }
    /// ```
    public var allCookies: [Cookie] {
        self.state.withLockedValue { $0.all }.sorted {
            ($0.domain, $0.path, $0.creationTime, $0.name) < ($1.domain, $1.path, $1.creationTime, $1.name)
        }
    }

    /// Whether the jar holds no cookie: a session skips cookie work for requests while it is empty.
    public var isEmpty: Bool {
        self.state.withLockedValue { $0.count == 0 }
    }

    /// The error of the last write of the file, or `nil` when it succeeded (or none was needed yet).
    ///
    /// ```swift
    /// if let error = jar.persistenceError { print(error.message) }
    /// ```
    public var persistenceError: KiteError? {
        self.writer.withLockedValue { $0.error }
    }

    /// The cookies to send to `url` at `now`, in `Cookie` header order, marked accessed at `now`; expired
    /// cookies of the domains looked at are removed on the way.
    ///
    /// ```swift
    /// let cookies = jar.cookies(for: URL(string: "https://example.com/")!, now: Date())
    /// ```
    ///
    /// - Parameters:
    ///   - url: The request's URL.
    ///   - now: The current time.
    /// - Returns: The cookies to send.
    public func cookies(for url: URL, now: Date) -> [Cookie] {
        guard let target = Cookie.Target(url) else { return [] }
        return self.state.withLockedValue { $0.cookies(for: target, now: now) }
    }

    /// Stores the cookies of a response's `Set-Cookie` headers, in order, then writes the file if the kept
    /// cookies changed.
    ///
    /// ```swift
    /// jar.store(setCookieHeaders: ["sid=abc; Max-Age=3600"], from: URL(string: "https://example.com/")!, now: Date())
    /// ```
    ///
    /// - Parameters:
    ///   - setCookieHeaders: The values of the response's `Set-Cookie` headers.
    ///   - url: The URL of the request the response answered.
    ///   - now: The current time.
    public func store(setCookieHeaders: [String], from url: URL, now: Date) {
        guard let target = Cookie.Target(url) else { return }
        let cookies = setCookieHeaders.compactMap { try? Cookie.parse($0, from: target, now: now).get() }
        guard !cookies.isEmpty else { return }
        let change = self.state.withLockedValue { store in
            let before = store.generation
            for cookie in cookies {
                _ = store.insert(cookie, from: target, keepsCreationTime: true, now: now)
            }
            return self.change(in: store, since: before)
        }
        self.persist(change)
    }

    /// Stores `cookie` as it is, replacing the one with the same name, domain, host-only flag and path.
    ///
    /// The jar's limits apply: a cookie whose name and value pass ``maximumCookieSize`` bytes is ignored, and
    /// one that has expired at `now` only deletes the stored one. None of the `Set-Cookie` rules do (the
    /// caller decides the domain and flags), and the cookie keeps its own creation time.
    ///
    /// ```swift
    /// jar.setCookie(Cookie(name: "theme", value: "dark", domain: "example.com"))
    /// ```
    ///
    /// - Parameters:
    ///   - cookie: The cookie to store.
    ///   - now: The current time, for the expiry check.
    public func setCookie(_ cookie: Cookie, now: Date = Date()) {
        let cookie = cookie.normalized()
        guard cookie.name.utf8.count + cookie.value.utf8.count <= Self.maximumCookieSize, !cookie.domain.isEmpty
        else { return }
        let change = self.state.withLockedValue { store in
            let before = store.generation
            _ = store.insert(cookie, from: nil, keepsCreationTime: false, now: now)
            return self.change(in: store, since: before)
        }
        self.persist(change)
    }

    /// Removes the cookie with the same name, domain, host-only flag and path as `cookie`.
    ///
    /// ```swift
    /// if let stale = jar.allCookies.first(where: { $0.name == "sid" }) { jar.deleteCookie(stale) }
    /// ```
    ///
    /// - Parameter cookie: The cookie to remove.
    public func deleteCookie(_ cookie: Cookie) {
        let key = cookie.normalized().key
        self.remove { $0.key == key }
    }

    /// Removes every cookie `url`'s host would receive, whatever its path or `Secure` flag: the host's own
    /// cookies and those set for a parent domain of it.
    ///
    /// ```swift
    /// jar.deleteCookies(for: URL(string: "https://www.example.com/")!)  // www.example.com's and example.com's
    /// ```
    ///
    /// - Parameter url: A URL of the host whose cookies to remove.
    public func deleteCookies(for url: URL) {
        guard var target = Cookie.Target(url) else { return }
        target.path = "/"
        target.isSecure = true
        self.remove { cookie in
            var anyPath = cookie
            anyPath.path = "/"
            return anyPath.isSent(to: target)
        }
    }

    /// Removes every cookie, and empties the file.
    ///
    /// ```swift
    /// jar.removeAll()
    /// ```
    public func removeAll() {
        self.remove { _ in true }
    }

    /// Writes the file now, with the current access times; does nothing for a jar in memory only.
    ///
    /// The jar writes its file after each change by itself; call this to keep the latest access times too,
    /// or to find out whether writing works.
    ///
    /// ```swift
    /// try jar.save()
    /// ```
    ///
    /// - Throws: A ``KiteError`` naming the file when it cannot be written.
    public func save() throws(KiteError) {
        guard let fileURL = self.fileURL else { return }
        let change = self.state.withLockedValue { Change(generation: $0.generation, cookies: $0.persisted) }
        let failure: KiteError? = self.writer.withLockedValue { writer in
            guard change.generation >= writer.writtenGeneration else { return nil }
            writer.record(Result { () throws(KiteError) in try Self.write(change.cookies, to: fileURL) }, change)
            return writer.error
        }
        if let failure { throw failure }
    }

    // MARK: - Changes

    /// Removes the cookies `shouldRemove` picks, then writes the file if that changed it.
    private func remove(where shouldRemove: (Cookie) -> Bool) {
        let change = self.state.withLockedValue { store in
            let before = store.generation
            store.remove(where: shouldRemove)
            return self.change(in: store, since: before)
        }
        self.persist(change)
    }

    /// What to write, when the store's kept cookies changed since generation `before` and there is a file.
    private func change(in store: CookieStore, since before: Int) -> Change? {
        guard self.fileURL != nil, store.generation != before else { return nil }
        return Change(generation: store.generation, cookies: store.persisted)
    }

    /// Writes `change` unless a later one has been written already; a failure is kept for
    /// ``persistenceError``.
    private func persist(_ change: Change?) {
        guard let change, let fileURL = self.fileURL else { return }
        self.writer.withLockedValue { writer in
            guard change.generation > writer.writtenGeneration else { return }
            writer.record(Result { () throws(KiteError) in try Self.write(change.cookies, to: fileURL) }, change)
        }
    }

    /// The kept cookies as of one generation of the store.
    private struct Change {
        var generation: Int
        var cookies: [Cookie]
    }

    /// The file writer's state: the newest generation written, and the last failure.
    private struct Writer {
        var writtenGeneration = 0
        var error: KiteError?

        /// Notes the outcome of writing `change`.
        mutating func record(_ result: Result<Void, KiteError>, _ change: Change) {
            switch result {
            case .success:
                self.writtenGeneration = change.generation
                self.error = nil
            case .failure(let error):
                self.error = error
            }
        }
    }
}

// MARK: - The file

extension HTTPCookieJar {
    /// The file's JSON: `{"version": 1, "cookies": [...]}`, dates as seconds since 1970.
    private struct FileContents: Codable {
        var version: Int
        var cookies: [Cookie]
    }

    /// The version of the file format this jar writes.
    private static let fileVersion = 1

    /// The error code for a cookie file that cannot be read, parsed or written. `KiteError.Code` has no
    /// code for cookie storage yet, and its codes can only be added in `KiteError.swift`.
    static let fileErrorCode = KiteError.Code.cookieStorageFailed

    /// The cookies in the file at `fileURL`: none when there is no file or it is empty.
    private static func load(_ fileURL: URL) throws(KiteError) -> [Cookie] {
        let path = fileURL.path(percentEncoded: false)
        guard FileManager.default.fileExists(atPath: path) else { return [] }
        let data: Data
        do {
            data = try DownloadFiles.contents(of: fileURL)
        } catch {
            throw KiteError(
                code: Self.fileErrorCode,
                message: "could not read the cookie file \(path): \(error.localizedDescription)",
                underlyingError: error
            )
        }
        guard data.contains(where: { !($0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09) }) else { return [] }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        let contents: FileContents
        do {
            contents = try decoder.decode(FileContents.self, from: data)
        } catch {
            throw KiteError(
                code: Self.fileErrorCode,
                message: "the cookie file \(path) is not a cookie jar's JSON (\(Self.describe(error)))",
                underlyingError: error
            )
        }
        guard contents.version <= Self.fileVersion else {
            throw KiteError(
                code: Self.fileErrorCode,
                message: "the cookie file \(path) has format version \(contents.version), newer than this Kite's "
                    + "(\(Self.fileVersion))"
            )
        }
        return contents.cookies
    }

    /// Writes `cookies` to `fileURL` atomically: a temporary file in the same directory, owner-only, synced
    /// and renamed over `fileURL`.
    private static func write(_ cookies: [Cookie], to fileURL: URL) throws(KiteError) {
        let path = fileURL.path(percentEncoded: false)
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let sorted = cookies.sorted { ($0.domain, $0.path, $0.name) < ($1.domain, $1.path, $1.name) }
        let data: Data
        do {
            data = try encoder.encode(FileContents(version: Self.fileVersion, cookies: sorted))
        } catch {
            throw KiteError(
                code: Self.fileErrorCode,
                message: "could not encode the cookie file \(path): \(error)",
                underlyingError: error
            )
        }
        let directory = fileURL.deletingLastPathComponent()
        let temporaryPath = directory.appending(path: ".\(fileURL.lastPathComponent).\(UUID().uuidString).tmp")
            .path(percentEncoded: false)
        func failure(_ step: String, _ error: SystemFile.SystemError) -> KiteError {
            SystemFile.remove(temporaryPath)
            return KiteError(
                code: Self.fileErrorCode,
                message: "could not write the cookie file \(path): \(step) failed: \(error)",
                underlyingError: error.posixError
            )
        }
        let descriptor: CInt
        switch SystemFile.openForWriting(temporaryPath, truncate: true) {
        case .success(let opened): descriptor = opened
        case .failure(let error): throw failure("creating \(temporaryPath)", error)
        }
        if let error = data.withUnsafeBytes({ SystemFile.write(descriptor, $0) }) {
            SystemFile.close(descriptor)
            throw failure("writing", error)
        }
        if fsync(descriptor) != 0 {
            let error = SystemFile.SystemError.current()
            SystemFile.close(descriptor)
            throw failure("syncing", error)
        }
        if let error = SystemFile.close(descriptor) { throw failure("closing", error) }
        guard rename(temporaryPath, path) == 0 else { throw failure("renaming", SystemFile.SystemError.current()) }
    }

    /// A decoding error in a few words: what went wrong and where.
    private static func describe(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "\(error)" }
        func at(_ path: [any CodingKey]) -> String {
            path.isEmpty
                ? "" : " at \(path.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: "."))"
        }
        switch error {
        case .dataCorrupted(let context): return "\(context.debugDescription)\(at(context.codingPath))"
        case .keyNotFound(let key, let context): return "no \"\(key.stringValue)\"\(at(context.codingPath))"
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return "\(context.debugDescription)\(at(context.codingPath))"
        @unknown default: return "\(error)"
        }
    }
}
