import Foundation
import HTTPTypes

/// Encodes ``Parameters`` as a URL-encoded query string, in the URL or in the body.
///
/// Keys are sorted at every level, so the output is deterministic. Nested dictionaries become
/// `a[b]=c`, arrays `a[]=x` (see ``ArrayEncoding``), Booleans `1`/`0` (see
/// ``BoolEncoding``); `nil`, `Optional.none` and `NSNull` values are dropped, and any
/// other value is written as its text (`"\(value)"`). Keys and values are escaped with ``escape(_:)``.
///
/// When the query goes in the URL, it is appended to any query already there with `&`, and the
/// fragment is kept. When it goes in the body, the body is the query as UTF-8 and `Content-Type`
/// becomes `application/x-www-form-urlencoded; charset=utf-8` unless one was already set.
///
/// ```swift
/// let encoding = URLEncoding(destination: .queryString, arrayEncoding: .noBrackets, boolEncoding: .literal)
/// let draft = RequestDraft(url: URL(string: "https://example.com/search")!)
/// let encoded = try encoding.encode(draft, with: ["tag": ["a", "b"], "exact": true])
/// // https://example.com/search?exact=true&tag=a&tag=b
/// ```
public struct URLEncoding: ParameterEncoding {
    /// Where the encoded query goes.
    ///
    /// `.methodDependent` puts it in the URL for `GET`, `HEAD` and `DELETE` and in the body for any
    /// other method.
    ///
    /// ```swift
    /// let encoding = URLEncoding(destination: .httpBody)
    /// ```
    public enum Destination: Sendable, Hashable {
        /// The URL for `GET`, `HEAD` and `DELETE`; the body otherwise.
        case methodDependent
        /// Always the URL's query.
        case queryString
        /// Always the body.
        case httpBody

        func encodesInQuery(for method: HTTPRequest.Method) -> Bool {
            switch self {
            case .methodDependent: EncodingSupport.encodesInQuery(method)
            case .queryString: true
            case .httpBody: false
            }
        }
    }

    /// How the key of an array element is written.
    ///
    /// For `["a": ["x", "y"]]`: `.brackets` gives `a[]=x&a[]=y`, `.noBrackets` `a=x&a=y`,
    /// `.indexInBrackets` `a[0]=x&a[1]=y`. Brackets are escaped in the output (`a%5B%5D=x`).
    ///
    /// ```swift
    /// let encoding = URLEncoding(arrayEncoding: .custom { key, index in "\(key)(\(index))" })
    /// ```
    public enum ArrayEncoding: Sendable {
        /// `key[]`, the default.
        case brackets
        /// `key`.
        case noBrackets
        /// `key[index]`.
        case indexInBrackets
        /// The key a closure returns for the array's key and the element's index.
        case custom(@Sendable (_ key: String, _ index: Int) -> String)

        /// Returns the key for the element at `index` of the array at `key`.
        ///
        /// Nothing is escaped here; ``URLEncoding/escape(_:)`` escapes the result.
        ///
        /// ```swift
        /// URLEncoding.ArrayEncoding.indexInBrackets.encode(key: "a", atIndex: 2)  // "a[2]"
        /// ```
        ///
        /// - Parameters:
        ///   - key: The array's key.
        ///   - index: The element's index.
        /// - Returns: The element's key.
        public func encode(key: String, atIndex index: Int) -> String {
            switch self {
            case .brackets: "\(key)[]"
            case .noBrackets: key
            case .indexInBrackets: "\(key)[\(index)]"
            case .custom(let encode): encode(key, index)
            }
        }
    }

    /// How a Boolean is written.
    ///
    /// ```swift
    /// let encoding = URLEncoding(boolEncoding: .literal)  // flag=true
    /// ```
    public enum BoolEncoding: Sendable, Hashable {
        /// `1` and `0`, the default.
        case numeric
        /// `true` and `false`.
        case literal

        /// Returns the text for `value`.
        ///
        /// ```swift
        /// URLEncoding.BoolEncoding.numeric.encode(value: true)  // "1"
        /// ```
        ///
        /// - Parameter value: The Boolean.
        /// - Returns: `1`/`0` or `true`/`false`.
        public func encode(value: Bool) -> String {
            switch self {
            case .numeric: value ? "1" : "0"
            case .literal: value ? "true" : "false"
            }
        }
    }

    /// Method-dependent destination, brackets for arrays, numeric Booleans.
    ///
    /// ```swift
    /// let encoding: any ParameterEncoding = URLEncoding.default
    /// ```
    public static let `default` = URLEncoding()

    /// ``default`` already boxed as an existential: a default argument of `any ParameterEncoding`
    /// would otherwise box `URLEncoding` (larger than an existential's inline buffer) on every call.
    @usableFromInline static let defaultAsParameterEncoding: any ParameterEncoding = URLEncoding.default

    /// Always in the URL's query, brackets for arrays, numeric Booleans.
    ///
    /// ```swift
    /// let encoding: any ParameterEncoding = URLEncoding.queryString
    /// ```
    public static let queryString = URLEncoding(destination: .queryString)

    /// Always in the body, brackets for arrays, numeric Booleans.
    ///
    /// ```swift
    /// let encoding: any ParameterEncoding = URLEncoding.httpBody
    /// ```
    public static let httpBody = URLEncoding(destination: .httpBody)

    /// Where the query goes.
    public let destination: Destination

    /// How array element keys are written.
    public let arrayEncoding: ArrayEncoding

    /// How Booleans are written.
    public let boolEncoding: BoolEncoding

    /// Creates an encoding.
    ///
    /// ```swift
    /// let encoding = URLEncoding(destination: .queryString, arrayEncoding: .indexInBrackets)
    /// ```
    ///
    /// - Parameters:
    ///   - destination: Where the query goes; method-dependent by default.
    ///   - arrayEncoding: How array element keys are written; `key[]` by default.
    ///   - boolEncoding: How Booleans are written; `1`/`0` by default.
    public init(
        destination: Destination = .methodDependent,
        arrayEncoding: ArrayEncoding = .brackets,
        boolEncoding: BoolEncoding = .numeric
    ) {
        self.destination = destination
        self.arrayEncoding = arrayEncoding
        self.boolEncoding = boolEncoding
    }

    /// Returns the draft with `parameters` encoded into its URL's query or its body.
    ///
    /// ```swift
    /// let draft = RequestDraft(method: .post, url: URL(string: "https://example.com/form")!)
    /// let encoded = try URLEncoding.default.encode(draft, with: ["name": "Kite Flyer"])
    /// // body "name=Kite%20Flyer", Content-Type application/x-www-form-urlencoded; charset=utf-8
    /// ```
    ///
    /// - Parameters:
    ///   - draft: The request so far.
    ///   - parameters: The parameters; `nil` leaves the draft unchanged.
    /// - Returns: The changed draft.
    /// - Throws: ``KiteError`` with code `parameterEncodingFailed` when the URL cannot take a query.
    public func encode(_ draft: RequestDraft, with parameters: Parameters?) throws -> RequestDraft {
        guard let parameters else { return draft }
        let query = self.query(parameters)
        if self.destination.encodesInQuery(for: draft.method) {
            return try EncodingSupport.appendingQuery(query, to: draft)
        }
        return EncodingSupport.settingBody(
            Data(query.utf8),
            contentType: "application/x-www-form-urlencoded; charset=utf-8",
            on: draft
        )
    }

    /// Returns the escaped `key=value` pairs for one parameter, recursing into arrays and dictionaries.
    ///
    /// Dictionary keys are sorted; array elements keep their order; `nil`, `Optional.none` and
    /// `NSNull` give no pairs, and so do empty arrays and dictionaries.
    ///
    /// ```swift
    /// URLEncoding.default.queryComponents(fromKey: "a", value: ["b": [1, 2]])
    /// // [("a%5Bb%5D%5B%5D", "1"), ("a%5Bb%5D%5B%5D", "2")]
    /// ```
    ///
    /// - Parameters:
    ///   - key: The parameter's key, unescaped.
    ///   - value: The parameter's value.
    /// - Returns: The escaped key and value of every pair, in order.
    public func queryComponents(fromKey key: String, value: Any) -> [(String, String)] {
        guard let value = EncodingSupport.unwrapped(value), !(value is NSNull) else { return [] }
        if let bool = EncodingSupport.boolValue(of: value) {
            return [(self.escape(key), self.escape(self.boolEncoding.encode(value: bool)))]
        }
        if let number = EncodingSupport.number(value) {
            return [(self.escape(key), self.escape("\(number)"))]
        }
        if let dictionary = value as? [String: Any] {
            var components: [(String, String)] = []
            for (nestedKey, nestedValue) in dictionary.sorted(by: { $0.key < $1.key }) {
                components += self.queryComponents(fromKey: "\(key)[\(nestedKey)]", value: nestedValue)
            }
            return components
        }
        if let array = value as? [Any] {
            var components: [(String, String)] = []
            for (index, element) in array.enumerated() {
                components += self.queryComponents(
                    fromKey: self.arrayEncoding.encode(key: key, atIndex: index),
                    value: element
                )
            }
            return components
        }
        return [(self.escape(key), self.escape("\(value)"))]
    }

    /// Percent-escapes a key or value for a query.
    ///
    /// Every UTF-8 byte outside RFC 3986's unreserved characters (`A-Z a-z 0-9 - . _ ~`) is escaped,
    /// except `?` and `/`, which RFC 3986 allows in a query. So `:#[]@!$&'()*+,;=`, space (`%20`),
    /// `%` and every non-ASCII character (as its UTF-8 bytes) are escaped.
    ///
    /// ```swift
    /// URLEncoding.default.escape("a b&c/d?👍")  // "a%20b%26c/d?%F0%9F%91%8D"
    /// ```
    ///
    /// - Parameter string: The text to escape.
    /// - Returns: The escaped text.
    public func escape(_ string: String) -> String {
        EncodingSupport.percentEscape(string, isAllowed: EncodingSupport.isQueryAllowed)
    }

    /// The whole query for `parameters`: top-level keys sorted, pairs joined with `&`.
    func query(_ parameters: Parameters) -> String {
        var components: [(String, String)] = []
        for (key, value) in parameters.sorted(by: { $0.key < $1.key }) {
            components += self.queryComponents(fromKey: key, value: value)
        }
        return components.map { "\($0)=\($1)" }.joined(separator: "&")
    }
}
