import Foundation

/// A value that can become the `URL` of a request: `String`, `URL`, `URLComponents` or your own type.
///
/// ```swift
/// struct API: URLConvertible {
///     let path: String
///     func asURL() throws -> URL {
///         guard let url = URL(string: "https://api.example.com")?.appending(path: path) else {
///             throw KiteError(code: .invalidURL, message: "bad path \(path)")
///         }
///         return url
///     }
/// }
/// ```
public protocol URLConvertible: Sendable {
    /// The URL, or an error that says why there is none.
    ///
    /// - Returns: The URL.
    /// - Throws: Any error; Kite reports it as a ``KiteError`` with code `invalidURL`.
    func asURL() throws -> URL
}

extension String: URLConvertible {
    /// Parses the string as a URL.
    ///
    /// Strings holding CR, LF, NUL or other control characters are rejected rather than escaped,
    /// so that a value taken from user input can never split a request line.
    ///
    /// - Returns: The parsed URL.
    /// - Throws: ``KiteError`` with code `invalidURL` when the string is not a URL.
    public func asURL() throws -> URL {
        if self.containsControlCharacter,
            let bad = self.unicodeScalars.first(where: { $0.properties.generalCategory == .control })
        {
            throw KiteError(
                code: .invalidURL,
                message: "URL \"\(RequestSummary.removingCredentials(from: self))\" contains the control character "
                    + "U+\(String(bad.value, radix: 16, uppercase: true).leftPadded(to: 4))"
            )
        }
        guard !self.isEmpty, let url = URL(string: self) else {
            throw KiteError(
                code: .invalidURL,
                message: "\"\(RequestSummary.removingCredentials(from: self))\" is not a valid URL"
            )
        }
        return url
    }
}

extension URL: URLConvertible {
    /// The URL itself.
    ///
    /// - Returns: `self`.
    public func asURL() throws -> URL { self }
}

extension URLComponents: URLConvertible {
    /// The URL the components describe.
    ///
    /// - Returns: The URL.
    /// - Throws: ``KiteError`` with code `invalidURL` when the components do not form a URL.
    public func asURL() throws -> URL {
        guard let url = self.url else {
            throw KiteError(code: .invalidURL, message: "URL components \(self) do not form a valid URL")
        }
        return url
    }
}

extension String {
    func leftPadded(to width: Int, with pad: Character = "0") -> String {
        self.count >= width ? self : String(repeating: pad, count: width - self.count) + self
    }
}
