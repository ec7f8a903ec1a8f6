import Hummingbird

/// What httpbin reports about a request body: `data`, `form`, `files` and `json`.
struct RequestBodyInfo: Sendable {
    /// The raw body as text (or a base64 `data:` URL) unless it was a form.
    var data: String = ""
    /// Fields of an urlencoded or multipart form.
    var form = MultiDict()
    /// Files of a multipart form, each rendered as text or a base64 `data:` URL.
    var files = MultiDict()
    /// The body parsed as JSON, or `.null`.
    var json: JSONValue = .null

    /// Collects and interprets the body of `request`.
    ///
    /// - Throws: ``HTTPBinError`` with status 400 for a malformed multipart body, or Hummingbird's
    ///   413 error when the body is larger than the context allows.
    static func read(from request: Request, context: some RequestContext) async throws -> RequestBodyInfo {
        let buffer = try await request.body.collect(upTo: context.maxUploadSize)
        let bytes = Array(buffer.readableBytesView)
        let contentType = request.headers[.contentType].map { HeaderParameters($0) }
        return try Self(bytes: bytes, contentType: contentType)
    }

    init(bytes: [UInt8], contentType: HeaderParameters?) throws(HTTPBinError) {
        switch contentType?.value {
        case "application/x-www-form-urlencoded":
            // Form bodies are consumed by the form parser, so `data` stays empty as in httpbin.
            self.form = MultiDict(urlEncoded: Substring(decoding: bytes, as: UTF8.self))
        case "multipart/form-data":
            let parts: [MultipartParser.Part]
            do {
                parts = try MultipartParser.parse(bytes, boundary: contentType?.parameters["boundary"] ?? "")
            } catch {
                throw HTTPBinError(.badRequest, "Invalid multipart/form-data body")
            }
            for part in parts {
                if part.filename != nil {
                    let type = part.contentType ?? "application/octet-stream"
                    self.files.append(part.name, UTF8Text.jsonSafe(Array(part.body), contentType: type))
                } else {
                    self.form.append(part.name, String(decoding: part.body, as: UTF8.self))
                }
            }
        default:
            self.data = UTF8Text.jsonSafe(bytes)
            if UTF8Text.decode(bytes) != nil {
                self.json = JSONParser.parse(bytes) ?? .null
            }
        }
    }
}
