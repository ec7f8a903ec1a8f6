import Foundation

extension MultipartFormData {
    /// Why a multipart form could not be built, encoded, sent or written.
    ///
    /// Every multipart error is a ``KiteError`` with code ``KiteError/Code-swift.struct/multipartEncodingFailed``
    /// whose ``KiteError/underlyingError`` is a `Failure`; ``KiteError/multipartFailure`` returns it. Its
    /// ``reason`` says which check failed, and the error's message names the file or part.
    ///
    /// ```swift
    /// var form = MultipartFormData()
    /// form.append(URL(fileURLWithPath: "/tmp"), withName: "upload")
    /// if let failure = form.appendError?.multipartFailure {
    ///     print(failure.reason)  // fileIsDirectory
    ///     print(failure.fileURL?.path ?? "")  // /tmp
    /// }
    /// ```
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// Which check failed.
        public let reason: Reason

        /// The file the failure is about: the appended file, or the destination of
        /// ``MultipartFormData/writeEncodedData(to:)``.
        public let fileURL: URL?

        /// The error of the system call or stream that failed, when there was one.
        public let underlyingError: (any Error)?

        /// Creates a failure.
        ///
        /// ```swift
        /// let failure = MultipartFormData.Failure(reason: .fileUnreachable, fileURL: URL(fileURLWithPath: "/x"))
        /// ```
        ///
        /// - Parameters:
        ///   - reason: Which check failed.
        ///   - fileURL: The file the failure is about.
        ///   - underlyingError: The error that caused the failure.
        public init(reason: Reason, fileURL: URL? = nil, underlyingError: (any Error)? = nil) {
            self.reason = reason
            self.fileURL = fileURL
            self.underlyingError = underlyingError
        }

        /// The reason, and the file's path when there is one, such as `fileIsDirectory: /tmp`.
        public var description: String {
            guard let fileURL else { return self.reason.description }
            return "\(self.reason): \(fileURL.isFileURL ? fileURL.path : fileURL.absoluteString)"
        }

        /// A `multipartEncodingFailed` error with `message` and a failure of `reason` as its underlying error.
        static func error(
            _ reason: Reason,
            _ message: String,
            fileURL: URL? = nil,
            underlyingError: (any Error)? = nil
        ) -> KiteError {
            KiteError(
                code: .multipartEncodingFailed,
                message: message,
                underlyingError: Failure(reason: reason, fileURL: fileURL, underlyingError: underlyingError)
            )
        }

        /// Which check of a multipart form failed.
        ///
        /// Reasons are static members, so new ones can be added without breaking code that compares them:
        ///
        /// ```swift
        /// if error.multipartFailure?.reason == .fileChanged { print("the file changed while it was sent") }
        /// ```
        public struct Reason: Hashable, Sendable, CustomStringConvertible {
            private let name: String

            private init(_ name: String) {
                self.name = name
            }

            /// The reason's name, such as `fileIsDirectory`.
            public var description: String { self.name }

            // Appending a file.

            /// An appended URL is not a `file:` URL.
            public static let notFileURL = Reason("notFileURL")
            /// An appended file does not exist or cannot be reached (a missing or unsearchable folder).
            public static let fileUnreachable = Reason("fileUnreachable")
            /// An appended file is a directory.
            public static let fileIsDirectory = Reason("fileIsDirectory")
            /// An appended file's size cannot be known before it is read: it is not a regular file (a FIFO,
            /// socket or device) or its attributes cannot be read.
            public static let fileSizeUnavailable = Reason("fileSizeUnavailable")
            /// An appended file cannot be opened for reading, such as for lack of read permission.
            public static let fileCannotBeOpened = Reason("fileCannotBeOpened")
            /// No file name or MIME type was given and the file's URL has no last path component or no
            /// extension to infer them from.
            public static let fileNameNotInferable = Reason("fileNameNotInferable")

            // Appending a stream or choosing a boundary.

            /// A stream part was appended with a negative length.
            public static let streamLengthInvalid = Reason("streamLengthInvalid")
            /// An appended part would make the form longer than `Int64.max` bytes.
            public static let formTooLarge = Reason("formTooLarge")
            /// A boundary given to ``MultipartFormData/init(boundary:)`` is not a valid RFC 2046 boundary.
            public static let boundaryInvalid = Reason("boundaryInvalid")

            // Encoding or sending.

            /// A file's size changed between its append and its reading, or it could not be read to the end.
            public static let fileChanged = Reason("fileChanged")
            /// A file could not be opened or read when the form was encoded or sent.
            public static let fileReadFailed = Reason("fileReadFailed")
            /// A stream part produced fewer or more bytes than its declared length.
            public static let streamLengthMismatch = Reason("streamLengthMismatch")
            /// A stream part's sequence threw an error.
            public static let streamFailed = Reason("streamFailed")
            /// A stream part was already sent once; caller streams are one-shot.
            public static let streamAlreadyConsumed = Reason("streamAlreadyConsumed")
            /// ``MultipartFormData/encode()`` or ``MultipartFormData/writeEncodedData(to:)`` was called on a
            /// form with stream parts, which only an upload can send.
            public static let streamPartsNotEncodable = Reason("streamPartsNotEncodable")

            // Writing the encoded form to a file.

            /// The destination of ``MultipartFormData/writeEncodedData(to:)`` is not a `file:` URL.
            public static let destinationNotFileURL = Reason("destinationNotFileURL")
            /// The destination of ``MultipartFormData/writeEncodedData(to:)`` already exists.
            public static let destinationExists = Reason("destinationExists")
            /// The destination of ``MultipartFormData/writeEncodedData(to:)`` cannot be created, such as in a
            /// missing folder.
            public static let destinationNotCreatable = Reason("destinationNotCreatable")
            /// Writing to the destination of ``MultipartFormData/writeEncodedData(to:)`` failed, such as on a
            /// full disk.
            public static let destinationWriteFailed = Reason("destinationWriteFailed")
        }
    }
}

extension KiteError {
    /// The multipart failure behind this error, for ``Code-swift.struct/multipartEncodingFailed`` errors.
    ///
    /// ```swift
    /// do {
    ///     _ = try MultipartFormData(boundary: "")
    /// } catch {
    ///     print(error.multipartFailure?.reason == .boundaryInvalid)  // true
    /// }
    /// ```
    public var multipartFailure: MultipartFormData.Failure? {
        self.underlyingError as? MultipartFormData.Failure
    }
}
