import Foundation

/// Where a session keeps the cookies servers set, and finds the ones to send.
///
/// ``HTTPCookieJar`` is Kite's jar: in memory, optionally persisted to a JSON file. Write your own to keep
/// cookies elsewhere; a jar is called from many requests at once, so it must be safe to share.
///
/// ```swift
/// let jar = HTTPCookieJar()
/// let url = URL(string: "https://example.com/account")!
/// jar.store(setCookieHeaders: ["sid=31d4d96e; Path=/; Secure; HttpOnly"], from: url)
/// print(jar.cookieHeader(for: url) as Any)  // Optional("sid=31d4d96e")
/// ```
public protocol CookieJar: Sendable {
    /// The cookies to send with a request to `url`, in the order of the `Cookie` header.
    ///
    /// A jar returns the cookies whose domain and path match `url` and that have not expired at `now`,
    /// leaving out `Secure` cookies when `url` is not secure (RFC 6265bis §5.8.3). It sorts them with
    /// longer paths first, then earlier creation times first, and sets their
    /// ``Cookie/lastAccessTime`` to `now`.
    ///
    /// ```swift
    /// let names = jar.cookies(for: URL(string: "https://example.com/")!, now: Date()).map(\.name)
    /// ```
    ///
    /// - Parameters:
    ///   - url: The request's URL.
    ///   - now: The current time.
    /// - Returns: The cookies to send, in header order.
    func cookies(for url: URL, now: Date) -> [Cookie]

    /// Stores the cookies of a response's `Set-Cookie` headers, as RFC 6265bis §5.7 says.
    ///
    /// Headers that do not parse or that the rules refuse are skipped; one with an expiry in the past
    /// deletes the stored cookie it names.
    ///
    /// ```swift
    /// jar.store(setCookieHeaders: ["a=1; Max-Age=60", "b=2"], from: URL(string: "https://example.com/")!, now: Date())
    /// ```
    ///
    /// - Parameters:
    ///   - setCookieHeaders: The values of the response's `Set-Cookie` headers, in order.
    ///   - url: The URL of the request the response answered (for a redirect, the URL that redirected).
    ///   - now: The current time.
    func store(setCookieHeaders: [String], from url: URL, now: Date)

    /// Removes every cookie.
    ///
    /// ```swift
    /// jar.removeAll()
    /// ```
    func removeAll()
}

extension CookieJar {
    /// The cookies to send with a request to `url` now, in the order of the `Cookie` header.
    ///
    /// ```swift
    /// let cookies = jar.cookies(for: URL(string: "https://example.com/")!)
    /// ```
    ///
    /// - Parameter url: The request's URL.
    /// - Returns: The cookies to send, in header order.
    public func cookies(for url: URL) -> [Cookie] {
        self.cookies(for: url, now: Date())
    }

    /// Stores the cookies of a response's `Set-Cookie` headers now.
    ///
    /// ```swift
    /// jar.store(setCookieHeaders: ["a=1"], from: URL(string: "https://example.com/")!)
    /// ```
    ///
    /// - Parameters:
    ///   - setCookieHeaders: The values of the response's `Set-Cookie` headers, in order.
    ///   - url: The URL of the request the response answered.
    public func store(setCookieHeaders: [String], from url: URL) {
        self.store(setCookieHeaders: setCookieHeaders, from: url, now: Date())
    }

    /// The `Cookie` header value for a request to `url`, or `nil` when no cookie applies.
    ///
    /// The cookies come from ``cookies(for:now:)`` (which marks them accessed at `now`), ordered as
    /// RFC 6265bis §5.8.3 says: longer paths first, then earlier creation times. Each is written as
    /// `name=value` (just the value for a nameless cookie), joined by `; `.
    ///
    /// ```swift
    /// let jar = HTTPCookieJar()
    /// let url = URL(string: "https://example.com/docs/a")!
    /// jar.store(setCookieHeaders: ["site=1; Path=/", "docs=2; Path=/docs"], from: url)
    /// print(jar.cookieHeader(for: url) as Any)  // Optional("docs=2; site=1")
    /// ```
    ///
    /// - Parameters:
    ///   - url: The request's URL.
    ///   - now: The current time.
    /// - Returns: The header value, or `nil` when there are no cookies to send.
    public func cookieHeader(for url: URL, now: Date = Date()) -> String? {
        let cookies = self.cookies(for: url, now: now).sorted(by: Cookie.sendsBefore)
        guard !cookies.isEmpty else { return nil }
        return cookies.map(\.headerPair).joined(separator: "; ")
    }
}

extension Cookie {
    /// RFC 6265bis §5.8.3: longer paths first, then earlier creation times; name and domain keep
    /// the order stable when both are equal.
    static func sendsBefore(_ lhs: Cookie, _ rhs: Cookie) -> Bool {
        let lhsLength = lhs.path.utf8.count
        let rhsLength = rhs.path.utf8.count
        if lhsLength != rhsLength { return lhsLength > rhsLength }
        if lhs.creationTime != rhs.creationTime { return lhs.creationTime < rhs.creationTime }
        if lhs.name != rhs.name { return lhs.name < rhs.name }
        return lhs.domain < rhs.domain
    }

    /// The cookie as the `Cookie` header writes it: `name=value`, or the value alone when the name is empty
    /// (RFC 6265bis §5.8.3).
    var headerPair: String {
        self.name.isEmpty ? self.value : "\(self.name)=\(self.value)"
    }
}

/// RFC 6265bis's cookie store (§5.7, §5.8.3): the cookies by domain, and the rules that change them.
///
/// A value type without I/O or locking; ``HTTPCookieJar`` keeps one behind its lock and writes the file
/// when ``generation`` moves.
struct CookieStore {
    /// The cookies, keyed by ``Cookie/domain``.
    private(set) var domains: [String: [Cookie]] = [:]
    /// How many cookies `domains` holds.
    private(set) var count = 0
    /// Counts the changes to the cookies the file keeps.
    var generation = 0
    let persistsSessionCookies: Bool

    init(persistsSessionCookies: Bool) {
        self.persistsSessionCookies = persistsSessionCookies
    }

    /// Every cookie.
    var all: [Cookie] { self.domains.values.flatMap { $0 } }

    /// The cookies the file keeps.
    var persisted: [Cookie] { self.all.filter(self.isKept) }

    private func isKept(_ cookie: Cookie) -> Bool {
        self.persistsSessionCookies || cookie.isPersistent
    }

    /// The cookies to send to `target` at `now`, in header order, marked accessed at `now`. Expired
    /// cookies in the domains looked at are removed.
    mutating func cookies(for target: Cookie.Target, now: Date) -> [Cookie] {
        var found: [Cookie] = []
        for domain in Self.domains(of: target) {
            guard var bucket = self.domains[domain] else { continue }
            let before = bucket.count
            bucket.removeAll { $0.isExpired(at: now) }
            self.count -= before - bucket.count
            for index in bucket.indices where bucket[index].isSent(to: target) {
                bucket[index].lastAccessTime = now
                found.append(bucket[index])
            }
            self.domains[domain] = bucket.isEmpty ? nil : bucket
        }
        return found.sorted(by: Cookie.sendsBefore)
    }

    /// Stores `cookie` (RFC 6265bis §5.7: replacement, deletion by expiry, "leave secure cookies alone"),
    /// then applies the limits.
    ///
    /// - Parameters:
    ///   - cookie: The cookie to store.
    ///   - target: The request it came from, for the "leave secure cookies alone" rule; `nil` for a
    ///     cookie set by the user or loaded from the file.
    ///   - keepsCreationTime: Whether a replacement takes the replaced cookie's creation time.
    ///   - now: The current time.
    /// - Returns: Whether the cookie was stored.
    mutating func insert(_ cookie: Cookie, from target: Cookie.Target?, keepsCreationTime: Bool, now: Date) -> Bool {
        var cookie = cookie
        if let target, !cookie.isSecure, !target.isSecure, self.shadowsSecureCookie(cookie) { return false }
        var bucket = self.domains[cookie.domain] ?? []
        var changed = false
        if let index = bucket.firstIndex(where: { $0.key == cookie.key }) {
            let old = bucket.remove(at: index)
            self.count -= 1
            changed = self.isKept(old)
            if keepsCreationTime { cookie.creationTime = old.creationTime }
        }
        let stored = !cookie.isExpired(at: now)
        if stored {
            bucket.append(cookie)
            self.count += 1
            changed = changed || self.isKept(cookie)
        }
        self.domains[cookie.domain] = bucket.isEmpty ? nil : bucket
        if stored {
            changed = self.evict(inDomain: cookie.domain, now: now) || changed
            changed = self.evictOverall(now: now) || changed
        }
        if changed { self.generation += 1 }
        return stored
    }

    /// Removes the cookies `shouldRemove` picks.
    mutating func remove(where shouldRemove: (Cookie) -> Bool) {
        var changed = false
        for (domain, bucket) in self.domains {
            let kept = bucket.filter { !shouldRemove($0) }
            guard kept.count != bucket.count else { continue }
            changed = changed || bucket.contains { shouldRemove($0) && self.isKept($0) }
            self.count -= bucket.count - kept.count
            self.domains[domain] = kept.isEmpty ? nil : kept
        }
        if changed { self.generation += 1 }
    }

    /// RFC 6265bis §5.7, "leave secure cookies alone": whether a `Secure` cookie of the same name is stored
    /// for a domain that domain-matches `cookie`'s (or the other way round) under a path that `cookie`'s
    /// path-matches.
    private func shadowsSecureCookie(_ cookie: Cookie) -> Bool {
        let newIsIP = Cookie.Target.isIPAddress(cookie.domain)
        for bucket in self.domains.values {
            for existing in bucket where existing.isSecure && existing.name == cookie.name {
                let existingIsIP = Cookie.Target.isIPAddress(existing.domain)
                let related =
                    Cookie.domainMatches(existing.domain, cookie.domain, hostIsIPAddress: existingIsIP)
                    || Cookie.domainMatches(cookie.domain, existing.domain, hostIsIPAddress: newIsIP)
                if related, Cookie.pathMatches(cookie.path, existing.path) { return true }
            }
        }
        return false
    }

    /// Keeps `domain` at ``HTTPCookieJar/maximumCookiesPerDomain``: expired cookies go first, then
    /// non-`Secure` ones before `Secure` ones, each the least recently accessed first. Returns whether a
    /// kept cookie went.
    private mutating func evict(inDomain domain: String, now: Date) -> Bool {
        guard var bucket = self.domains[domain], bucket.count > HTTPCookieJar.maximumCookiesPerDomain else {
            return false
        }
        var changed = false
        let before = bucket.count
        changed = bucket.contains { $0.isExpired(at: now) && self.isKept($0) }
        bucket.removeAll { $0.isExpired(at: now) }
        while bucket.count > HTTPCookieJar.maximumCookiesPerDomain {
            let victim = bucket.indices.min { Self.evictsBefore(bucket[$0], bucket[$1], secureLast: true) }
            guard let victim else { break }
            changed = self.isKept(bucket.remove(at: victim)) || changed
        }
        self.count -= before - bucket.count
        self.domains[domain] = bucket.isEmpty ? nil : bucket
        return changed
    }

    /// Keeps the jar at ``HTTPCookieJar/maximumCookieCount``: expired cookies go first, then the least
    /// recently accessed. Returns whether a kept cookie went.
    private mutating func evictOverall(now: Date) -> Bool {
        guard self.count > HTTPCookieJar.maximumCookieCount else { return false }
        var changed = false
        for (domain, bucket) in self.domains where bucket.contains(where: { $0.isExpired(at: now) }) {
            let kept = bucket.filter { !$0.isExpired(at: now) }
            changed = changed || bucket.contains { $0.isExpired(at: now) && self.isKept($0) }
            self.count -= bucket.count - kept.count
            self.domains[domain] = kept.isEmpty ? nil : kept
        }
        while self.count > HTTPCookieJar.maximumCookieCount {
            var victim: Cookie?
            for bucket in self.domains.values {
                for cookie in bucket
                where victim.map({ Self.evictsBefore(cookie, $0, secureLast: false) }) ?? true {
                    victim = cookie
                }
            }
            guard let victim, var bucket = self.domains[victim.domain] else { break }
            bucket.removeAll { $0.key == victim.key }
            self.count -= 1
            self.domains[victim.domain] = bucket.isEmpty ? nil : bucket
            changed = self.isKept(victim) || changed
        }
        return changed
    }

    /// Whether `lhs` is evicted before `rhs`: non-`Secure` first when `secureLast`, then the least
    /// recently accessed, then the earliest created.
    private static func evictsBefore(_ lhs: Cookie, _ rhs: Cookie, secureLast: Bool) -> Bool {
        if secureLast, lhs.isSecure != rhs.isSecure { return !lhs.isSecure }
        if lhs.lastAccessTime != rhs.lastAccessTime { return lhs.lastAccessTime < rhs.lastAccessTime }
        return lhs.creationTime < rhs.creationTime
    }

    /// The domains whose cookies may go to `target`: its host and, for a host name, each parent domain.
    private static func domains(of target: Cookie.Target) -> [String] {
        var domains = [target.host]
        guard !target.isIPAddress else { return domains }
        var rest = Substring(target.host)
        while let dot = rest.firstIndex(of: ".") {
            rest = rest[rest.index(after: dot)...]
            if !rest.isEmpty { domains.append(String(rest)) }
        }
        return domains
    }
}
