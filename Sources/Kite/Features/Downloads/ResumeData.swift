import Foundation
import HTTPTypes

/// What it takes to resume a download: an opaque, versioned token of plain JSON that survives a
/// process restart. Credentials (`Authorization`, `Cookie`, `Proxy-Authorization`) are never stored
/// in it; the resumed request gets them from the session or a request modifier.
struct ResumeData: Codable, Sendable, Equatable {
    static let currentVersion = 1

    var version = ResumeData.currentVersion
    /// The URL that answered.
    var url: String
    /// The request's header fields as name/value pairs, without credentials and range fields.
    var headers: [[String]]
    /// The strong `ETag` the bytes belong to.
    var entityTag: String?
    /// The `Last-Modified` the bytes belong to.
    var lastModified: String?
    /// The partial file.
    var partialFilePath: String
    /// Bytes in the partial file.
    var bytes: Int64

    /// The token for a response that can be resumed, or `nil`: it must be a `GET` answered with 200
    /// or 206, not content-encoded, with a strong `ETag` or a `Last-Modified`, and not
    /// `Accept-Ranges: none`.
    init?(response: HTTPResponse, request: HTTPRequest?, method: HTTPRequest.Method, partialFileURL: URL) {
        guard method == .get, response.status.code == 200 || response.status.code == 206,
            let request, let url = Redirect.url(of: request)
        else { return nil }
        let fields = response.headerFields
        if let encoding = fields[.contentEncoding], encoding.lowercased() != "identity" { return nil }
        if fields[.acceptRanges]?.lowercased() == "none" { return nil }
        let strongETag = fields[.eTag].flatMap { $0.hasPrefix("W/") ? nil : $0 }
        guard strongETag != nil || fields[.lastModified] != nil else { return nil }
        let excluded: Set<HTTPField.Name> = Set(Redirect.credentialFields + [.range, .ifRange, .acceptEncoding])
        self.url = url.absoluteString
        self.headers = request.headerFields.filter { !excluded.contains($0.name) }.map { [$0.name.rawName, $0.value] }
        self.entityTag = strongETag
        self.lastModified = fields[.lastModified]
        self.partialFilePath = partialFileURL.path
        self.bytes = 0
    }

    var partialFileURL: URL? {
        URL(fileURLWithPath: self.partialFilePath)
    }

    func with(bytes: Int64) -> ResumeData {
        var copy = self
        copy.bytes = bytes
        return copy
    }

    func encoded() -> Data? {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try? encoder.encode(self)
    }

    /// Reads a token.
    ///
    /// - Throws: ``KiteError`` with code `resumeFailed` when the data is not a Kite resume token of
    ///   a version this Kite understands.
    static func decode(_ data: Data) throws(KiteError) -> ResumeData {
        let token: ResumeData
        do {
            token = try JSONDecoder().decode(ResumeData.self, from: data)
        } catch {
            throw KiteError(
                code: .resumeFailed,
                message: "the resume data is not a Kite resume token (\(data.count) bytes)",
                underlyingError: error
            )
        }
        guard token.version == Self.currentVersion else {
            throw KiteError(
                code: .resumeFailed,
                message: "the resume data has version \(token.version); this Kite reads version \(Self.currentVersion)"
            )
        }
        // Resuming appends to the partial file, and removes it when it cannot continue: a token that was
        // changed or corrupted must not name another file.
        let partial = token.partialFilePath
        guard partial.hasPrefix("/"), !partial.utf8.contains(0),
            Self.isPartialFileName(URL(fileURLWithPath: partial).lastPathComponent)
        else {
            throw KiteError(
                code: .resumeFailed,
                message: "the resume data names \"\(partial.escapedForMessage)\", which is not a partial file Kite made"
            )
        }
        guard token.bytes >= 0 else {
            throw KiteError(code: .resumeFailed, message: "the resume data counts \(token.bytes) bytes")
        }
        return token
    }

    /// Whether `name` is one Kite gives partial files: `<UUID>.partial` in its temporary folder, or
    /// `.<name>.<UUID>.kite-partial` beside a destination (``DownloadFiles``).
    static func isPartialFileName(_ name: String) -> Bool {
        func endsWithUUID(_ stem: Substring) -> Bool {
            stem.count >= 36 && UUID(uuidString: String(stem.suffix(36))) != nil
        }
        if name.hasSuffix(".partial"), !name.hasPrefix(".") {
            let stem = name.dropLast(".partial".count)
            return stem.count == 36 && endsWithUUID(stem)
        }
        if name.hasPrefix("."), name.hasSuffix(".kite-partial") {
            let stem = name.dropLast(".kite-partial".count)
            return stem.count >= 38 && stem.dropLast(36).hasSuffix(".") && endsWithUUID(stem)
        }
        return false
    }

    /// The draft that asks for the rest: the saved URL and fields plus `Range` and `If-Range`.
    func makeDraft() throws(KiteError) -> RequestDraft {
        guard let url = URL(string: self.url) else {
            throw KiteError(code: .resumeFailed, message: "the resume data's URL \"\(self.url)\" is not valid")
        }
        var fields = HTTPFields()
        for pair in self.headers where pair.count == 2 {
            if let field = try? HTTPField(validatingName: pair[0], value: pair[1]) {
                fields.append(field)
            }
        }
        fields[.range] = "bytes=\(self.bytes)-"
        fields[.ifRange] = self.entityTag ?? self.lastModified
        fields[.acceptEncoding] = "identity"
        return RequestDraft(method: .get, url: url, headerFields: fields)
    }
}
