import Foundation
import HTTPTypes
import NIOCore
import NIOFoundationCompat

extension MockTransport {
    /// The body of a stubbed response: bytes, text, JSON, a file streamed in chunks, or chunks that arrive
    /// with delays between them.
    ///
    /// ```swift
    /// let bodies: [MockTransport.Body] = [
    ///     .data(Data([0xCA, 0xFE])),
    ///     .string("plain text"),
    ///     .json(["id": 1]),
    ///     .file(URL(fileURLWithPath: "/tmp/fixture.bin")),
    ///     .chunks([Data("data: 1\n\n".utf8), Data("data: 2\n\n".utf8)], delay: .milliseconds(100)),
    /// ]
    /// ```
    public struct Body: Sendable, CustomStringConvertible {
        enum Kind: Sendable {
            case bytes(Data, contentType: String?)
            case file(URL, chunkSize: Int)
            case chunks([Data], delay: Duration, failure: KiteError?)
            /// A JSON body whose value could not be encoded, and why.
            case unencodable(String)
        }

        let kind: Kind

        private init(_ kind: Kind) {
            self.kind = kind
        }

        /// No body bytes (`Content-Length: 0`).
        ///
        /// ```swift
        /// mock.stub(.delete, "http://api.test/users/1", response: .status(204, body: .empty))
        /// ```
        public static var empty: Body { Body(.bytes(Data(), contentType: nil)) }

        /// These bytes, in chunks of 64 KiB at most.
        ///
        /// ```swift
        /// let png = Data([0x89, 0x50, 0x4E, 0x47])
        /// let logo = MockTransport.Response.status(200, headers: [.contentType: "image/png"], body: .data(png))
        /// mock.stub(.get, "http://api.test/logo.png", response: logo)
        /// ```
        ///
        /// - Parameter data: The bytes.
        /// - Returns: The body.
        public static func data(_ data: Data) -> Body {
            Body(.bytes(data, contentType: nil))
        }

        /// Text as UTF-8, with `Content-Type: text/plain; charset=utf-8` unless the stub's header fields set one.
        ///
        /// ```swift
        /// mock.stub(.get, "http://api.test/robots.txt", response: .status(200, body: .string("User-agent: *")))
        /// ```
        ///
        /// - Parameter string: The text.
        /// - Returns: The body.
        public static func string(_ string: String) -> Body {
            Body(.bytes(Data(string.utf8), contentType: "text/plain; charset=utf-8"))
        }

        /// A value encoded as JSON (a ``JSONValue``, a dictionary, your `Encodable` model), with
        /// `Content-Type: application/json` unless the stub's header fields set one.
        ///
        /// The value is encoded now; one that cannot be encoded makes the requests the stub answers fail with
        /// `invalidResponse`, saying why.
        ///
        /// ```swift
        /// struct User: Codable { var id: Int; var name: String }
        /// mock.stub(.get, "http://api.test/users/1", response: .status(200, body: .json(User(id: 1, name: "Ada"))))
        /// let flags = JSONValue.object(["beta": .bool(true)])
        /// mock.stub(.get, "http://api.test/flags", response: .status(200, body: .json(flags)))
        /// ```
        ///
        /// - Parameters:
        ///   - value: The value.
        ///   - encoder: The encoder; set `outputFormatting = .sortedKeys` on it for bytes that do not vary.
        /// - Returns: The body.
        public static func json<Value: Encodable>(_ value: Value, encoder: JSONEncoder = JSONEncoder()) -> Body {
            do {
                return Body(.bytes(try encoder.encode(value), contentType: "application/json"))
            } catch {
                return Body(.unencodable("\(error)"))
            }
        }

        /// The bytes of a file, read in chunks as the response is read (never whole), with its size as
        /// `Content-Length`. The file is read anew for each request the stub answers.
        ///
        /// A file that cannot be read makes the request fail with `invalidResponse`, naming the file.
        ///
        /// ```swift
        /// let fixture = URL(fileURLWithPath: "/tmp/fixture.zip")
        /// mock.stub(.get, "http://api.test/archive.zip", response: .status(200, body: .file(fixture)))
        /// ```
        ///
        /// - Parameters:
        ///   - fileURL: A `file:` URL of a regular file.
        ///   - chunkSize: The size of the chunks the file is read in; 64 KiB by default.
        /// - Returns: The body.
        public static func file(_ fileURL: URL, chunkSize: Int = 64 * 1024) -> Body {
            Body(.file(fileURL, chunkSize: max(1, chunkSize)))
        }

        /// Chunks that arrive one by one with `delay` between each and the next (the first arrives with the
        /// head), like a server that streams; without `Content-Length` unless the stub's header fields set it.
        /// Empty chunks are left out. With `error`, the body then fails with it, `delay` after the last chunk,
        /// as a connection lost midway does.
        ///
        /// The request's total timeout and cancellation end a delay, with the errors the real engine gives
        /// (`timedOut` with ``KiteError/TimeoutKind/total``, `cancelled`).
        ///
        /// ```swift
        /// let events = [Data("data: one\n\n".utf8), Data("data: two\n\n".utf8)]
        /// let stream = MockTransport.Body.chunks(events, delay: .milliseconds(50))
        /// mock.stub(.get, "http://api.test/events", response: .status(200, body: stream))
        ///
        /// let lost = KiteError(code: .connectionLost, message: "the server closed the connection midway")
        /// let cut = MockTransport.Body.chunks([Data(count: 1024)], thenFailingWith: lost)
        /// mock.stub(.get, "http://api.test/big", response: .status(200, body: cut))
        /// ```
        ///
        /// - Parameters:
        ///   - chunks: The chunks, in order.
        ///   - delay: How long to wait between two chunks.
        ///   - error: The error the body ends with after its chunks, or `nil` for a body that ends normally.
        /// - Returns: The body.
        public static func chunks(
            _ chunks: [Data],
            delay: Duration = .zero,
            thenFailingWith error: KiteError? = nil
        ) -> Body {
            Body(.chunks(chunks.filter { !$0.isEmpty }, delay: delay, failure: error))
        }

        var isEmpty: Bool {
            if case .bytes(let data, _) = self.kind {
                return data.isEmpty
            }
            return false
        }

        /// What the body is: `12 bytes`, `file /tmp/x.bin`, `3 chunks (30 bytes) 100 ms apart`.
        public var description: String {
            switch self.kind {
            case .bytes(let data, _):
                return "\(data.count) bytes"
            case .file(let url, _):
                return "file \(url.path)"
            case .chunks(let chunks, let delay, let failure):
                let total = chunks.reduce(0) { $0 + $1.count }
                var text = "\(chunks.count) chunk\(chunks.count == 1 ? "" : "s") (\(total) bytes)"
                if delay > .zero {
                    text += " \(delay.kiteDescription) apart"
                }
                if let failure {
                    text += ", then error \(failure.code)"
                }
                return text
            case .unencodable(let reason):
                return "JSON that cannot be encoded (\(reason))"
            }
        }

        /// The engine's response with this body: the head now, the body's bytes as the pipeline reads them.
        func transportResponse(
            status code: Int,
            headers: HTTPFields,
            method: HTTPRequest.Method,
            deadline: NIODeadline?
        ) throws(KiteError) -> TransportResponse {
            guard (100...999).contains(code) else {
                throw KiteError(code: .invalidResponse, message: "the response status \(code) is not valid")
            }
            var fields = headers
            // As from a server: these responses have no body, and neither does a response to HEAD.
            let hasBody = !(100..<200).contains(code) && code != 204 && code != 304
            let sendsBody = hasBody && method != .head
            func announce(length: Int64) {
                if hasBody, fields[.contentLength] == nil, fields[.transferEncoding] == nil {
                    fields[.contentLength] = String(length)
                }
            }
            var chunks = ByteChunks(chunks: [])
            switch self.kind {
            case .bytes(let data, let contentType):
                if let contentType, fields[.contentType] == nil {
                    fields[.contentType] = contentType
                }
                announce(length: Int64(data.count))
                if sendsBody {
                    chunks = ByteChunks(slicing: ByteBuffer(data: data), size: 64 * 1024)
                }
            case .file(let url, let chunkSize):
                let file: MultipartFormData.FileSource
                switch MultipartFormData.checkFile(url, role: "the stub's body") {
                case .success(let checked): file = checked
                case .failure(let error): throw Self.fileError(error)
                }
                announce(length: file.size)
                if sendsBody {
                    chunks = ByteChunks.reading(file, chunkSize: chunkSize, failure: Self.fileError)
                }
            case .chunks(let parts, let delay, let failure):
                if sendsBody {
                    chunks = Self.arriving(parts, delay: delay, failure: failure, deadline: deadline)
                }
            case .unencodable(let reason):
                throw KiteError(code: .invalidResponse, message: "the stub's JSON body could not be encoded: \(reason)")
            }
            return TransportResponse(head: HTTPResponse(status: .init(code: code), headerFields: fields), body: chunks)
        }

        /// A stub file's failure as the request's: the file's message, code `invalidResponse`.
        @Sendable
        private static func fileError(_ error: KiteError) -> KiteError {
            KiteError(code: .invalidResponse, message: error.message, underlyingError: error.underlyingError)
        }

        /// `parts` with `delay` between two of them, then `failure` when there is one.
        private static func arriving(
            _ parts: [Data],
            delay: Duration,
            failure: KiteError?,
            deadline: NIODeadline?
        ) -> ByteChunks {
            ByteChunks(makeNext: {
                var index = 0
                return { () async throws -> ByteBuffer? in
                    let current = index
                    index += 1
                    if current < parts.count {
                        if current > 0, delay > .zero {
                            try await MockTransport.pause(delay, deadline: deadline)
                        }
                        return ByteBuffer(data: parts[current])
                    }
                    // A body that ends normally ends with its last chunk, without a delay.
                    guard current == parts.count, let failure else { return nil }
                    if current > 0, delay > .zero {
                        try await MockTransport.pause(delay, deadline: deadline)
                    }
                    throw failure
                }
            })
        }
    }
}
