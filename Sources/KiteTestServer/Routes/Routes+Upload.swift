import Hummingbird

/// `/upload` (POST and PUT): reads the body as a stream and reports its length and SHA-256.
///
/// The body is never collected, so it is not subject to the context's `maxUploadSize` and any
/// size works in constant memory. A `multipart/form-data` body is parsed while it arrives and each
/// part is reported with its headers, length and SHA-256:
///
/// ```json
/// {"kind": "raw", "length": 3, "sha256": "…", "contentLength": 3, "contentType": "text/plain"}
/// {"kind": "multipart", "length": 310, "sha256": "…", "contentLength": 310,
///  "contentType": "multipart/form-data; boundary=xyz", "boundary": "xyz",
///  "parts": [{"name": "file", "filename": "a.txt", "contentType": "text/plain",
///             "headers": {"Content-Disposition": "…", "Content-Type": "text/plain"},
///             "length": 5, "sha256": "…"}]}
/// ```
///
/// A multipart body that is malformed gets a 400 response with `{"error": "…"}`.
extension Router<HTTPBinRequestContext> {
    func addUploadRoutes() {
        self.route("/upload", methods: [.post, .put]) { request, _ in
            try await Self.upload(request)
        }
    }

    private static func upload(_ request: Request) async throws -> Response {
        let contentTypeHeader = request.headers[.contentType]
        let contentType = contentTypeHeader.map { HeaderParameters($0) }
        var summary: [String: JSONValue] = [
            "contentLength": request.headers[.contentLength].flatMap { Int64($0) }.map(JSONValue.integer) ?? .null,
            "contentType": contentTypeHeader.map(JSONValue.string) ?? .null,
        ]
        guard let contentType, contentType.value == "multipart/form-data" else {
            var digest = UploadDigest()
            for try await buffer in request.body {
                digest.update(buffer)
            }
            summary["kind"] = "raw"
            summary["length"] = .integer(Int64(digest.length))
            summary["sha256"] = .string(digest.hexDigest)
            return .json(.object(summary))
        }
        guard let boundary = contentType.parameters["boundary"], !boundary.isEmpty else {
            return Self.uploadError("multipart/form-data Content-Type has no boundary parameter")
        }
        let reader = MultipartUploadReader(boundary: boundary)
        var digest = UploadDigest()
        let parts: [MultipartUploadReader.Part]
        do {
            for try await buffer in request.body {
                digest.update(buffer)
                try reader.read(buffer)
            }
            parts = try reader.finish()
        } catch let failure as MultipartUploadReader.Failure {
            // Hummingbird reads and discards the rest of the body before the next request.
            return Self.uploadError(failure.message(boundary: boundary))
        }
        summary["kind"] = "multipart"
        summary["length"] = .integer(Int64(digest.length))
        summary["sha256"] = .string(digest.hexDigest)
        summary["boundary"] = .string(boundary)
        summary["parts"] = .array(parts.map(Self.json(for:)))
        return .json(.object(summary))
    }

    private static func json(for part: MultipartUploadReader.Part) -> JSONValue {
        let disposition = part.header("Content-Disposition").map { HeaderParameters($0) }
        var headers: [String: JSONValue] = [:]
        for (name, value) in part.headers {
            if case .string(let existing) = headers[name] {
                headers[name] = .string(existing + ", " + value)
            } else {
                headers[name] = .string(value)
            }
        }
        let filename = disposition.flatMap { $0.extendedValue("filename*") ?? $0.parameters["filename"] }
        return [
            "name": disposition?.parameters["name"].map(JSONValue.string) ?? .null,
            "filename": filename.map(JSONValue.string) ?? .null,
            "contentType": part.header("Content-Type").map(JSONValue.string) ?? .null,
            "headers": .object(headers),
            "length": .integer(Int64(part.digest.length)),
            "sha256": .string(part.digest.hexDigest),
        ]
    }

    private static func uploadError(_ message: String) -> Response {
        .json(["error": .string(message)], status: .badRequest)
    }
}

extension HeaderParameters {
    /// An RFC 8187 extended parameter such as `filename*=UTF-8''na%C3%AFve.txt`, decoded.
    ///
    /// Returns `nil` when the parameter is absent or not in UTF-8 or ISO-8859-1.
    func extendedValue(_ name: String) -> String? {
        guard let raw = self.parameters[name] else { return nil }
        let pieces = raw.split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false)
        guard pieces.count == 3 else { return nil }
        let encoded = pieces[2]
        switch pieces[0].lowercased() {
        case "utf-8":
            return UTF8Text.percentDecode(encoded, plusAsSpace: false)
        case "iso-8859-1":
            return Self.latin1(encoded)
        default:
            return nil
        }
    }

    /// Percent-decodes `encoded` into ISO-8859-1 text: each byte is the Unicode scalar of the same number.
    private static func latin1(_ encoded: Substring) -> String {
        var scalars = String.UnicodeScalarView()
        var utf8 = encoded.utf8[...]
        while let byte = utf8.popFirst() {
            if byte == UInt8(ascii: "%"), utf8.count >= 2,
                let high = UTF8Text.hexValue(utf8[utf8.startIndex]),
                let low = UTF8Text.hexValue(utf8[utf8.index(after: utf8.startIndex)])
            {
                scalars.append(Unicode.Scalar(high << 4 | low))
                utf8 = utf8.dropFirst(2)
            } else {
                scalars.append(Unicode.Scalar(byte))
            }
        }
        return String(scalars)
    }
}
