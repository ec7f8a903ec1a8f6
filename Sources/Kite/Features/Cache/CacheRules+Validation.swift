import Foundation
import HTTPTypes

extension CacheRules {
    /// The precondition fields of a request that validates stored responses (RFC 9111 §4.3.1).
    ///
    /// `If-None-Match` lists every entity tag of the stored responses, strong and weak, as sent, comma-separated and
    /// without repeats ("MUST send the relevant entity tags"); a value of `ETag` that is not a valid entity-tag
    /// (RFC 9110 §8.8.3, such as an unquoted `abc`) is left out, as it would corrupt the list. When exactly one
    /// response is validated, `If-Modified-Since` carries its valid `Last-Modified` ("SHOULD send the Last-Modified
    /// value"); when it has none, its valid `Date`, which RFC 9110 §13.1.3 names as the usual other source. The
    /// date is sent as an IMF-fixdate (RFC 9110 §5.6.7: a sender generates that form), whatever form it arrived in.
    /// The fields are empty when there is no validator.
    ///
    /// - Parameter stored: The stored responses being validated: the variants that could answer the request.
    /// - Returns: `If-None-Match` and `If-Modified-Since` as applicable.
    static func conditionalFields(for stored: [StoredResponseInfo]) -> HTTPFields {
        var fields = HTTPFields()
        var tags: [String] = []
        for entry in stored {
            for tag in Self.entityTags(of: entry.response) where !tags.contains(tag.text) {
                tags.append(tag.text)
            }
        }
        if !tags.isEmpty {
            fields[.ifNoneMatch] = tags.joined(separator: ", ")
        }
        if stored.count == 1, let entry = stored.first {
            let headers = entry.response.headerFields
            let date =
                Self.date(.lastModified, in: headers, now: entry.responseTime)
                ?? Self.date(.date, in: headers, now: entry.responseTime)
            if let date, let text = Self.imfFixdate(date) {
                fields[.ifModifiedSince] = text
            }
        }
        return fields
    }

    /// The stored head updated with the fields of a 304 (Not Modified) response (RFC 9111 §3.2, §4.3.4).
    ///
    /// Each field of the 304 replaces every stored line of its name ("add each header field in the provided
    /// response to the stored response, replacing field values that are already present"), with §3.2's
    /// exceptions: the fields excepted from storage in §3.1 (the 304's hop-by-hop fields and those its
    /// `Connection` names) are dropped, `Content-Length` is never updated, and neither are the fields the stored
    /// content depends on or that are processed on receipt, which §3.2 lets a cache omit: `Content-Encoding`
    /// (Kite may store content decoded), `Content-Type`, `Content-Range` and `Transfer-Encoding`. The status stays
    /// the stored one. A shared cache passes the result through ``storedHead(_:shared:)`` again, so that the fields
    /// a new `private="…"` names are removed too.
    ///
    /// - Parameters:
    ///   - stored: The stored head.
    ///   - notModified: The 304 response that validated it.
    /// - Returns: The head to store from now on.
    static func updatedHead(_ stored: HTTPResponse, with notModified: HTTPResponse) -> HTTPResponse {
        let kept = Self.connectionScopedNames(of: notModified.headerFields).union(Self.neverUpdatedNames)
        var replacements: [HTTPField.Name: [HTTPField]] = [:]
        var order: [HTTPField.Name] = []
        for field in notModified.headerFields where !kept.contains(field.name.canonicalName) {
            if replacements[field.name] == nil { order.append(field.name) }
            replacements[field.name, default: []].append(field)
        }
        var head = stored
        for name in order {
            head.headerFields[fields: name] = replacements[name] ?? []
        }
        return head
    }

    /// Which stored responses a 304 (Not Modified) response updates (RFC 9111 §4.3.4).
    ///
    /// `stored` is the initial set: the responses that could have been chosen for the request, fresh or not. The
    /// first rule that applies:
    /// - The 304 has a strong entity tag: every stored response whose entity tag matches one of them by strong
    ///   comparison (RFC 9110 §8.8.3.2); none when no stored response does ("MUST NOT use the new response to
    ///   update any stored responses").
    /// - The 304 has only weak validators (a weak entity tag or `Last-Modified`, which is treated as weak, RFC 9110
    ///   §8.8.2.2): of the stored responses that agree with every validator both carry (entity tags by weak
    ///   comparison, dates exactly) and share at least one, the most recent (latest response time).
    /// - The 304 has no validator: the one stored response, when the set holds exactly one and it has no validator
    ///   either.
    ///
    /// - Parameters:
    ///   - stored: The candidate stored responses.
    ///   - notModified: The 304 response.
    /// - Returns: Indices into `stored` of the responses to update with ``updatedHead(_:with:)``.
    static func selectForUpdate(_ stored: [StoredResponseInfo], notModified: HTTPResponse) -> [Int] {
        let tags = Self.entityTags(of: notModified)
        let strong = tags.filter { !$0.isWeak }
        if !strong.isEmpty {
            return stored.indices.filter { index in
                Self.entityTags(of: stored[index].response).contains { tag in
                    !tag.isWeak && strong.contains { $0.opaqueTag == tag.opaqueTag }
                }
            }
        }
        // Whether the 304's Last-Modified is valid does not depend on the time an RFC 850 year is read against.
        let hasLastModified =
            Self.date(.lastModified, in: notModified.headerFields, now: Date(timeIntervalSince1970: 0)) != nil
        if !tags.isEmpty || hasLastModified {
            var best: Int?
            for index in stored.indices where Self.agrees(stored[index], tags: tags, notModified: notModified) {
                if let current = best, stored[current].responseTime > stored[index].responseTime { continue }
                best = index
            }
            return best.map { [$0] } ?? []
        }
        guard stored.count == 1, let only = stored.first, Self.entityTags(of: only.response).isEmpty,
            Self.date(.lastModified, in: only.response.headerFields, now: only.responseTime) == nil
        else { return [] }
        return [0]
    }

    /// Fields a 304 never updates (RFC 9111 §3.2).
    static let neverUpdatedNames: Set<String> = [
        "content-length", "content-encoding", "transfer-encoding", "content-range", "content-type",
    ]

    /// An entity-tag (RFC 9110 §8.8.3).
    struct EntityTag: Equatable {
        /// The tag as sent, `W/` and quotes included.
        var text: String
        /// Whether it has the `W/` prefix.
        var isWeak: Bool
        /// The quoted part, quotes included.
        var opaqueTag: Substring

        /// Reads `text` as `[ W/ ] DQUOTE *etagc DQUOTE`; `nil` when it is anything else.
        init?(_ text: Substring) {
            let isWeak = text.hasPrefix("W/")
            let opaqueTag = isWeak ? text.dropFirst(2) : text
            let bytes = opaqueTag.utf8
            guard bytes.count >= 2, bytes.first == UInt8(ascii: "\""), bytes.last == UInt8(ascii: "\""),
                bytes.dropFirst().dropLast().allSatisfy({ $0 == 0x21 || (0x23...0x7E).contains($0) || $0 >= 0x80 })
            else { return nil }
            self.text = String(text)
            self.isWeak = isWeak
            self.opaqueTag = opaqueTag
        }
    }

    /// The valid entity tags of every `ETag` line of `response`.
    static func entityTags(of response: HTTPResponse) -> [EntityTag] {
        response.headerFields[values: .eTag].compactMap { EntityTag(CacheControl.trimmed(Substring($0))) }
    }

    /// Whether a stored response agrees with a 304's weak validators (RFC 9111 §4.3.4, second rule).
    private static func agrees(_ stored: StoredResponseInfo, tags: [EntityTag], notModified: HTTPResponse) -> Bool {
        var shared = false
        let storedTags = Self.entityTags(of: stored.response)
        if !tags.isEmpty && !storedTags.isEmpty {
            guard storedTags.contains(where: { tag in tags.contains { $0.opaqueTag == tag.opaqueTag } }) else {
                return false
            }
            shared = true
        }
        let storedDate = Self.date(.lastModified, in: stored.response.headerFields, now: stored.responseTime)
        let lastModified = Self.date(.lastModified, in: notModified.headerFields, now: stored.responseTime)
        if let lastModified, let storedDate {
            guard lastModified == storedDate else { return false }
            shared = true
        }
        return shared
    }

    private static let weekdays = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// `date` as an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`, RFC 9110 §5.6.7); `nil` outside years 0–9999.
    static func imfFixdate(_ date: Date) -> String? {
        let seconds = date.timeIntervalSince1970.rounded(.down)
        // Years 0 through 9999, which four digits can write.
        guard seconds >= -62_167_219_200, seconds < 253_402_300_800 else { return nil }
        // Int64, since the seconds of year 9999 do not fit a 32-bit Int (watchOS); days and seconds of a day do.
        let total = Int64(seconds)
        let wholeDays = total >= 0 ? total / 86_400 : (total - 86_399) / 86_400
        let secondOfDay = Int(total - wholeDays * 86_400)
        let days = Int(wholeDays)
        let (year, month, day) = CivilCalendar.civilDate(daysSinceEpoch: days)
        let weekday = Self.weekdays[((days % 7) + 7) % 7]
        func pad(_ value: Int, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        let time = "\(pad(secondOfDay / 3600, 2)):\(pad(secondOfDay % 3600 / 60, 2)):\(pad(secondOfDay % 60, 2))"
        return "\(weekday), \(pad(day, 2)) \(Self.months[month - 1]) \(pad(year, 4)) \(time) GMT"
    }
}
