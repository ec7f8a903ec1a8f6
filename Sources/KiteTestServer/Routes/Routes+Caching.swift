import Foundation
import Hummingbird

/// Caching and response-header endpoints: `/cache`, `/cache/{n}`, `/etag/{etag}` and
/// `/response-headers`.
extension Router<HTTPBinRequestContext> {
    func addCachingRoutes() {
        self.route("/cache") { request, context in
            if request.headers[.ifModifiedSince] != nil || request.headers[.ifNoneMatch] != nil {
                return StatusResponses.response(for: 304)
            }
            let info = RequestInfo(request: request, context: context)
            let entityTag = UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
            return .json(
                info.json(.url, .args, .headers, .origin),
                headers: [.lastModified: HTTPDate.string(), .eTag: entityTag]
            )
        }
        self.route("/cache/:n") { request, context in
            let seconds = try context.count("n")
            let info = RequestInfo(request: request, context: context)
            return .json(
                info.json(.url, .args, .headers, .origin),
                headers: [.cacheControl: "public, max-age=\(seconds)"]
            )
        }
        self.route("/etag/:etag") { request, context in
            let entityTag = try context.text("etag")
            var headers: HTTPFields = [:]
            try headers.appendValidated(name: "ETag", value: entityTag)
            let ifNoneMatch = request.headers[.ifNoneMatch].map(EntityTags.parse) ?? []
            let ifMatch = request.headers[.ifMatch].map(EntityTags.parse) ?? []
            if !ifNoneMatch.isEmpty {
                if ifNoneMatch.contains(entityTag) || ifNoneMatch.contains("*") {
                    return .empty(status: .notModified, headers: headers)
                }
            } else if !ifMatch.isEmpty, !ifMatch.contains(entityTag), !ifMatch.contains("*") {
                return StatusResponses.response(for: 412)
            }
            let info = RequestInfo(request: request, context: context)
            return .json(info.json(.url, .args, .headers, .origin), headers: headers)
        }
        self.route("/response-headers", methods: [.get, .post]) { request, context in
            try Self.responseHeaders(RequestInfo(request: request, context: context))
        }
    }

    /// `/response-headers`: every query pair becomes a response header, and the body lists all the
    /// response headers, including the body's own Content-Length.
    private static func responseHeaders(_ info: RequestInfo) throws(HTTPBinError) -> Response {
        var extra: HTTPFields = [:]
        for (name, value) in info.args.pairs {
            let lowered = name.lowercased()
            guard lowered != "content-length", lowered != "transfer-encoding" else {
                throw HTTPBinError(.badRequest, "\(name) cannot be set through /response-headers")
            }
            try extra.appendValidated(name: name, value: value)
        }
        var headers: HTTPFields = [.contentType: "application/json"]
        headers.append(contentsOf: extra)
        // The body includes its own length, which changes with the number of digits: iterate
        // until it is stable.
        var length = 0
        var body = ByteBuffer()
        for _ in 0..<10 {
            var listed = headers
            listed[.contentLength] = String(length)
            body = Self.headersDocument(listed).byteBuffer()
            if body.readableBytes == length {
                break
            }
            length = body.readableBytes
        }
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: body))
    }

    /// The JSON object of `headers`: one string per name, or an array for repeated names.
    private static func headersDocument(_ headers: HTTPFields) -> JSONValue {
        var grouped: [String: [String]] = [:]
        var spelling: [String: String] = [:]
        for field in headers {
            let key = field.name.canonicalName
            spelling[key] = spelling[key] ?? field.name.rawName
            grouped[key, default: []].append(field.value)
        }
        var members: [String: JSONValue] = [:]
        for (key, values) in grouped {
            let name = spelling[key] ?? key
            members[name] = values.count == 1 ? .string(values[0]) : .array(values.map(JSONValue.string))
        }
        return .object(members)
    }
}
