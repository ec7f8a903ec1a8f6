import Foundation
import Hummingbird
import NIOConcurrencyHelpers

/// Kite-only routes for cache tests (httpbin has none that count requests):
/// - `/cached/{key}`: every query pair becomes a response header (`Cache-Control`, `ETag`, `Last-Modified`,
///   `Vary`, `Expires`, `Age`, `Set-Cookie`, …), except the options, which start with `_`:
///   `_status=S` answers status `S`; `_then=S` answers `S` from the second request for the key on;
///   `_size=N` sends a body of `N` bytes `k` instead of JSON. A request whose `If-None-Match` lists the response's
///   `ETag`, or whose `If-Modified-Since` equals its `Last-Modified`, gets `304` with those headers and no body.
///   The JSON body: `{"key": …, "count": n, "headers": {lowercased request field: value}}`, `n` counting the
///   requests for the key (the conditional ones too).
/// - `/cached-count/{key}`: `{"count": n}` for the key, without counting itself.
extension Router<HTTPBinRequestContext> {
    func addCacheProbeRoutes() {
        self.route("/cached/:key", methods: Self.anyMethod) { request, context in
            let key = try context.text("key")
            let info = RequestInfo(request: request, context: context)
            let count = cacheProbeCounts.withLockedValue { counts in
                counts[key, default: 0] += 1
                return counts[key, default: 0]
            }
            var headers: HTTPFields = [:]
            for (name, value) in info.args.pairs where !name.hasPrefix("_") {
                try headers.appendValidated(name: name, value: value)
            }
            let ifNoneMatch = request.headers[values: .ifNoneMatch].flatMap(EntityTags.parse)
            if let entityTag = headers[.eTag].flatMap({ EntityTags.parse($0).first }),
                ifNoneMatch.contains(entityTag) || ifNoneMatch.contains("*")
            {
                return .empty(status: .notModified, headers: headers)
            }
            if ifNoneMatch.isEmpty, let lastModified = headers[.lastModified],
                request.headers[.ifModifiedSince] == lastModified
            {
                return .empty(status: .notModified, headers: headers)
            }
            var status = try info.args.number("_status", default: 200)
            if count > 1, let then = info.args.option("_then"), let code = Int(then) {
                status = code
            }
            if let size = info.args.option("_size").flatMap(Int.init) {
                headers[.contentType] = "application/octet-stream"
                let body = ByteBuffer(repeating: UInt8(ascii: "k"), count: min(size, 64 * 1024 * 1024))
                return Response(
                    status: HTTPResponse.Status(code: status),
                    headers: headers,
                    body: ResponseBody(byteBuffer: body)
                )
            }
            var seen: [String: JSONValue] = [:]
            for field in request.headers {
                let name = field.name.canonicalName
                if case .string(let existing) = seen[name] {
                    seen[name] = .string(existing + ", " + field.value)
                } else {
                    seen[name] = .string(field.value)
                }
            }
            let body: JSONValue = [
                "key": .string(key),
                "count": .integer(Int64(count)),
                "headers": .object(seen),
            ]
            return .json(body, status: HTTPResponse.Status(code: status), headers: headers)
        }
        self.route("/cached-count/:key") { _, context in
            let key = try context.text("key")
            let count = cacheProbeCounts.withLockedValue { $0[key, default: 0] }
            return .json(["count": .integer(Int64(count))])
        }
    }
}

/// Requests seen per `/cached` key.
private let cacheProbeCounts = NIOLockedValueBox<[String: Int]>([:])
