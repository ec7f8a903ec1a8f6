import Foundation

// The parser is hand-written. Packages checked first:
// - async-http-client 1.37.0 `HTTPClient.Cookie(header:defaultDomain:)`: public, but it drops a cookie without
//   `=` and one with an empty name (RFC 6265bis §5.6 keeps both), strips the value's double quotes (§5.6 keeps
//   them), defaults the path to `/` instead of the request's default-path (§5.1.4) and cannot tell a missing
//   `Domain` from `Domain=<host>` (so no host-only flag), has no SameSite, and reads `Expires` with three fixed
//   `strptime` formats rather than the §5.1.1 token algorithm, so `Wed, 09-Jun-2021 10:18:14 GMT` (the common
//   Netscape form with a four-digit year) and dates without a weekday fail, two-digit years follow POSIX
//   (69 is 1969) rather than §5.1.1 (69 is 2069), and impossible dates (31 Feb) are accepted.
// - Hummingbird 2.28.1 `Cookie`: a server's type; its parser is internal, reads one date format only, and
//   the Kite target does not depend on Hummingbird.
// - Foundation's `HTTPCookie.cookies(withResponseHeaderFields:for:)`: RFC 2965-era, lives in
//   FoundationNetworking on Linux, and has no host-only flag or SameSite there.
// None applies the storage model (§5.7: host-only, public suffixes, prefixes, Secure from http).

extension Cookie {
    /// Parses a `Set-Cookie` header's value as a cookie jar would store it (RFC 6265bis §5.6 and §5.7).
    ///
    /// The rules, in short:
    /// - The name and value are split at the first `=`; without one the name is empty. A header holding a
    ///   control character other than tab, or whose name and value together pass 4096 bytes, is refused.
    /// - `Max-Age` wins over `Expires`; `Max-Age=0` or a negative one, or a past `Expires`, gives an expiry
    ///   in the past, which deletes a stored cookie of the same name, domain and path. Expiry dates are
    ///   capped at 400 days from `now`. `Expires` is read with the §5.1.1 algorithm, which takes the
    ///   formats servers send: `Sun, 06 Nov 1994 08:49:37 GMT`, `Sunday, 06-Nov-94 08:49:37 GMT`,
    ///   `Sun Nov  6 08:49:37 1994` and `Sun, 06-Nov-1994 08:49:37 GMT`.
    /// - Without `Domain` the cookie is host-only. A `Domain` the request's host does not domain-match is
    ///   refused (a parent of the host is fine, a sibling or a subdomain is not); so is a public suffix
    ///   (`Domain=co.uk`), unless it is the host itself, which then gets a host-only cookie. An IP-address
    ///   host only ever gets host-only cookies.
    /// - Without a valid `Path` the path is the request path up to its last `/` (`/a/b` for `/a/b/c`).
    /// - `Secure` cookies from an `http` URL are refused, except from a loopback host (`localhost`,
    ///   `*.localhost`, `127.0.0.0/8`, `::1`), which Kite treats as secure as browsers do. A `__Secure-`
    ///   name needs `Secure`; a `__Host-` name needs `Secure`, no `Domain` and `Path=/`.
    /// - `HttpOnly` is kept; `SameSite` is read case-insensitively, and an unknown value leaves it `nil`.
    ///
    /// ```swift
    /// let url = URL(string: "https://www.example.com/docs/intro")!
    /// let cookie = Cookie(setCookie: "lang=en; Domain=.example.com; Max-Age=86400", for: url)
    /// print(cookie?.domain as Any, cookie?.isHostOnly as Any, cookie?.path as Any)
    /// // Optional("example.com") Optional(false) Optional("/docs")
    ///
    /// print(Cookie(setCookie: "a=1; Domain=other.com", for: url) as Any)  // nil: not this host's domain
    /// ```
    ///
    /// - Parameters:
    ///   - setCookie: One `Set-Cookie` header value.
    ///   - url: The URL of the request whose response carried it.
    ///   - now: The current time, for `Max-Age` and the creation time.
    public init?(setCookie: String, for url: URL, now: Date = Date()) {
        guard let target = Target(url), case .success(let cookie) = Self.parse(setCookie, from: target, now: now)
        else { return nil }
        self = cookie
    }

    /// Why a `Set-Cookie` header was not stored.
    enum Refusal: Error, Equatable {
        /// It holds a control character other than tab.
        case controlCharacter
        /// Its name and value together are longer than 4096 bytes.
        case tooLarge
        /// Both its name and its value are empty.
        case empty
        /// Its `Domain` holds a character outside ASCII.
        case nonASCIIDomain
        /// Its `Domain` is a public suffix other than the host.
        case publicSuffix
        /// The request's host does not domain-match its `Domain`.
        case domainMismatch
        /// It is `Secure` but came over an insecure scheme.
        case secureFromInsecureOrigin
        /// Its name breaks the rules of the `__Secure-` or `__Host-` prefix.
        case prefixViolated
    }

    /// The longest a cookie's name and value may be together, in bytes (RFC 6265bis §5.6).
    static let maximumNameValueLength = 4096

    /// Attribute values longer than this many bytes are ignored (RFC 6265bis §5.6).
    static let maximumAttributeValueLength = 1024

    /// The longest a cookie may live, from when it is set (RFC 6265bis §5.6.1, §5.6.2): 400 days.
    static let maximumAge: TimeInterval = 400 * 24 * 60 * 60

    /// Parses `header` as sent in a response to `target` (RFC 6265bis §5.6 and the parts of §5.7 that
    /// need no cookie store).
    static func parse(_ header: String, from target: Target, now: Date) -> Result<Cookie, Refusal> {
        let bytes = Array(header.utf8)
        // §5.6: control characters other than HTAB refuse the header.
        if bytes.contains(where: { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }) { return .failure(.controlCharacter) }

        let semicolon = bytes.firstIndex(of: UInt8(ascii: ";")) ?? bytes.endIndex
        let pair = bytes[..<semicolon]
        let name: ArraySlice<UInt8>
        let value: ArraySlice<UInt8>
        if let equals = pair.firstIndex(of: UInt8(ascii: "=")) {
            name = pair[..<equals].trimmingWhitespace()
            value = pair[(equals + 1)...].trimmingWhitespace()
        } else {
            name = []
            value = pair.trimmingWhitespace()
        }
        guard name.count + value.count <= Self.maximumNameValueLength else { return .failure(.tooLarge) }
        guard !name.isEmpty || !value.isEmpty else { return .failure(.empty) }
        let cookieName = String(decoding: name, as: UTF8.self)
        let cookieValue = String(decoding: value, as: UTF8.self)

        let attributes = Attributes(bytes[semicolon...], target: target, now: now)
        return Self.store(name: cookieName, value: cookieValue, attributes: attributes, target: target, now: now)
    }

    /// The storage model (RFC 6265bis §5.7) for a parsed cookie, up to the steps that need the store.
    private static func store(
        name: String,
        value: String,
        attributes: Attributes,
        target: Target,
        now: Date
    ) -> Result<Cookie, Refusal> {
        // A nameless cookie may not look like a prefixed one.
        if name.isEmpty, value.hasCaseInsensitivePrefix("__Secure-") || value.hasCaseInsensitivePrefix("__Host-") {
            return .failure(.prefixViolated)
        }
        // The domain: public suffixes, then domain-match, else host-only.
        var domainAttribute = attributes.domain ?? ""
        guard domainAttribute.utf8.allSatisfy({ $0 > 0 && $0 < 0x80 }) else { return .failure(.nonASCIIDomain) }
        if PublicSuffixes.contains(domainAttribute) {
            guard domainAttribute == target.host else { return .failure(.publicSuffix) }
            domainAttribute = ""
        }
        let domain: String
        let isHostOnly: Bool
        if domainAttribute.isEmpty {
            domain = target.host
            isHostOnly = true
        } else {
            guard Self.domainMatches(target.host, domainAttribute, hostIsIPAddress: target.isIPAddress) else {
                return .failure(.domainMismatch)
            }
            domain = domainAttribute
            // An IP address only matches itself, so a cookie for it is host-only whatever its `Domain` said.
            isHostOnly = target.isIPAddress
        }
        // Secure only from a secure origin.
        if attributes.isSecure, !target.isSecure { return .failure(.secureFromInsecureOrigin) }
        // The `__Secure-` and `__Host-` prefixes.
        if name.hasCaseInsensitivePrefix("__Secure-"), !attributes.isSecure { return .failure(.prefixViolated) }
        if name.hasCaseInsensitivePrefix("__Host-") {
            guard attributes.isSecure, isHostOnly, attributes.path == "/" else { return .failure(.prefixViolated) }
        }
        let cookie = Cookie(
            name: name,
            value: value,
            domain: domain,
            path: attributes.path ?? target.defaultPath,
            isHostOnly: isHostOnly,
            expires: attributes.maxAgeExpiry ?? attributes.expires,
            isSecure: attributes.isSecure,
            isHTTPOnly: attributes.isHTTPOnly,
            sameSite: attributes.sameSite,
            creationTime: now
        )
        return .success(cookie)
    }

    /// The attributes of a `Set-Cookie` header, the last of each name winning (RFC 6265bis §5.6).
    private struct Attributes {
        var expires: Date?
        var maxAgeExpiry: Date?
        /// The last `Domain`, without its leading dot and lower-cased; may be empty.
        var domain: String?
        /// The last `Path`; the default-path when its value was empty or did not start with `/`.
        var path: String?
        var isSecure = false
        var isHTTPOnly = false
        var sameSite: SameSite?

        init(_ unparsed: ArraySlice<UInt8>, target: Target, now: Date) {
            for attribute in unparsed.split(separator: UInt8(ascii: ";"), omittingEmptySubsequences: true) {
                let nameBytes: ArraySlice<UInt8>
                let valueBytes: ArraySlice<UInt8>
                if let equals = attribute.firstIndex(of: UInt8(ascii: "=")) {
                    nameBytes = attribute[..<equals].trimmingWhitespace()
                    valueBytes = attribute[(equals + 1)...].trimmingWhitespace()
                } else {
                    nameBytes = attribute.trimmingWhitespace()
                    valueBytes = []
                }
                guard valueBytes.count <= Cookie.maximumAttributeValueLength else { continue }
                let value = String(decoding: valueBytes, as: UTF8.self)
                switch String(decoding: nameBytes, as: UTF8.self).lowercased() {
                case "expires":
                    guard let date = CookieDate.parse(valueBytes) else { continue }
                    self.expires = min(date, now.addingTimeInterval(Cookie.maximumAge))
                case "max-age":
                    guard let seconds = Self.maxAge(valueBytes) else { continue }
                    self.maxAgeExpiry =
                        seconds <= 0 ? Date.distantPast : now.addingTimeInterval(min(seconds, Cookie.maximumAge))
                case "domain":
                    // §5.6.3: one leading dot is dropped, then the name is lower-cased.
                    self.domain = (value.hasPrefix(".") ? String(value.dropFirst()) : value).lowercased()
                case "path":
                    self.path = value.hasPrefix("/") ? value : target.defaultPath
                case "secure":
                    self.isSecure = true
                case "httponly":
                    self.isHTTPOnly = true
                case "samesite":
                    self.sameSite = SameSite.allCases.first { $0.rawValue.lowercased() == value.lowercased() }
                default:
                    continue
                }
            }
        }

        /// RFC 6265bis §5.6.2: digits with an optional leading `-`, as seconds; `nil` when invalid.
        /// Values too large for an `Int` saturate (they are capped at 400 days anyway).
        private static func maxAge(_ bytes: ArraySlice<UInt8>) -> TimeInterval? {
            var digits = bytes[...]
            let negative = digits.first == UInt8(ascii: "-")
            if negative { digits = digits.dropFirst() }
            guard !digits.isEmpty, digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
                return nil
            }
            var seconds: TimeInterval = 0
            for digit in digits {
                seconds = Swift.min(seconds * 10 + TimeInterval(digit - UInt8(ascii: "0")), 1e15)
            }
            return negative ? -seconds : seconds
        }
    }

    /// A request URL as cookies see it: canonical host, path, and whether the connection is secure.
    struct Target: Equatable {
        /// The host, lower-cased, without the brackets of an IPv6 literal.
        var host: String
        /// The percent-encoded path; `/` when the URL has none.
        var path: String
        /// Whether `Secure` cookies may be set and sent: `https` and `wss`, or a loopback host.
        var isSecure: Bool
        /// Whether the host is an IP address (which only ever gets host-only cookies).
        var isIPAddress: Bool

        /// The URL's target, or `nil` when it has no host.
        init?(_ url: URL) {
            guard let rawHost = url.host(percentEncoded: true), !rawHost.isEmpty else { return nil }
            let host = Cookie.canonicalDomain(rawHost)
            guard !host.isEmpty else { return nil }
            let path = url.path(percentEncoded: true)
            self.host = host
            self.path = path.hasPrefix("/") ? path : "/"
            self.isIPAddress = Self.isIPAddress(host)
            let scheme = url.scheme?.lowercased() ?? ""
            self.isSecure = scheme == "https" || scheme == "wss" || Self.isLoopback(host, isIPAddress: self.isIPAddress)
        }

        /// RFC 6265bis §5.1.4: the request path up to, not including, its last `/`; `/` when that would
        /// leave nothing.
        var defaultPath: String {
            let utf8 = self.path.utf8
            guard let lastSlash = utf8.lastIndex(of: UInt8(ascii: "/")), lastSlash != utf8.startIndex else {
                return "/"
            }
            return String(self.path[..<lastSlash])
        }

        /// Whether `host` is an IP address: an IPv6 literal (it has a `:`), or a name whose last label is a
        /// number, which URL parsers read as IPv4 (WHATWG URL's "ends in a number").
        static func isIPAddress(_ host: String) -> Bool {
            if host.contains(":") { return true }
            let lastLabel = Array((host.split(separator: ".", omittingEmptySubsequences: false).last ?? "").utf8)
            if lastLabel.isEmpty { return false }
            if lastLabel.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) { return true }
            guard lastLabel.count > 2, lastLabel[0] == UInt8(ascii: "0"), lastLabel[1] | 0x20 == UInt8(ascii: "x")
            else { return false }
            return lastLabel.dropFirst(2).allSatisfy { Character(Unicode.Scalar($0)).isHexDigit }
        }

        /// `localhost`, a name under `.localhost`, an address in `127.0.0.0/8`, or `::1`.
        static func isLoopback(_ host: String, isIPAddress: Bool) -> Bool {
            if isIPAddress { return host.hasPrefix("127.") || host == "::1" || host == "0:0:0:0:0:0:0:1" }
            return host == "localhost" || host.hasSuffix(".localhost")
        }
    }
}

/// The cookie date algorithm of RFC 6265bis §5.1.1.
enum CookieDate {
    /// The UTC date in `bytes`, or `nil` when the algorithm fails (a part missing or out of range, a year
    /// before 1601, or a day the month does not have).
    static func parse<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Date? {
        var time: (hour: Int, minute: Int, second: Int)?
        var dayOfMonth: Int?
        var month: Int?
        var year: Int?
        for token in bytes.split(whereSeparator: Self.isDelimiter) {
            let token = Array(token)
            if time == nil, let parsed = Self.time(token) {
                time = parsed
            } else if dayOfMonth == nil, let parsed = Self.number(token, digits: 1...2) {
                dayOfMonth = parsed
            } else if month == nil, let parsed = Self.month(token) {
                month = parsed
            } else if year == nil, let parsed = Self.number(token, digits: 2...4) {
                year = parsed
            }
        }
        guard let time, let dayOfMonth, let month, var year else { return nil }
        if (70...99).contains(year) { year += 1900 } else if (0...69).contains(year) { year += 2000 }
        guard (1...31).contains(dayOfMonth), year >= 1601, time.hour <= 23, time.minute <= 59, time.second <= 59,
            dayOfMonth <= CivilCalendar.daysIn(month: month, year: year)
        else { return nil }
        let days = CivilCalendar.daysSinceEpoch(year: year, month: month, day: dayOfMonth)
        let seconds = days * 86_400 + time.hour * 3_600 + time.minute * 60 + time.second
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    /// `%x09 / %x20-2F / %x3B-40 / %x5B-60 / %x7B-7E`.
    private static func isDelimiter(_ byte: UInt8) -> Bool {
        byte == 0x09 || (0x20...0x2F).contains(byte) || (0x3B...0x40).contains(byte) || (0x5B...0x60).contains(byte)
            || (0x7B...0x7E).contains(byte)
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    /// Leading digits of `token` (their count in `digits`), followed by the end or a non-digit.
    private static func number(_ token: [UInt8], digits: ClosedRange<Int>) -> Int? {
        let count = token.prefix(while: Self.isDigit).count
        guard digits.contains(count) else { return nil }
        return token.prefix(count).reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
    }

    /// `hms-time [ non-digit *OCTET ]`, each field one or two digits.
    private static func time(_ token: [UInt8]) -> (hour: Int, minute: Int, second: Int)? {
        var fields: [Int] = []
        var index = token.startIndex
        for position in 0..<3 {
            let start = index
            while index < token.endIndex, index - start < 2, Self.isDigit(token[index]) { index += 1 }
            guard index > start else { return nil }
            fields.append(token[start..<index].reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) })
            if position < 2 {
                guard index < token.endIndex, token[index] == UInt8(ascii: ":") else { return nil }
                index += 1
            } else if index < token.endIndex, Self.isDigit(token[index]) {
                return nil
            }
        }
        return (fields[0], fields[1], fields[2])
    }

    private static let months: [[UInt8]] = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ].map { Array($0.utf8) }

    /// The month (1 to 12) `token` starts with, case-insensitively.
    private static func month(_ token: [UInt8]) -> Int? {
        guard token.count >= 3 else { return nil }
        let prefix = token.prefix(3).map { $0 | 0x20 }
        return Self.months.firstIndex { $0.elementsEqual(prefix) }.map { $0 + 1 }
    }

}

extension ArraySlice<UInt8> {
    /// The slice without leading and trailing spaces and tabs.
    fileprivate func trimmingWhitespace() -> ArraySlice<UInt8> {
        let isWhitespace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 }
        guard let first = self.firstIndex(where: { !isWhitespace($0) }),
            let last = self.lastIndex(where: { !isWhitespace($0) })
        else { return [] }
        return self[first...last]
    }
}

extension String {
    /// Whether the string starts with `prefix`, ignoring ASCII case.
    fileprivate func hasCaseInsensitivePrefix(_ prefix: String) -> Bool {
        let utf8 = self.utf8
        guard utf8.count >= prefix.utf8.count else { return false }
        return zip(utf8, prefix.utf8).allSatisfy { Self.asciiLowercase($0) == Self.asciiLowercase($1) }
    }

    private static func asciiLowercase(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
    }
}
