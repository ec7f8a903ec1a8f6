import Foundation
import HTTPTypes

extension MultipartFormData {
    /// The size of the chunks files are read in: 64 KiB.
    static let defaultChunkSize = 64 * 1024

    /// Encodes the whole form into memory.
    ///
    /// Meant for small forms: the result holds every part, files included (they are read now, in 64 KiB
    /// chunks). For large files use ``writeEncodedData(to:)``, or upload the form, which streams it. This
    /// call blocks while files are read.
    ///
    /// Stream parts cannot be encoded: their sequences are async and one-shot, so only an upload can send
    /// them; a form that has one throws instead of consuming it.
    ///
    /// ```swift
    /// var form = try MultipartFormData(boundary: "B")
    /// form.append(Data("value".utf8), withName: "a")
    /// let body = try form.encode()
    /// // --B\r\nContent-Disposition: form-data; name="a"\r\n\r\nvalue\r\n--B--\r\n
    /// ```
    ///
    /// - Returns: The encoded body, ``contentLength`` bytes long.
    /// - Throws: A ``KiteError`` with code ``KiteError/Code-swift.struct/multipartEncodingFailed``: the
    ///   ``appendError`` if an append failed; reason `streamPartsNotEncodable` if the form has a stream
    ///   part; `fileChanged` if a file's size changed since it was appended; `fileReadFailed` if a file
    ///   could not be read.
    public func encode() throws(KiteError) -> Data {
        var body = Data()
        body.reserveCapacity(Int(clamping: self.contentLength))
        try self.encodeSynchronously(chunkSize: Self.defaultChunkSize) { chunk throws(KiteError) in
            body.append(chunk)
        }
        return body
    }

    /// Writes the encoded form to a new file, without holding it in memory.
    ///
    /// Parts are written in order, files copied in 64 KiB chunks, so memory use does not grow with the
    /// form's size. The destination must not exist yet; it is created with permissions `0644`. When
    /// anything fails after it was created, the partly written file is removed. This call blocks while it
    /// reads and writes. Forms with stream parts cannot be written, for the same reason as in ``encode()``.
    ///
    /// ```swift
    /// var form = MultipartFormData()
    /// form.append(URL(fileURLWithPath: "/tmp/video.mp4"), withName: "video")
    /// try form.writeEncodedData(to: URL(fileURLWithPath: "/tmp/upload-body"))
    /// ```
    ///
    /// - Parameter fileURL: The `file:` URL of the file to create.
    /// - Throws: A ``KiteError`` with code ``KiteError/Code-swift.struct/multipartEncodingFailed`` and reason
    ///   `destinationNotFileURL`, `destinationExists`, `destinationNotCreatable` (such as a missing
    ///   folder) or `destinationWriteFailed` (such as a full disk), or any error ``encode()`` throws.
    public func writeEncodedData(to fileURL: URL) throws(KiteError) {
        guard fileURL.isFileURL else {
            throw Failure.error(
                .destinationNotFileURL,
                "cannot write the multipart form to \(fileURL.absoluteString): it is not a file URL",
                fileURL: fileURL
            )
        }
        try self.checkEncodable()
        let path = fileURL.path
        let descriptor: CInt
        switch SystemFile.createForWriting(path) {
        case .success(let created):
            descriptor = created
        case .failure(let error) where error.isAlreadyExists:
            throw Failure.error(
                .destinationExists,
                "cannot write the multipart form to \(path): a file already exists there",
                fileURL: fileURL,
                underlyingError: error.posixError
            )
        case .failure(let error):
            throw Failure.error(
                .destinationNotCreatable,
                "cannot write the multipart form to \(path): the file cannot be created (\(error))",
                fileURL: fileURL,
                underlyingError: error.posixError
            )
        }
        do {
            try self.writeEncodedData(toDescriptor: descriptor, destination: fileURL)
        } catch {
            SystemFile.close(descriptor)
            SystemFile.remove(path)
            throw error
        }
        if let error = SystemFile.close(descriptor) {
            SystemFile.remove(path)
            throw Self.writeFailure(fileURL, error)
        }
    }

    /// Writes the encoded form to the open file `descriptor`, whose file is `destination`.
    ///
    /// Neither closes nor removes the file; ``writeEncodedData(to:)`` does.
    func writeEncodedData(toDescriptor descriptor: CInt, destination: URL) throws(KiteError) {
        try self.encodeSynchronously(chunkSize: Self.defaultChunkSize) { chunk throws(KiteError) in
            let failure = chunk.withUnsafeBytes { SystemFile.write(descriptor, $0) }
            if let failure {
                throw Self.writeFailure(destination, failure)
            }
        }
    }

    private static func writeFailure(_ destination: URL, _ error: SystemFile.SystemError) -> KiteError {
        Failure.error(
            .destinationWriteFailed,
            "writing the multipart form to \(destination.path) failed (\(error))",
            fileURL: destination,
            underlyingError: error.posixError
        )
    }

    /// Throws ``appendError``, or an error when the form has a stream part.
    func checkEncodable() throws(KiteError) {
        if let appendError {
            throw appendError
        }
        if let stream = self.parts.first(where: \.isStream) {
            throw Self.streamNotEncodable(stream.label)
        }
    }

    private static func streamNotEncodable(_ label: String) -> KiteError {
        Failure.error(
            .streamPartsNotEncodable,
            "the multipart form has stream part \(label), which only an upload can send;"
                + " encode() and writeEncodedData(to:) need parts whose bytes can be read up front"
        )
    }

    /// Hands the encoded body to `sink` piece by piece, reading files in `chunkSize` chunks on this thread.
    func encodeSynchronously(chunkSize: Int, to sink: (Data) throws(KiteError) -> Void) throws(KiteError) {
        try self.checkEncodable()
        for segment in self.segments() {
            switch segment {
            case .bytes(let bytes):
                try sink(bytes)
            case .file(let file, let label):
                let descriptor = try Self.openFile(file, label: label)
                defer { SystemFile.close(descriptor) }
                var offset: Int64 = 0
                while offset < file.size {
                    let count = Int(min(Int64(chunkSize), file.size - offset))
                    var chunk = Data(count: count)
                    let result = chunk.withUnsafeMutableBytes { SystemFile.read(descriptor, into: $0, at: offset) }
                    try Self.checkRead(result, of: file, label: label, offset: offset, expected: count)
                    try sink(chunk)
                    offset += Int64(count)
                }
                try Self.checkFileEnds(descriptor, file: file, label: label)
            case .stream(_, let label):
                throw Self.streamNotEncodable(label)
            }
        }
    }
}

// MARK: - Layout

extension MultipartFormData {
    /// One piece of the encoded body, in order.
    enum Segment: Sendable {
        /// Boundaries, part headers and in-memory part bodies.
        case bytes(Data)
        case file(FileSource, label: String)
        case stream(StreamSource, label: String)

        var length: Int64 {
            switch self {
            case .bytes(let bytes): Int64(bytes.count)
            case .file(let file, _): file.size
            case .stream(let stream, _): stream.length
            }
        }
    }

    /// The encoded body as segments: each part's delimiter and headers, then its body; then the close
    /// delimiter. A form without parts is the close delimiter alone.
    func segments() -> [Segment] {
        guard !self.parts.isEmpty else {
            return [.bytes(Data(Self.dashes + Array(self.boundary.utf8) + Self.dashes + Self.crlf))]
        }
        var segments: [Segment] = []
        segments.reserveCapacity(self.parts.count * 2 + 1)
        for (index, part) in self.parts.enumerated() {
            segments += self.segments(of: part, at: index)
        }
        segments.append(.bytes(Data(Self.crlf + Self.dashes + Array(self.boundary.utf8) + Self.dashes + Self.crlf)))
        return segments
    }

    /// The segments of the part at `index`: its delimiter (with the CRLF that ends the previous part) and
    /// header lines as one segment, then its body unless that is empty.
    func segments(of part: Part, at index: Int) -> [Segment] {
        var head: [UInt8] = index == 0 ? [] : Self.crlf
        head += Self.dashes + Array(self.boundary.utf8) + Self.crlf
        for field in part.headers {
            head += field.name.rawName.utf8
            head += [UInt8(ascii: ":"), UInt8(ascii: " ")]
            field.withUnsafeBytesOfValue { head += $0 }
            head += Self.crlf
        }
        head += Self.crlf
        switch part.body {
        case .data(let data):
            return data.isEmpty ? [.bytes(Data(head))] : [.bytes(Data(head)), .bytes(data)]
        case .file(let file):
            return [.bytes(Data(head)), .file(file, label: part.label)]
        case .stream(let stream):
            return [.bytes(Data(head)), .stream(stream, label: part.label)]
        }
    }

    /// The length of `CRLF --boundary-- CRLF`, which ends a form with parts.
    var closeDelimiterLength: Int64 {
        Int64(self.boundary.utf8.count + 8)
    }

    /// The length of `--boundary-- CRLF`, the whole of a form without parts.
    var emptyFormLength: Int64 {
        Int64(self.boundary.utf8.count + 6)
    }

    private static let crlf: [UInt8] = [0x0D, 0x0A]
    private static let dashes: [UInt8] = [UInt8(ascii: "-"), UInt8(ascii: "-")]
}

// MARK: - Reading files

extension MultipartFormData {
    /// Opens a file part's file and checks that it still has the size it had when appended.
    static func openFile(_ file: FileSource, label: String) throws(KiteError) -> CInt {
        let descriptor: CInt
        switch SystemFile.openForReading(file.path) {
        case .success(let opened):
            descriptor = opened
        case .failure(let error):
            throw Self.readFailure(file, label: label, error, doing: "opened")
        }
        switch SystemFile.size(ofDescriptor: descriptor) {
        case .success(let size) where size == file.size:
            return descriptor
        case .success(let size):
            SystemFile.close(descriptor)
            throw Self.fileChanged(file, label: label, "it has \(size) bytes now")
        case .failure(let error):
            SystemFile.close(descriptor)
            throw Self.readFailure(file, label: label, error, doing: "inspected")
        }
    }

    /// Checks a read of `expected` bytes at `offset`: an error, or fewer bytes as the file ended early.
    static func checkRead(
        _ result: Result<Int, SystemFile.SystemError>,
        of file: FileSource,
        label: String,
        offset: Int64,
        expected: Int
    ) throws(KiteError) {
        switch result {
        case .success(let count) where count == expected:
            return
        case .success(let count):
            throw Self.fileChanged(file, label: label, "it ended after \(offset + Int64(count)) bytes")
        case .failure(let error):
            throw Self.readFailure(file, label: label, error, doing: "read")
        }
    }

    /// Checks that nothing follows the file's appended size, as when it grew while it was read.
    static func checkFileEnds(_ descriptor: CInt, file: FileSource, label: String) throws(KiteError) {
        var byte: UInt8 = 0
        let result = withUnsafeMutableBytes(of: &byte) { SystemFile.read(descriptor, into: $0, at: file.size) }
        switch result {
        case .success(0):
            return
        case .success:
            throw Self.fileChanged(file, label: label, "it has more bytes now")
        case .failure(let error):
            throw Self.readFailure(file, label: label, error, doing: "read")
        }
    }

    static func fileChanged(_ file: FileSource, label: String, _ detail: String) -> KiteError {
        Failure.error(
            .fileChanged,
            "file \(file.path) for \(file.role) changed since it was checked: it had \(file.size) bytes then,"
                + " \(detail); the body would not match its length",
            fileURL: file.url
        )
    }

    static func readFailure(
        _ file: FileSource,
        label: String,
        _ error: any Error,
        doing action: String
    ) -> KiteError {
        let underlying = (error as? SystemFile.SystemError)?.posixError ?? error
        return Failure.error(
            .fileReadFailed,
            "file \(file.path) for \(file.role) could not be \(action) (\(error))",
            fileURL: file.url,
            underlyingError: underlying
        )
    }
}
