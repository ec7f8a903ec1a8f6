import Foundation
import HTTPTypes

/// What the rules need to know about a stored response.
///
/// The cache keeps one of these per stored response (per variant, RFC 9111 §4.1) and hands it to the
/// functions of ``CacheRules`` that decide about reuse, validation and updating.
struct StoredResponseInfo: Sendable {
    /// The stored head (status and header fields), as ``CacheRules/storedHead(_:shared:)`` made it.
    var response: HTTPResponse
    /// When the request that got it was sent (`request_time`, RFC 9111 §4.2.3).
    var requestTime: Date
    /// When its head arrived (`response_time`, RFC 9111 §4.2.3).
    var responseTime: Date
    /// The method of the request that got it.
    var requestMethod: HTTPRequest.Method
    /// The request's field values for each field the response's Vary names, as sent (name lowercased -> values
    /// joined by ", "; a name the request lacked maps to nil).
    var varyingRequestFields: [String: String?]
}

/// The decisions of an HTTP response cache: what to store, when to reuse, how to validate and update (RFC 9111,
/// with the stale-content extensions of RFC 5861).
///
/// Every function is pure: the cache itself owns storage, clocks and the network, and asks these rules. `shared`
/// selects the rules of a shared cache (a gateway serving many users) rather than those of a private cache (one
/// client's own cache). Nothing here traps, whatever the fields say.
enum CacheRules {
    /// The most `Vary` field names a stored response may nominate.
    ///
    /// A `Vary` naming more (a server listing 1,000 fields, say) would cost time and memory on every lookup for
    /// no benefit, so such a response is not stored and never matches (see ``mayStore(_:for:shared:)``).
    static let varyLimit = 64

    /// Whether a response may be stored (RFC 9111 §3).
    ///
    /// Stored are only final responses to `GET` (a response to `HEAD` is not kept as an entry) whose status the
    /// cache understands: the final codes RFC 9110 §15 defines, less 206 (partial content is not stored) and 304
    /// (it updates entries, §4.3.4), since "a recipient MUST NOT cache a response with an unrecognized status
    /// code" (RFC 9110 §15). `no-store` in the request or the response forbids storing, except that a response's
    /// `no-store` is ignored when it also has `must-understand`, whose status is understood here (§5.2.2.3). A
    /// shared cache stores no `private` response (a `private="…"` one it stores without the named fields, see
    /// ``storedHead(_:shared:)``) and, for a request with `Authorization`, only a response with `must-revalidate`,
    /// `public` or `s-maxage` (§3.5). `Vary: *` could never match (§4.1), and a `Vary` naming more than
    /// ``varyLimit`` fields is refused as a guard against `Vary` of 1,000 fields; neither is stored. Last, the
    /// response must have one of `public`, `private` (private cache only), `Expires`, `max-age`, `s-maxage`
    /// (shared cache only) or a heuristically cacheable status (RFC 9110 §15.1).
    ///
    /// - Parameters:
    ///   - response: The response head as received.
    ///   - request: The request it answers.
    ///   - shared: Whether the cache is shared.
    /// - Returns: `true` when the response may be stored.
    static func mayStore(_ response: HTTPResponse, for request: HTTPRequest, shared: Bool) -> Bool {
        let status = response.status.code
        guard request.method == .get, Self.understoodStatuses.contains(status) else { return false }
        let requestDirectives = CacheControl(request.headerFields)
        let directives = CacheControl(response.headerFields)
        guard !requestDirectives.noStore, !directives.noStore || directives.mustUnderstand else { return false }
        if shared {
            guard !directives.isPrivate else { return false }
            if request.headerFields.contains(.authorization) {
                guard directives.mustRevalidate || directives.isPublic || directives.sharedMaxAge != nil else {
                    return false
                }
            }
        }
        let vary = Self.varyNames(of: response)
        guard !vary.wildcard, vary.names.count <= Self.varyLimit else { return false }
        return directives.isPublic
            || (!shared && (directives.isPrivate || !directives.privateFields.isEmpty))
            || response.headerFields.contains(.expires)
            || directives.maxAge != nil
            || (shared && directives.sharedMaxAge != nil)
            || Self.heuristicallyCacheableStatuses.contains(status)
    }

    /// The head of `response` as the cache stores it (RFC 9111 §3.1).
    ///
    /// Removed are the fields that concern one connection or one proxy (RFC 9110 §7.6.1, RFC 9111 §3.1):
    /// `Connection` and every field it names, `Keep-Alive`, `Proxy-Connection`, `TE`, `Transfer-Encoding`,
    /// `Upgrade`, `Proxy-Authenticate`, `Proxy-Authorization` and `Proxy-Authentication-Info`. A shared cache also
    /// removes the fields named by `private="…"` (§5.2.2.7). Fields named by `no-cache="…"` are kept: a response
    /// with them must be validated before reuse (see ``reuse(of:for:now:shared:)``).
    ///
    /// - Parameters:
    ///   - response: The response head as received.
    ///   - shared: Whether the cache is shared.
    /// - Returns: The head to store.
    static func storedHead(_ response: HTTPResponse, shared: Bool) -> HTTPResponse {
        var removed = Self.connectionScopedNames(of: response.headerFields)
        if shared {
            removed.formUnion(CacheControl(response.headerFields).privateFields)
        }
        var head = response
        head.headerFields.removeAll { removed.contains($0.name.canonicalName) }
        return head
    }

    /// The request's values of the fields `response`'s `Vary` names (RFC 9111 §4.1).
    ///
    /// Each name listed in all `Vary` lines, lowercased and deduplicated, maps to the request's combined value (its
    /// lines joined with ", "), or to `nil` when the request lacks the field. `*` is not a field name and is left
    /// out; at most the first ``varyLimit`` names are kept (a response naming more is not stored).
    ///
    /// - Parameters:
    ///   - request: The request that got `response`.
    ///   - response: The response whose `Vary` nominates the fields.
    /// - Returns: The values to keep in ``StoredResponseInfo/varyingRequestFields``.
    static func varyingRequestFields(of request: HTTPRequest, for response: HTTPResponse) -> [String: String?] {
        let names = Self.varyNames(of: response).names.prefix(Self.varyLimit)
        var result: [String: String?] = [:]
        for name in names { result[name] = .some(nil) }
        let values = Self.combinedValues(of: request.headerFields, named: Set(names))
        for (name, value) in values { result[name] = .some(value) }
        return result
    }

    /// Whether `request` selects the variant `stored` is (RFC 9111 §4.1).
    ///
    /// A response with `Vary: *` (or naming more than ``varyLimit`` fields) never matches. Otherwise each field
    /// the stored `Vary` names must have the same value in `request` as in the request that got the stored
    /// response, after this normalisation only: whitespace around the value and around its commas is removed
    /// (commas inside quoted strings are left alone), and several lines are combined with ", ". Values are then
    /// compared exactly: RFC 9111 allows case-normalisation only where a field's definition says its values are
    /// case-insensitive, which these rules do not know field by field. A field absent from one request matches only
    /// when it is absent from the other too. A name the stored values do not record does not match.
    ///
    /// - Parameters:
    ///   - stored: The stored response.
    ///   - request: The request being answered.
    /// - Returns: `true` when the stored response may be used for `request` as far as `Vary` goes.
    static func matchesVariant(_ stored: StoredResponseInfo, request: HTTPRequest) -> Bool {
        let vary = Self.varyNames(of: stored.response)
        guard !vary.wildcard, vary.names.count <= Self.varyLimit else { return false }
        let presented = Self.combinedValues(of: request.headerFields, named: Set(vary.names))
        for name in vary.names {
            guard let recorded = stored.varyingRequestFields[name] else { return false }
            if recorded.map(Self.normalizedListValue) != presented[name].map(Self.normalizedListValue) {
                return false
            }
        }
        return true
    }

    /// The status codes a cache may store when the response says nothing else (RFC 9110 §15.1).
    static let heuristicallyCacheableStatuses: Set<Int> = [200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501]

    /// The final status codes RFC 9110 §15 defines, less 206 and 304, which are not stored, and the deprecated
    /// 305 and unused 306.
    static let understoodStatuses: Set<Int> = Set([200, 201, 202, 203, 204, 205, 300, 301, 302, 303, 307, 308])
        .union(400...417).union([421, 422, 426]).union(500...505)

    /// Field names that never outlive one connection or one proxy (RFC 9110 §7.6.1, RFC 9111 §3.1).
    static let hopByHopNames: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "te", "transfer-encoding", "upgrade", "proxy-authenticate",
        "proxy-authorization", "proxy-authentication-info",
    ]

    /// The hop-by-hop names and those `Connection` lists, lowercased.
    static func connectionScopedNames(of fields: HTTPFields) -> Set<String> {
        Self.hopByHopNames.union(Self.listMembers(fields[values: .connection]).map { $0.lowercased() })
    }

    /// The names `Vary` lists, lowercased, deduplicated, in order; and whether one of them is `*`.
    static func varyNames(of response: HTTPResponse) -> (wildcard: Bool, names: [String]) {
        var wildcard = false
        var seen: Set<String> = []
        var names: [String] = []
        for member in Self.listMembers(response.headerFields[values: .vary]) {
            let name = member.lowercased()
            if name == "*" {
                wildcard = true
            } else if seen.insert(name).inserted {
                names.append(name)
            }
        }
        return (wildcard, names)
    }

    /// The members of a list field's lines (RFC 9110 §5.6.1), trimmed, empty ones left out.
    static func listMembers(_ lines: [String]) -> [Substring] {
        lines.flatMap { $0.split(separator: ",") }.map(CacheControl.trimmed).filter { !$0.isEmpty }
    }

    /// One HTTP-date field, when every line of it is a valid HTTP-date and they agree (RFC 9110 §5.6.7).
    static func date(_ name: HTTPField.Name, in fields: HTTPFields, now: Date) -> Date? {
        var result: Date?
        for line in fields[values: name] {
            guard let date = Self.httpDate(line, now: now), result == nil || result == date else { return nil }
            result = date
        }
        return result
    }

    /// An HTTP-date, surrounding whitespace allowed.
    static func httpDate(_ text: String, now: Date) -> Date? {
        RetryAfter.date(from: String(CacheControl.trimmed(Substring(text))), now: now)
    }

    /// The combined value of each field of `fields` whose lowercased name is in `names`.
    private static func combinedValues(of fields: HTTPFields, named names: Set<String>) -> [String: String] {
        var result: [String: String] = [:]
        guard !names.isEmpty else { return result }
        for field in fields where names.contains(field.name.canonicalName) {
            let name = field.name.canonicalName
            result[name] = result[name].map { "\($0), \(field.value)" } ?? field.value
        }
        return result
    }

    /// `value` trimmed, with the whitespace around each comma outside quoted strings removed.
    private static func normalizedListValue(_ value: String) -> String {
        var output: [UInt8] = []
        var inQuotes = false
        var escaped = false
        var afterComma = false
        for byte in CacheControl.trimmed(Substring(value)).utf8 {
            if inQuotes {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inQuotes = false
                }
                output.append(byte)
                continue
            }
            if CacheControl.isWhitespace(byte) {
                if !afterComma { output.append(byte) }
                continue
            }
            if byte == UInt8(ascii: ",") {
                while let last = output.last, CacheControl.isWhitespace(last) { output.removeLast() }
                afterComma = true
            } else {
                afterComma = false
                inQuotes = byte == UInt8(ascii: "\"")
            }
            output.append(byte)
        }
        return String(decoding: output, as: UTF8.self)
    }
}
