import Foundation
import HTTPTypes

@testable import KiteUnderFuzz

extension FuzzTarget {
    /// The input as header fields: one field per line, `Name: value`; lines that are not a valid field are skipped.
    /// A line without a colon is a `Cache-Control` value.
    static func fields(_ input: some Sequence<Substring>) -> HTTPFields {
        var fields = HTTPFields()
        for line in input {
            let parts = line.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            let (name, value) =
                parts.count == 2
                ? (String(parts[0]), String(parts[1].drop { $0 == " " }))
                : ("Cache-Control", String(line))
            guard let fieldName = HTTPField.Name(name), HTTPField.isValidValue(value) else { continue }
            fields.append(HTTPField(name: fieldName, value: value))
        }
        return fields
    }

    /// `Cache-Control` (RFC 9111 §5.2): every delta-seconds within 0...2147483648 (`max-stale` may be unbounded),
    /// the same directives on a second read, and the same directives when the lines come as one list.
    static func fuzzCacheControl(_ input: [UInt8]) {
        let lines = String(decoding: input, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        var fields = HTTPFields()
        for line in lines where HTTPField.isValidValue(String(line)) {
            fields.append(HTTPField(name: .cacheControl, value: String(line)))
        }
        let directives = CacheControl(fields)
        let limit = 2_147_483_648
        for (name, value) in [
            ("max-age", directives.maxAge), ("s-maxage", directives.sharedMaxAge), ("min-fresh", directives.minFresh),
            ("stale-while-revalidate", directives.staleWhileRevalidate), ("stale-if-error", directives.staleIfError),
        ] {
            if let value { require((0...limit).contains(value), "\(name)=\(value) from \(String(reflecting: lines))") }
        }
        if let maxStale = directives.maxStale { require(maxStale >= 0, "max-stale=\(maxStale)") }
        require(CacheControl(fields) == directives, "a second read of \(String(reflecting: lines)) differs")
        _ = CacheControl.pragmaNoCache(fields)
    }

    /// A response and the request that got it (the input's halves, split at the first NUL; the first byte picks the
    /// status): lifetime and age are finite and never negative, whatever the fields; a response stored for a request
    /// matches that same request unless its `Vary` can never match; the head as stored and as a `304` updates it
    /// keeps the status; the conditional fields are valid fields.
    static func fuzzCacheFreshness(_ input: [UInt8]) {
        guard let first = input.first else { return }
        let statuses = [200, 203, 204, 206, 300, 301, 304, 308, 404, 410, 500, 503, 999]
        let status = statuses[Int(first) % statuses.count]
        let rest = input.dropFirst()
        let split = rest.firstIndex(of: 0) ?? rest.endIndex
        let responseLines = String(decoding: rest[..<split], as: UTF8.self).split(separator: "\n")
        let requestLines = String(decoding: rest[split...].dropFirst(), as: UTF8.self).split(separator: "\n")
        let response = HTTPResponse(status: HTTPResponse.Status(code: status), headerFields: Self.fields(responseLines))
        var request = HTTPRequest(method: .get, scheme: "https", authority: "example.com", path: "/r")
        request.headerFields = Self.fields(requestLines)
        let requestTime = Date(timeIntervalSince1970: 1_795_000_000)
        let info = StoredResponseInfo(
            response: response,
            requestTime: requestTime,
            responseTime: requestTime.addingTimeInterval(Double(first % 4)),
            requestMethod: .get,
            varyingRequestFields: CacheRules.varyingRequestFields(of: request, for: response)
        )
        for shared in [false, true] {
            let lifetime = CacheRules.freshnessLifetime(of: info, shared: shared)
            require(lifetime.isFinite && lifetime >= 0, "a lifetime of \(lifetime) s")
            let age = CacheRules.currentAge(of: info, now: requestTime.addingTimeInterval(30))
            require(age.isFinite && age >= 0, "an age of \(age) s")
            _ = CacheRules.reuse(of: info, for: request, now: requestTime.addingTimeInterval(30), shared: shared)
            _ = CacheRules.staleIfErrorAllows(info, request: request, now: requestTime, shared: shared)
            let stored = CacheRules.storedHead(response, shared: shared)
            require(stored.status == response.status, "the stored head changed the status")
            if CacheRules.mayStore(response, for: request, shared: shared) {
                require(
                    CacheRules.matchesVariant(info, request: request),
                    "a storable response does not match the request that got it"
                )
            }
        }
        require(info.varyingRequestFields.count <= 64, "\(info.varyingRequestFields.count) varying fields kept")
        let updated = CacheRules.updatedHead(
            response,
            with: HTTPResponse(status: .notModified, headerFields: response.headerFields)
        )
        require(updated.status == response.status, "a 304 changed the stored status")
        for field in CacheRules.conditionalFields(for: [info]) {
            require(HTTPField.isValidValue(field.value), "an invalid conditional field \(field)")
        }
        _ = CacheRules.invalidatedURLs(
            request: HTTPRequest(method: .post, scheme: "https", authority: "example.com", path: "/r"),
            response: response,
            requestURL: URL(string: "https://example.com/r")!
        )
    }

    /// A disk cache entry's head file (`ID.head`): a damaged, foreign or hostile file is refused, never a trap, and a
    /// head it accepts is written back and read again as the same response.
    static func fuzzCacheEntry(_ input: [UInt8]) {
        guard let head = try? JSONDecoder().decode(DiskCacheStore.Head.self, from: Data(input)),
            let response = head.response
        else { return }
        require(response.bodyLength == head.bodyLength && head.bodyLength >= 0, "a negative body length was accepted")
        guard let data = try? JSONEncoder().encode(DiskCacheStore.Head(response, bodyLength: head.bodyLength)),
            let again = try? JSONDecoder().decode(DiskCacheStore.Head.self, from: data).response
        else {
            require(false, "an accepted head could not be written back and read: \(response)")
            return
        }
        require(again == response, "the head read back differs: \(again) against \(response)")
    }
}
