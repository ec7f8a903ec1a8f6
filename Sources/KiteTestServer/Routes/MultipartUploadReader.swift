import Foundation
import MultipartKit
import NIOCore

/// Reads a `multipart/form-data` body piece by piece and digests each part without keeping it.
///
/// Pieces go to multipart-kit's streaming parser as they arrive; its callbacks report each part's
/// headers, body bytes and end, and the reader hashes the body bytes as they come. Memory stays
/// constant however large the parts are.
///
/// multipart-kit's parser looks at every byte on its own, which costs about a microsecond a byte
/// in a debug build (a 1 GiB upload would take many minutes), so the reader hands it only what
/// needs parsing. In its body state the parser passes every byte to `onBody` unchanged until the
/// delimiter `CRLF--boundary` (or the start of one at the end of the input) and stays in that
/// state; so while the reader knows the parser is in its body state it hashes the bytes before the
/// next possible delimiter itself. Everything else (delimiters, headers, preamble, epilogue) goes
/// through the parser. The reader knows the parser is in its body state right after it fed the
/// parser bytes without a CR and the last callback was `onBody`: such bytes can end in no other
/// state after that callback.
///
/// multipart-kit 4.7.1's parser has no "end of input" call: a body that stops in the middle of a
/// part is simply left unfinished, and a body without the boundary stays in the preamble. So
/// ``finish()`` probes the parser with a few bytes that every unfinished state reacts to (a
/// callback or a syntax error) while the epilogue after the closing delimiter ignores them.
///
/// ```swift
/// let reader = MultipartUploadReader(boundary: "xyz")
/// for try await buffer in request.body {
///     try reader.read(buffer)
/// }
/// let parts = try reader.finish()
/// ```
final class MultipartUploadReader {
    /// One part of the body, as far as it has been read.
    struct Part {
        /// Header fields in the order they came, names as sent.
        var headers: [(name: String, value: String)] = []
        /// The length and hash of the part's body.
        var digest = UploadDigest()

        /// The value of header `name` (compared case-insensitively), or `nil`.
        func header(_ name: String) -> String? {
            let lowered = name.lowercased()
            return self.headers.first { $0.name.lowercased() == lowered }?.value
        }
    }

    /// Why a body is not valid multipart.
    enum Failure: Error {
        /// The parser met bytes that do not fit the syntax, in the given range of body bytes.
        case syntax(Range<Int>)
        /// The delimiter never appeared.
        case boundaryNotFound
        /// The body ended before the closing delimiter.
        case truncated

        /// A sentence saying what was wrong, for the error response.
        func message(boundary: String) -> String {
            switch self {
            case .syntax(let range):
                return "Malformed multipart body: invalid delimiter line or part header in body bytes "
                    + "\(range.lowerBound)..<\(range.upperBound)"
            case .boundaryNotFound:
                return "Malformed multipart body: the delimiter --\(boundary) does not occur in the body"
            case .truncated:
                return "Malformed multipart body: it ends before the closing delimiter --\(boundary)--"
            }
        }
    }

    /// Bytes that make every parser state but the epilogue (and the preamble) call back or throw.
    ///
    /// NUL is not allowed in a header name and is not CR or LF; a header value swallows it, but then
    /// CR ends the value and the second NUL is not the LF that must follow.
    private static let probe: [UInt8] = [0x00, 0x0D, 0x00]

    private static let carriageReturn = UInt8(ascii: "\r")

    /// The most bytes without a CR fed to the parser at once while it may not be in a part body.
    private static let maximumStep = 64 * 1024

    private let parser: MultipartKit.MultipartParser
    /// `CRLF--boundary`, which ends a part body.
    private let delimiter: [UInt8]
    private let skipsBodyRuns: Bool
    private var current = Part()
    private var completed: [Part] = []
    private var bytesRead = 0
    private var probing = false
    private var callbacksWhileProbing = 0
    /// Whether the parser is known to be in its body state.
    private var inBody = false
    /// Whether the latest callback was `onBody`.
    private var lastCallbackWasBody = false
    /// How many bytes to feed next while the parser may be outside a part body.
    private var step = 1

    /// Creates a reader for a body whose Content-Type has `boundary` (which must not be empty).
    ///
    /// - Parameters:
    ///   - boundary: The `boundary` parameter of the Content-Type.
    ///   - skipsBodyRuns: Whether to hash part bodies without the parser where it is safe (the fast
    ///     path); turning it off gives the parser every byte, which tests compare against.
    init(boundary: String, skipsBodyRuns: Bool = true) {
        self.delimiter = Array("\r\n--\(boundary)".utf8)
        // The search for the delimiter below relies on its only CR being the first byte.
        self.skipsBodyRuns = skipsBodyRuns && !boundary.utf8.contains(Self.carriageReturn)
        self.parser = MultipartKit.MultipartParser(boundary: boundary)
        self.parser.onHeader = { [unowned self] name, value in
            self.receiveHeader(name: name, value: value)
        }
        self.parser.onBody = { [unowned self] buffer in
            self.receiveBody(buffer)
        }
        self.parser.onPartComplete = { [unowned self] in
            self.completePart()
        }
    }

    /// Parses the next piece of the body.
    ///
    /// - Throws: ``Failure/syntax(_:)`` when the piece does not fit the multipart syntax.
    func read(_ buffer: ByteBuffer) throws(Failure) {
        let start = self.bytesRead
        self.bytesRead += buffer.readableBytes
        do {
            guard self.skipsBodyRuns else {
                try self.parser.execute(buffer)
                return
            }
            var rest = buffer
            while rest.readableBytes > 0 {
                if self.inBody {
                    // The parser would pass these bytes to onBody unchanged and stay in the body.
                    let run = rest.withUnsafeReadableBytes(self.countBeforeDelimiter)
                    if run > 0 {
                        self.current.digest.update(rest.readSlice(length: run) ?? ByteBuffer())
                        continue
                    }
                }
                let run = rest.withUnsafeReadableBytes(Self.countBeforeCarriageReturn)
                if run == 0 {
                    // A CR may start a delimiter: the parser decides, and may now be inside one.
                    try self.parser.execute(rest.readSlice(length: 1) ?? ByteBuffer())
                    self.inBody = false
                    self.step = 1
                } else {
                    // Bytes without a CR leave the parser in its body state if onBody came last.
                    let piece = rest.readSlice(length: min(run, self.step)) ?? ByteBuffer()
                    self.lastCallbackWasBody = false
                    try self.parser.execute(piece)
                    self.inBody = self.lastCallbackWasBody
                    self.step = min(self.step * 2, Self.maximumStep)
                }
            }
        } catch {
            throw .syntax(start..<self.bytesRead)
        }
    }

    /// The number of bytes before the first delimiter or the start of one at the end of `bytes`.
    private func countBeforeDelimiter(_ bytes: UnsafeRawBufferPointer) -> Int {
        guard let base = bytes.baseAddress else { return 0 }
        return self.delimiter.withUnsafeBytes { delimiter in
            guard let delimiterBase = delimiter.baseAddress else { return 0 }
            var offset = 0
            while offset < bytes.count {
                offset += Self.countBeforeCarriageReturn(UnsafeRawBufferPointer(rebasing: bytes[offset...]))
                let length = min(delimiter.count, bytes.count - offset)
                if length == 0 || memcmp(base + offset, delimiterBase, length) == 0 {
                    return offset
                }
                offset += 1
            }
            return bytes.count
        }
    }

    /// The number of bytes before the first CR, or all of them when there is none.
    private static func countBeforeCarriageReturn(_ bytes: UnsafeRawBufferPointer) -> Int {
        guard let base = bytes.baseAddress, let found = memchr(base, Int32(Self.carriageReturn), bytes.count) else {
            return bytes.count
        }
        return base.distance(to: UnsafeRawPointer(found))
    }

    /// Checks that the body ended after its closing delimiter and returns its parts in order.
    ///
    /// - Throws: ``Failure/boundaryNotFound`` or ``Failure/truncated``.
    func finish() throws(Failure) -> [Part] {
        self.probing = true
        do {
            try self.parser.execute(Self.probe)
        } catch {
            throw .truncated
        }
        guard self.callbacksWhileProbing == 0 else { throw .truncated }
        // Only the preamble and the epilogue ignore the probe; the epilogue comes after a part.
        guard !self.completed.isEmpty else { throw .boundaryNotFound }
        return self.completed
    }

    private func receiveHeader(name: String, value: String) {
        guard !self.probing else {
            self.callbacksWhileProbing += 1
            return
        }
        self.lastCallbackWasBody = false
        self.current.headers.append((name, value.trimmingSpaces()))
    }

    private func receiveBody(_ buffer: ByteBuffer) {
        guard !self.probing else {
            self.callbacksWhileProbing += 1
            return
        }
        self.lastCallbackWasBody = true
        self.current.digest.update(buffer)
    }

    private func completePart() {
        guard !self.probing else {
            self.callbacksWhileProbing += 1
            return
        }
        self.lastCallbackWasBody = false
        self.completed.append(self.current)
        self.current = Part()
    }
}
