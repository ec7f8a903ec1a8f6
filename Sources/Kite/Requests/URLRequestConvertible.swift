import Foundation
import HTTPTypes

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A value that can become a whole request: `URLRequest` or your own router type.
///
/// ```swift
/// enum Router: URLRequestConvertible {
///     case user(id: Int)
///     func asURLRequest() throws -> URLRequest {
///         switch self {
///         case .user(let id):
///             return URLRequest(url: URL(string: "https://api.example.com/users/\(id)")!)
///         }
///     }
/// }
/// let user = try await Session.default.request(Router.user(id: 1)).serializingData().value
/// ```
///
/// Kite reads the URL, method, header fields, body and `httpShouldHandleCookies`. Methods and header fields holding
/// CR, LF or NUL are rejected with a ``KiteError``; `httpBodyStream` is not supported (use an upload instead). A
/// `timeoutInterval` other than the default 60 s is refused (`invalidRequest`): URLSession resets it whenever bytes
/// arrive, and Kite's idle timeouts are the session's (``Session/Timeouts``), so taking it as anything else would
/// change what it means; give the request a total timeout with a `requestModifier` (``RequestDraft/timeout``).
public protocol URLRequestConvertible: Sendable {
    /// The request, or an error that says why there is none.
    ///
    /// - Returns: The request.
    /// - Throws: Any error; Kite reports it as a ``KiteError``.
    func asURLRequest() throws -> URLRequest
}

extension URLRequest: URLRequestConvertible {
    /// The request itself.
    ///
    /// - Returns: `self`.
    public func asURLRequest() throws -> URLRequest { self }
}

extension URLRequest {
    /// The request as a Kite draft, with its method, header fields and body checked.
    ///
    /// - Returns: The draft.
    /// - Throws: ``KiteError`` naming the URL, method or header that is not valid.
    public func asRequestDraft() throws(KiteError) -> RequestDraft {
        let methodName = self.httpMethod ?? "GET"
        guard let url = self.url else {
            throw KiteError(
                code: .invalidURL,
                message: "the URLRequest has no URL",
                request: RequestSummary(methodName: methodName, url: "")
            )
        }
        let summary = RequestSummary(methodName: methodName, url: url.absoluteString)
        guard let method = HTTPRequest.Method(methodName) else {
            throw KiteError(
                code: .invalidRequest,
                message: "\"\(methodName.escapedForMessage)\" is not a valid HTTP method",
                request: summary
            )
        }
        var fields = HTTPFields()
        for (name, value) in (self.allHTTPHeaderFields ?? [:]).sorted(by: { $0.key < $1.key }) {
            do {
                fields.append(try HTTPField(validatingName: name, value: value))
            } catch {
                throw error.naming(summary)
            }
        }
        if self.httpBodyStream != nil {
            throw KiteError(
                code: .invalidRequest,
                message:
                    "URLRequest.httpBodyStream is not supported; send the stream with session.upload(_:length:to:)",
                request: summary
            )
        }
        var draft = RequestDraft(method: method, url: url, headerFields: fields, body: self.httpBody)
        if self.timeoutInterval != 60, self.timeoutInterval > 0 {
            // URLSession resets this timeout whenever bytes arrive (an idle timeout); Kite's idle timeouts are the
            // session's, so a silent change of meaning (a long download cut off) is refused instead.
            let seconds = Duration.milliseconds(Int64((self.timeoutInterval * 1000).rounded())).kiteDescription
            throw KiteError(
                code: .invalidRequest,
                message: "URLRequest.timeoutInterval (\(seconds)) is an idle timeout in URLSession, and Kite's idle "
                    + "timeouts are the session's: leave it at 60 and set Session.Configuration.timeouts.idleRead, "
                    + "or give the request a total timeout with requestModifier: { $0.timeout = .seconds(…) }",
                request: summary
            )
        }
        draft.httpShouldHandleCookies = self.httpShouldHandleCookies
        if self.cachePolicy != .useProtocolCachePolicy {
            draft.cachePolicy = self.cachePolicy
        }
        return draft
    }
}

extension HTTPField {
    /// A field from text, rejecting names that are not HTTP tokens and values holding CR, LF or NUL.
    ///
    /// Unlike `HTTPField(name:value:)`, which silently replaces such characters, this throws, so a
    /// value taken from user input can never inject a header.
    ///
    /// - Parameters:
    ///   - name: The field name.
    ///   - value: The field value.
    /// - Throws: ``KiteError`` with code `invalidHeader`.
    public init(validatingName name: String, value: String) throws(KiteError) {
        guard let fieldName = HTTPField.Name(name) else {
            throw KiteError(
                code: .invalidHeader,
                message: "\"\(name.escapedForMessage)\" is not a valid header field name"
            )
        }
        if value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }) {
            throw KiteError(
                code: .invalidHeader,
                message: "the value of header \"\(name)\" contains CR, LF or NUL: \"\(value.escapedForMessage)\""
            )
        }
        self.init(name: fieldName, value: value)
    }
}

extension String {
    /// The string with control characters written as escapes, safe to put in a message.
    var escapedForMessage: String {
        var result = ""
        for scalar in self.unicodeScalars {
            switch scalar {
            case "\r": result += "\\r"
            case "\n": result += "\\n"
            case "\t": result += "\\t"
            case "\0": result += "\\0"
            default:
                if scalar.properties.generalCategory == .control {
                    result += "\\u{\(String(scalar.value, radix: 16))}"
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result
    }
}
