import Foundation
import HTTPTypes
import NIOConcurrencyHelpers
import NIOCore

/// A `multipart/form-data` body (RFC 7578) built from text fields, in-memory data, files and streams.
///
/// Build a form by appending parts in the order they should be sent, then hand it to an upload, or
/// encode it yourself with ``encode()`` or ``writeEncodedData(to:)``:
///
/// ```swift
/// var form = MultipartFormData()
/// form.append(Data("kite".utf8), withName: "name")
/// form.append(Data([0x89, 0x50, 0x4E, 0x47]), withName: "avatar", fileName: "avatar.png", mimeType: "image/png")
/// form.append(URL(fileURLWithPath: "/tmp/report.pdf"), withName: "report")
/// if let error = form.appendError { print(error) }  // a file that was missing, a directory, …
/// print(form.contentType)  // multipart/form-data; boundary=kite.boundary.…
/// print(form.contentLength)  // the exact size of the body, files included
/// ```
///
/// The body is written exactly as Alamofire's `MultipartFormData` writes it: `--boundary CRLF` before the
/// first part, `CRLF --boundary CRLF` between parts and `CRLF --boundary-- CRLF` after the last one; each
/// part is its header lines (`Name: value CRLF`), an empty line, then its bytes. A form with one text
/// field `a` holding `value` is:
///
/// ```
/// --B\r\nContent-Disposition: form-data; name="a"\r\n\r\nvalue\r\n--B--\r\n
/// ```
///
/// A form with no parts is the close delimiter alone (`--B--\r\n`), which is what browsers send for an
/// empty `FormData` and what form parsers accept as "no fields"; it is never an error.
///
/// Appending never throws. A file part is checked when it is appended (it must be a file URL of a
/// readable regular file whose size can be known, and a file name and MIME type must be given or
/// inferable); the first failure is kept in ``appendError`` and the part is left out. ``encode()``,
/// ``writeEncodedData(to:)`` and an upload of the form then throw that error. Its
/// ``KiteError/multipartFailure`` says which check failed.
///
/// Files are not read when they are appended: their sizes are taken then, so ``contentLength`` is
/// known without reading them, and their bytes are read in chunks when the form is encoded or sent.
/// A file whose size changed in between makes encoding or sending fail rather than send a body whose
/// length differs from ``contentLength``.
///
/// With the random default boundary (`kite.boundary.` and 64 random bits) the chance that a part's bytes
/// hold the boundary is negligible, so parts are not searched for it. With a boundary of your own, you
/// must make sure no part contains `--` followed by it.
public struct MultipartFormData: Sendable {
    /// The size up to which ``Session``'s `upload(multipartFormData:to:)`
    /// encodes a form in memory rather than streaming it: 10 MB.
    public static let encodingMemoryThreshold: UInt64 = 10_000_000

    /// The boundary that separates the parts, without the leading `--`.
    ///
    /// ```swift
    /// let form = try MultipartFormData(boundary: "my-boundary")
    /// print(form.boundary)  // my-boundary
    /// ```
    public let boundary: String

    /// The first error an `append` recorded, or `nil` when every part was appended.
    ///
    /// Appending a file part checks the file; when a check fails, the part is left out and, if no earlier
    /// append failed, the error is kept here. Encoding, writing or uploading the form throws it. Its
    /// ``KiteError/multipartFailure`` tells which check failed and its message names the file.
    ///
    /// ```swift
    /// var form = MultipartFormData()
    /// form.append(URL(fileURLWithPath: "/no/such/file.txt"), withName: "file")
    /// print(form.appendError?.multipartFailure?.reason == .fileUnreachable)  // true
    /// ```
    public internal(set) var appendError: KiteError?

    /// The parts appended so far, in order.
    var parts: [Part] = []

    /// The encoded length of `parts`, each with its delimiter and headers; the close delimiter not included.
    var partsLength: Int64 = 0

    /// Creates an empty form with a random boundary of the form `kite.boundary.` and 16 lowercase hex digits.
    ///
    /// ```swift
    /// var form = MultipartFormData()
    /// form.append(Data("1".utf8), withName: "page")
    /// ```
    public init() {
        self.boundary = Self.randomBoundary()
    }

    /// Creates an empty form that separates its parts with `boundary`.
    ///
    /// RFC 2046 allows 1 to 70 characters from `0-9 A-Z a-z ' ( ) + _ , - . / : = ?` and space, the last
    /// of which must not be a space. The boundary must not occur in any part's bytes; prefer ``init()``,
    /// whose random boundary makes that a non-issue.
    ///
    /// ```swift
    /// let form = try MultipartFormData(boundary: "----KiteFormBoundary42")
    /// ```
    ///
    /// - Parameter boundary: The boundary, without the leading `--`.
    /// - Throws: A ``KiteError`` with code ``KiteError/Code-swift.struct/multipartEncodingFailed`` and
    ///   reason ``MultipartFormData/Failure/Reason-swift.struct/boundaryInvalid`` when `boundary` is empty,
    ///   longer than 70 characters, holds a character RFC 2046 does not allow, or ends with a space.
    public init(boundary: String) throws(KiteError) {
        if let problem = Self.boundaryProblem(boundary) {
            throw Failure.error(
                .boundaryInvalid,
                "boundary \"\(boundary)\" is invalid: \(problem)"
            )
        }
        self.boundary = boundary
    }

    /// The `Content-Type` of the encoded body: `multipart/form-data; boundary=…`.
    ///
    /// The boundary is quoted when it holds a character that a header parameter cannot carry unquoted
    /// (space `( ) , / : = ?`).
    ///
    /// ```swift
    /// let form = try MultipartFormData(boundary: "a b")
    /// print(form.contentType)  // multipart/form-data; boundary="a b"
    /// ```
    public var contentType: String {
        let needsQuotes = self.boundary.utf8.contains { !Self.isTokenCharacter($0) }
        return needsQuotes
            ? "multipart/form-data; boundary=\"\(self.boundary)\""
            : "multipart/form-data; boundary=\(self.boundary)"
    }

    /// The exact number of bytes of the encoded body, boundaries and part headers included.
    ///
    /// It is computed without reading any file: file sizes were taken when the files were appended. A
    /// part whose append failed (see ``appendError``) is not counted; such a form cannot be encoded or
    /// sent anyway, as encoding and uploading throw ``appendError``.
    ///
    /// ```swift
    /// var form = try MultipartFormData(boundary: "B")
    /// form.append(Data("value".utf8), withName: "a")
    /// print(form.contentLength)  // 63
    /// ```
    public var contentLength: Int64 {
        // Appending checked that this cannot overflow.
        self.parts.isEmpty ? self.emptyFormLength : self.partsLength + self.closeDelimiterLength
    }

    /// Records `error` unless an earlier append already failed.
    mutating func record(_ error: KiteError) {
        if self.appendError == nil {
            self.appendError = error
        }
    }
}

// MARK: - Parts

extension MultipartFormData {
    /// One appended part: its header fields and where its bytes come from.
    struct Part: Sendable {
        var headers: HTTPFields
        var body: Body
        /// How messages name the part, such as `"avatar"` or `#3`.
        var label: String

        enum Body: Sendable {
            case data(Data)
            case file(FileSource)
            case stream(StreamSource)
        }

        var isStream: Bool {
            if case .stream = self.body { return true }
            return false
        }
    }

    /// A file checked when it was appended.
    struct FileSource: Sendable {
        var url: URL
        var path: String
        /// The size when the file was checked; the file must still have it when it is read.
        var size: Int64
        /// What the file is for, as messages name it: `file part "a"`, `the upload body`.
        var role: String
    }

    /// A caller's async sequence of bytes with its declared length.
    struct StreamSource: Sendable {
        var length: Int64
        /// Makes an iterator over the caller's sequence; called at most once, guarded by `claim`.
        var makeNext: @Sendable () -> (() async throws -> ByteBuffer?)
        var claim: StreamClaim
    }

    /// Whether a stream part's sequence has been iterated: caller streams are one-shot.
    ///
    /// Copies of a form share their parts' claims, as they share the caller's stream.
    final class StreamClaim: Sendable {
        private let claimed = NIOLockedValueBox(false)

        /// Marks the stream as taken; returns false when it had already been taken.
        func take() -> Bool {
            self.claimed.withLockedValue { claimed in
                guard !claimed else { return false }
                claimed = true
                return true
            }
        }

        var isTaken: Bool {
            self.claimed.withLockedValue { $0 }
        }
    }
}

// MARK: - Boundaries

extension MultipartFormData {
    /// `kite.boundary.` followed by 16 lowercase hex digits from the system's random number generator.
    static func randomBoundary() -> String {
        var generator = SystemRandomNumberGenerator()
        let hex = String(generator.next() as UInt64, radix: 16)
        return "kite.boundary." + String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// Why `boundary` is not a valid RFC 2046 boundary, or `nil` when it is.
    static func boundaryProblem(_ boundary: String) -> String? {
        let bytes = Array(boundary.utf8)
        if bytes.isEmpty {
            return "it is empty; a boundary needs 1 to 70 characters"
        }
        if bytes.count > 70 {
            return "it has \(bytes.count) bytes; a boundary has at most 70 characters"
        }
        let isAllowed = { (scalar: Unicode.Scalar) in scalar.isASCII && Self.isBoundaryCharacter(UInt8(scalar.value)) }
        if let bad = boundary.unicodeScalars.first(where: { !isAllowed($0) }) {
            return "it holds \"\(Self.printable(bad))\";"
                + " RFC 2046 allows only 0-9 A-Z a-z ' ( ) + _ , - . / : = ? and space"
        }
        if bytes.last == UInt8(ascii: " ") {
            return "it ends with a space, which RFC 2046 does not allow"
        }
        return nil
    }

    private static func printable(_ scalar: Unicode.Scalar) -> String {
        scalar.properties.generalCategory == .control
            ? "U+" + String(scalar.value, radix: 16, uppercase: true)
            : String(scalar)
    }

    /// RFC 2046 `bchars`: `DIGIT / ALPHA / "'" / "(" / ")" / "+" / "_" / "," / "-" / "." / "/" / ":" / "=" / "?"`
    /// and space.
    private static func isBoundaryCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "a")...UInt8(ascii: "z"):
            true
        default:
            "'()+_,-./:=? ".utf8.contains(byte)
        }
    }

    /// RFC 9110 `tchar`: what a header parameter value may hold without quotes.
    private static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "a")...UInt8(ascii: "z"):
            true
        default:
            "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }
}
