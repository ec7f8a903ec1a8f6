import Foundation
import HTTPTypes
import NIOCore

extension MultipartFormData {
    /// Appends `data` as a part named `name`, optionally as a file with a file name and MIME type.
    ///
    /// The part's headers are `Content-Disposition: form-data; name="…"` (with `; filename="…"` when
    /// `fileName` is given) and, when `mimeType` is given, `Content-Type`. Names and file names are escaped
    /// as browsers escape them (see ``contentDisposition(name:fileName:)``); non-ASCII characters are sent as
    /// UTF-8.
    ///
    /// ```swift
    /// var form = MultipartFormData()
    /// form.append(Data("Kite".utf8), withName: "name")
    /// form.append(Data("a,b\n".utf8), withName: "table", fileName: "table.csv", mimeType: "text/csv")
    /// ```
    ///
    /// - Parameters:
    ///   - data: The part's bytes.
    ///   - name: The form field's name.
    ///   - fileName: The file name to send, which makes the part a file; `nil` for a plain field.
    ///   - mimeType: The part's `Content-Type`; `nil` for none.
    public mutating func append(_ data: Data, withName name: String, fileName: String? = nil, mimeType: String? = nil) {
        self.add(
            Part(
                headers: Self.partHeaders(name: name, fileName: fileName, mimeType: mimeType),
                body: .data(data),
                label: Self.label(name: name)
            )
        )
    }

    /// Appends `data` as a part with exactly the given header fields, in their order.
    ///
    /// A `multipart/form-data` part needs a `Content-Disposition: form-data; name="…"` field; build its
    /// value with ``contentDisposition(name:fileName:)`` so that names are escaped. Header fields cannot
    /// hold CR or LF (swift-http-types replaces them), so no header can end the part early.
    ///
    /// ```swift
    /// var headers = HTTPFields()
    /// headers[.contentDisposition] = MultipartFormData.contentDisposition(name: "meta", fileName: "meta.json")
    /// headers[.contentType] = "application/json"
    /// headers[HTTPField.Name("X-Checksum")!] = "abc123"
    /// var form = MultipartFormData()
    /// form.append(Data("{}".utf8), headers: headers)
    /// ```
    ///
    /// - Parameters:
    ///   - data: The part's bytes.
    ///   - headers: The part's header fields.
    public mutating func append(_ data: Data, headers: HTTPFields) {
        self.add(
            Part(headers: headers, body: .data(data), label: Self.label(headers: headers, index: self.parts.count))
        )
    }

    /// Appends the file at `fileURL` as a file part named `name`.
    ///
    /// The file is checked now but read only when the form is encoded or sent, in chunks. When `fileName`
    /// is `nil` it is the URL's last path component; when `mimeType` is `nil` it is inferred from the file
    /// name's extension with ``mimeType(forPathExtension:)``.
    ///
    /// Appending never throws. If the URL is not a file URL, the file is missing or unreachable, is a
    /// directory, is not a regular file (so its size is unknown), cannot be opened for reading, or has no
    /// name or extension to infer from, the part is left out and the first such failure is kept in
    /// ``appendError``, to be thrown when the form is encoded or sent.
    ///
    /// ```swift
    /// var form = MultipartFormData()
    /// form.append(URL(fileURLWithPath: "/tmp/photo.jpg"), withName: "photo")  // photo.jpg, image/jpeg
    /// form.append(URL(fileURLWithPath: "/tmp/upload-1"), withName: "doc", fileName: "doc.pdf")  // application/pdf
    /// ```
    ///
    /// - Parameters:
    ///   - fileURL: A `file:` URL of a regular file.
    ///   - name: The form field's name.
    ///   - fileName: The file name to send; `nil` to use the URL's last path component.
    ///   - mimeType: The part's `Content-Type`; `nil` to infer it from the file name's extension.
    public mutating func append(
        _ fileURL: URL,
        withName name: String,
        fileName: String? = nil,
        mimeType: String? = nil
    ) {
        let label = Self.label(name: name)
        let source: FileSource
        switch Self.checkFile(fileURL, partLabel: label) {
        case .success(let checked): source = checked
        case .failure(let error): return self.record(error)
        }
        let resolved: (fileName: String, mimeType: String)
        switch Self.resolveFileName(fileName, mimeType: mimeType, for: fileURL, partLabel: label) {
        case .success(let names): resolved = names
        case .failure(let error): return self.record(error)
        }
        self.add(
            Part(
                headers: Self.partHeaders(name: name, fileName: resolved.fileName, mimeType: resolved.mimeType),
                body: .file(source),
                label: label
            )
        )
    }

    /// Appends the file at `fileURL` as a part with exactly the given header fields.
    ///
    /// The file is checked as by the file-URL `append(_:withName:fileName:mimeType:)` (nothing is inferred, as the
    /// headers are given) and read only when the form is encoded or sent.
    ///
    /// ```swift
    /// var headers = HTTPFields()
    /// headers[.contentDisposition] = MultipartFormData.contentDisposition(name: "log", fileName: "app.log")
    /// headers[.contentType] = "text/plain; charset=utf-8"
    /// var form = MultipartFormData()
    /// form.append(URL(fileURLWithPath: "/var/log/app.log"), headers: headers)
    /// ```
    ///
    /// - Parameters:
    ///   - fileURL: A `file:` URL of a regular file.
    ///   - headers: The part's header fields.
    public mutating func append(_ fileURL: URL, headers: HTTPFields) {
        let label = Self.label(headers: headers, index: self.parts.count)
        switch Self.checkFile(fileURL, partLabel: label) {
        case .success(let source):
            self.add(Part(headers: headers, body: .file(source), label: label))
        case .failure(let error):
            self.record(error)
        }
    }

    /// Appends an async sequence of byte chunks of a known total length as a part named `name`.
    ///
    /// The sequence is iterated once, when the form is sent, and must produce exactly `length` bytes;
    /// fewer or more make the upload fail. A form with a stream part can be sent once and cannot be
    /// encoded with ``encode()`` or ``writeEncodedData(to:)``.
    ///
    /// ```swift
    /// let chunks = [Data("hello ".utf8), Data("world".utf8)]
    /// let stream = AsyncStream<Data> { continuation in
    ///     for chunk in chunks { continuation.yield(chunk) }
    ///     continuation.finish()
    /// }
    /// var form = MultipartFormData()
    /// form.append(stream, withLength: 11, name: "greeting", fileName: "greeting.txt", mimeType: "text/plain")
    /// ```
    ///
    /// - Parameters:
    ///   - stream: The part's bytes, in chunks of any `DataProtocol` type such as `Data` or `[UInt8]`.
    ///   - length: The number of bytes `stream` produces.
    ///   - name: The form field's name.
    ///   - fileName: The file name to send; `nil` for a plain field.
    ///   - mimeType: The part's `Content-Type`; `nil` for none.
    public mutating func append<Chunks: AsyncSequence & Sendable>(
        _ stream: Chunks,
        withLength length: Int64,
        name: String,
        fileName: String? = nil,
        mimeType: String? = nil
    ) where Chunks.Element: DataProtocol {
        self.appendStream(
            stream,
            length: length,
            headers: Self.partHeaders(name: name, fileName: fileName, mimeType: mimeType),
            label: Self.label(name: name)
        )
    }

    /// Appends an async sequence of byte chunks of a known total length as a part with exactly the given
    /// header fields.
    ///
    /// The sequence is iterated once, when the form is sent, and must produce exactly `length` bytes;
    /// fewer or more make the upload fail. A negative `length` is recorded in ``appendError``.
    ///
    /// ```swift
    /// let stream = AsyncStream<[UInt8]> { continuation in
    ///     continuation.yield([1, 2, 3])
    ///     continuation.finish()
    /// }
    /// var headers = HTTPFields()
    /// headers[.contentDisposition] = MultipartFormData.contentDisposition(name: "blob", fileName: "blob.bin")
    /// var form = MultipartFormData()
    /// form.append(stream, withLength: 3, headers: headers)
    /// ```
    ///
    /// - Parameters:
    ///   - stream: The part's bytes, in chunks of any `DataProtocol` type.
    ///   - length: The number of bytes `stream` produces.
    ///   - headers: The part's header fields.
    public mutating func append<Chunks: AsyncSequence & Sendable>(
        _ stream: Chunks,
        withLength length: Int64,
        headers: HTTPFields
    ) where Chunks.Element: DataProtocol {
        self.appendStream(
            stream,
            length: length,
            headers: headers,
            label: Self.label(headers: headers, index: self.parts.count)
        )
    }

    private mutating func appendStream<Chunks: AsyncSequence & Sendable>(
        _ stream: Chunks,
        length: Int64,
        headers: HTTPFields,
        label: String
    ) where Chunks.Element: DataProtocol {
        guard length >= 0 else {
            return self.record(
                Failure.error(
                    .streamLengthInvalid,
                    "stream part \(label) was appended with length \(length); a length cannot be negative"
                )
            )
        }
        let makeNext: @Sendable () -> (() async throws -> ByteBuffer?) = {
            var iterator = stream.makeAsyncIterator()
            return {
                guard let element = try await iterator.next() else { return nil }
                var buffer = ByteBuffer()
                buffer.writeBytes(element)
                return buffer
            }
        }
        let source = StreamSource(length: length, makeNext: makeNext, claim: StreamClaim())
        self.add(Part(headers: headers, body: .stream(source), label: label))
    }

    /// Appends `part` unless the form would then be longer than `Int64.max` bytes, which only absurd
    /// stream lengths or sparse files can reach; that is recorded as a failure instead.
    private mutating func add(_ part: Part) {
        let segments = self.segments(of: part, at: self.parts.count)
        var total = self.partsLength
        var overflow = false
        for length in segments.map(\.length) + [self.closeDelimiterLength] {
            let (sum, didOverflow) = total.addingReportingOverflow(length)
            total = sum
            overflow = overflow || didOverflow
        }
        guard !overflow else {
            return self.record(
                Failure.error(
                    .formTooLarge,
                    "part \(part.label) would make the multipart form longer than \(Int64.max) bytes"
                )
            )
        }
        self.partsLength = total - self.closeDelimiterLength
        self.parts.append(part)
    }

    /// A `Content-Disposition` value for a form field: `form-data; name="…"`, with `; filename="…"` when
    /// `fileName` is given.
    ///
    /// Names and file names are escaped as browsers escape them (the WHATWG multipart/form-data encoding,
    /// RFC 7578 section 2): `"` becomes `%22`, CR `%0D` and LF `%0A`; any other control character, which a
    /// header cannot carry, becomes `%` and two uppercase hex digits. Backslashes and `%` are kept, as
    /// browsers keep them. Non-ASCII characters are kept as UTF-8 (RFC 7578 section 4.2). A name can
    /// therefore neither end the quoted string nor add a header line.
    ///
    /// ```swift
    /// MultipartFormData.contentDisposition(name: "file", fileName: "a\"b.txt")
    /// // form-data; name="file"; filename="a%22b.txt"
    /// ```
    ///
    /// - Parameters:
    ///   - name: The form field's name.
    ///   - fileName: The file name, or `nil` for a plain field.
    /// - Returns: The header value.
    public static func contentDisposition(name: String, fileName: String? = nil) -> String {
        var value = "form-data; name=\"\(Self.escapeParameterValue(name))\""
        if let fileName {
            value += "; filename=\"\(Self.escapeParameterValue(fileName))\""
        }
        return value
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    /// `value` with `"`, CR, LF and other control characters except tab percent-encoded.
    static func escapeParameterValue(_ value: String) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(value.utf8.count)
        for byte in value.utf8 {
            let mustEscape = byte == UInt8(ascii: "\"") || byte == 0x7F || (byte < 0x20 && byte != 0x09)
            if mustEscape {
                bytes.append(UInt8(ascii: "%"))
                bytes.append(Self.hexDigits[Int(byte >> 4)])
                bytes.append(Self.hexDigits[Int(byte & 0x0F)])
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `Content-Disposition` and, when there is a MIME type, `Content-Type`.
    static func partHeaders(name: String, fileName: String?, mimeType: String?) -> HTTPFields {
        var headers = HTTPFields()
        headers[.contentDisposition] = Self.contentDisposition(name: name, fileName: fileName)
        if let mimeType {
            headers[.contentType] = mimeType
        }
        return headers
    }

    /// How messages name a part appended with a name: the name in quotes.
    static func label(name: String) -> String {
        "\"\(name)\""
    }

    /// How messages name a part appended with headers: the `name` parameter of its `Content-Disposition`
    /// in quotes, or its position such as `#3`.
    static func label(headers: HTTPFields, index: Int) -> String {
        if let disposition = headers[.contentDisposition] {
            for parameter in disposition.split(separator: ";") {
                let trimmed = parameter.trimmingCharacters(in: .whitespaces)
                guard trimmed.lowercased().hasPrefix("name=") else { continue }
                let value = trimmed.dropFirst("name=".count)
                let unquoted = value.hasPrefix("\"") && value.hasSuffix("\"") && value.count >= 2
                return "\"\(unquoted ? value.dropFirst().dropLast() : value)\""
            }
        }
        return "#\(index + 1)"
    }
}
