import Foundation
import HTTPTypes

// Alamofire's `HTTPHeader` helpers, on swift-http-types' `HTTPField` (Kite has no second header type). Values go
// through `HTTPField(name:value:)`, which turns CR, LF, NUL and other invalid bytes into spaces, so a value from
// user input can never add a header; use ``HTTPField/init(validatingName:value:)`` to refuse such input instead.
//
// `HTTPFields` is not an array literal (swift-http-types makes it a dictionary literal of names and values), so
// Alamofire's `let headers: HTTPHeaders = [.authorization(bearerToken: t), .accept("application/json")]` is written
// `let headers = HTTPFields([.authorization(bearerToken: t), .accept("application/json")])`.
extension HTTPField {
    /// An `Accept` field.
    ///
    /// ```swift
    /// let headers = HTTPFields([.accept("application/json"), .authorization(bearerToken: "t0k3n")])
    /// ```
    ///
    /// - Parameter value: The media ranges, such as `application/json`.
    /// - Returns: The field.
    public static func accept(_ value: String) -> HTTPField {
        HTTPField(name: .accept, value: value)
    }

    /// An `Accept-Charset` field.
    ///
    /// - Parameter value: The charsets, such as `utf-8`.
    /// - Returns: The field.
    public static func acceptCharset(_ value: String) -> HTTPField {
        HTTPField(name: Self.acceptCharsetName, value: value)
    }

    /// An `Accept-Language` field; ``defaultAcceptLanguage`` holds the process's preferred languages.
    ///
    /// - Parameter value: The language ranges, such as `fr-CH, fr;q=0.9`.
    /// - Returns: The field.
    public static func acceptLanguage(_ value: String) -> HTTPField {
        HTTPField(name: .acceptLanguage, value: value)
    }

    /// An `Accept-Encoding` field; ``defaultAcceptEncoding`` holds the codings Kite decodes.
    ///
    /// - Parameter value: The content codings, such as `gzip`.
    /// - Returns: The field.
    public static func acceptEncoding(_ value: String) -> HTTPField {
        HTTPField(name: .acceptEncoding, value: value)
    }

    /// A `Basic` `Authorization` field: `Basic ` and the Base64 of `username:password` in UTF-8 (RFC 7617).
    ///
    /// ```swift
    /// let field = HTTPField.authorization(username: "user", password: "pass")  // Basic dXNlcjpwYXNz
    /// ```
    ///
    /// - Parameters:
    ///   - username: The user name; a colon in it cannot be told from the separator (RFC 7617).
    ///   - password: The password.
    /// - Returns: The field.
    public static func authorization(username: String, password: String) -> HTTPField {
        .authorization("Basic \(Data("\(username):\(password)".utf8).base64EncodedString())")
    }

    /// A `Bearer` `Authorization` field (RFC 6750).
    ///
    /// - Parameter bearerToken: The token.
    /// - Returns: The field.
    public static func authorization(bearerToken: String) -> HTTPField {
        .authorization("Bearer \(bearerToken)")
    }

    /// An `Authorization` field with any value.
    ///
    /// - Parameter value: The credentials, scheme first.
    /// - Returns: The field.
    public static func authorization(_ value: String) -> HTTPField {
        HTTPField(name: .authorization, value: value)
    }

    /// A `Content-Disposition` field.
    ///
    /// - Parameter value: The disposition, such as `attachment; filename="report.pdf"`.
    /// - Returns: The field.
    public static func contentDisposition(_ value: String) -> HTTPField {
        HTTPField(name: .contentDisposition, value: value)
    }

    /// A `Content-Encoding` field.
    ///
    /// - Parameter value: The content coding, such as `gzip`.
    /// - Returns: The field.
    public static func contentEncoding(_ value: String) -> HTTPField {
        HTTPField(name: .contentEncoding, value: value)
    }

    /// A `Content-Type` field. Parameter encoders and multipart bodies set their own, so it is rarely needed.
    ///
    /// - Parameter value: The media type, such as `application/json`.
    /// - Returns: The field.
    public static func contentType(_ value: String) -> HTTPField {
        HTTPField(name: .contentType, value: value)
    }

    /// A `User-Agent` field; ``defaultUserAgent`` holds Kite's.
    ///
    /// - Parameter value: The product tokens, such as `myapp/1.0`.
    /// - Returns: The field.
    public static func userAgent(_ value: String) -> HTTPField {
        HTTPField(name: .userAgent, value: value)
    }

    /// A `Sec-WebSocket-Protocol` field.
    ///
    /// - Parameter value: The subprotocols.
    /// - Returns: The field.
    public static func websocketProtocol(_ value: String) -> HTTPField {
        HTTPField(name: .secWebSocketProtocol, value: value)
    }

    /// The `Accept-Encoding` Kite sends when the session decompresses: `gzip;q=1.0, deflate;q=0.9`. Unlike
    /// Alamofire's, it does not offer `br`: Kite's engine does not decode Brotli.
    public static let defaultAcceptEncoding = HTTPField.acceptEncoding(DefaultHeaders.acceptEncoding)

    /// The process's preferred languages, at most six with falling q-values (`en-US;q=1.0, fr;q=0.9`), as
    /// every session sends them; `*` when the process has none.
    public static let defaultAcceptLanguage = HTTPField.acceptLanguage(
        DefaultHeaders.acceptLanguage(Locale.preferredLanguages).nonEmpty ?? "*"
    )

    /// Kite's `User-Agent`, as every session sends it: `<executable>/<version> (<OS> <version>) Kite/<version>`.
    public static let defaultUserAgent = HTTPField.userAgent(DefaultHeaders.userAgent)
}

extension HTTPField {
    /// `Accept-Charset`, which swift-http-types does not name (a valid token, so the initializer cannot fail).
    private static let acceptCharsetName = HTTPField.Name("Accept-Charset")!
}

extension HTTPFields {
    /// Alamofire's `HTTPHeaders.default`: ``HTTPField/defaultAcceptEncoding``,
    /// ``HTTPField/defaultAcceptLanguage`` and ``HTTPField/defaultUserAgent``. A session sends
    /// ``kiteDefaults`` and adds `Accept-Encoding` itself when it decompresses, so this is only needed to build
    /// a request by hand.
    public static let `default` = HTTPFields([
        HTTPField.defaultAcceptEncoding, HTTPField.defaultAcceptLanguage, HTTPField.defaultUserAgent,
    ])

    /// Adds a field named by a string, after any of the same name (Alamofire's `HTTPHeaders.add(name:value:)`),
    /// so a custom field needs no `HTTPField.Name("X-…")!`.
    ///
    /// ```swift
    /// var headers = HTTPFields()
    /// try headers.add(name: "X-Request-ID", value: "42")
    /// ```
    ///
    /// - Parameters:
    ///   - name: The field name: an HTTP token.
    ///   - value: The value: no CR, LF or NUL.
    /// - Throws: ``KiteError`` with code `invalidHeader` naming the bad name or value; nothing is added.
    public mutating func add(name: String, value: String) throws(KiteError) {
        self.append(try HTTPField(validatingName: name, value: value))
    }

    /// Sets a field named by a string, replacing every field of that name (Alamofire's
    /// `HTTPHeaders.update(name:value:)`).
    ///
    /// - Parameters:
    ///   - name: The field name: an HTTP token.
    ///   - value: The value: no CR, LF or NUL.
    /// - Throws: ``KiteError`` with code `invalidHeader` naming the bad name or value; nothing is changed.
    public mutating func update(name: String, value: String) throws(KiteError) {
        let field = try HTTPField(validatingName: name, value: value)
        self[fields: field.name] = [field]
    }
}

extension String {
    /// The string, or `nil` when it is empty.
    fileprivate var nonEmpty: String? { self.isEmpty ? nil : self }
}
