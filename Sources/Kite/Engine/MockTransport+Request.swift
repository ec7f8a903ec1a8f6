import Foundation
import HTTPTypes
import HTTPTypesFoundation

extension MockTransport {
    /// A request as a ``MockTransport`` received it: the head as sent (after adapters, redirects and the
    /// session's default header fields) and the body's bytes.
    ///
    /// ```swift
    /// let sent = try #require(mock.requests.first)
    /// #expect(sent.method == .post)
    /// #expect(sent.url?.absoluteString == "http://api.test/notes")
    /// #expect(sent.headerFields[.contentType] == "application/json")
    /// #expect(sent.body == Data(#"{"text":"hi"}"#.utf8))
    /// ```
    public struct Request: Sendable, CustomStringConvertible {
        /// The request head as sent: method, scheme, authority, path (with the query) and header fields.
        public let head: HTTPRequest

        /// The body's bytes, read whole as a server would before answering; `nil` when the request had no body.
        /// A body whose stream failed holds the bytes read before the failure.
        public let body: Data?

        /// The URL the request was sent to (no fragment, no user or password).
        public var url: URL? { self.head.url }

        /// The request method.
        public var method: HTTPRequest.Method { self.head.method }

        /// The header fields as sent, the session's default ones included.
        public var headerFields: HTTPFields { self.head.headerFields }

        /// Creates a request record, for handlers of ``Response/respond(_:)`` under test.
        ///
        /// ```swift
        /// let head = HTTPRequest(method: .get, scheme: "http", authority: "api.test", path: "/")
        /// let request = MockTransport.Request(head: head)
        /// ```
        ///
        /// - Parameters:
        ///   - head: The request head.
        ///   - body: The body's bytes, or `nil` for none.
        public init(head: HTTPRequest, body: Data? = nil) {
            self.head = head
            self.body = body
        }

        /// The URL as stubs match it: `scheme://authority/path?query`.
        var urlString: String {
            let scheme = self.head.scheme ?? "http"
            let authority = self.head.authority ?? ""
            let path = self.head.path ?? "/"
            return "\(scheme)://\(authority)\(path)"
        }

        /// The method, the URL without credentials and the body's size: `POST http://api.test/notes (12 bytes)`.
        public var description: String {
            let summary = RequestSummary(self.head).description
            guard let body else { return summary }
            return "\(summary) (\(body.count) bytes)"
        }
    }
}
