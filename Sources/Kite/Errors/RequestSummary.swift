import Foundation
import HTTPTypes

/// A request as errors and logs name it: the method and the URL, never the credentials.
///
/// User and password in the URL are removed; headers are not part of a summary.
///
/// ```swift
/// let summary = RequestSummary(method: .get, url: "http://user:secret@example.com/x")
/// print(summary)  // GET http://example.com/x
/// ```
public struct RequestSummary: Sendable, Hashable, CustomStringConvertible {
    /// The method, such as `GET`.
    public let method: String

    /// The URL without user and password.
    public let url: String

    /// Creates a summary from a method and a URL string, removing user and password from the URL.
    ///
    /// - Parameters:
    ///   - method: The request method.
    ///   - url: The URL as the caller gave it.
    public init(method: HTTPRequest.Method, url: String) {
        self.method = method.rawValue
        self.url = RequestSummary.removingCredentials(from: url)
    }

    /// Creates a summary from a method name and a URL string, removing user and password from the URL.
    ///
    /// - Parameters:
    ///   - methodName: The request method as text.
    ///   - url: The URL as the caller gave it.
    public init(methodName: String, url: String) {
        self.method = methodName
        self.url = RequestSummary.removingCredentials(from: url)
    }

    /// Creates a summary of an HTTP request head.
    ///
    /// - Parameter request: The request head.
    public init(_ request: HTTPRequest) {
        self.method = request.method.rawValue
        let scheme = request.scheme ?? "http"
        let authority = request.authority ?? ""
        self.url = RequestSummary.removingCredentials(from: "\(scheme)://\(authority)\(request.path ?? "")")
    }

    /// `METHOD URL`, such as `GET http://example.com/x`.
    public var description: String {
        "\(self.method) \(self.url)"
    }

    static func removingCredentials(from url: String) -> String {
        // Fast path, without allocating: nothing to replace and no `@` that could end user info.
        if !url.utf8.contains(UInt8(ascii: "@")), !url.containsControlCharacter { return url }
        // Printable form first: control characters must never reach a log line.
        let printable = String(
            String.UnicodeScalarView(
                url.unicodeScalars.map { $0.properties.generalCategory == .control ? "\u{FFFD}" : $0 }
            )
        )
        guard let schemeEnd = printable.range(of: "://") else { return printable }
        let afterScheme = printable[schemeEnd.upperBound...]
        let authorityEnd =
            afterScheme.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? afterScheme.endIndex
        let authority = afterScheme[..<authorityEnd]
        guard let at = authority.lastIndex(of: "@") else { return printable }
        return String(printable[..<schemeEnd.upperBound]) + String(printable[printable.index(after: at)...])
    }
}
