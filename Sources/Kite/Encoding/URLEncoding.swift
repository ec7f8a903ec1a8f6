import Foundation
import HTTPTypes

/// Encodes ``Parameters`` as a URL-encoded query string, in the URL or in the body.
///
/// Keys are sorted at every level, so the output is deterministic. Nested dictionaries become
/// `a[b]=c`, arrays `a[]=x` (see ``ArrayEncoding``), Booleans `1`/`0` (see
/// ``BoolEncoding``); `nil`, `Optional.none` and `NSNull` values are dropped, or written as a bare
/// key with no `=` (see ``NullEncoding``), and any other value is written as its text
/// (`"\(value)"`). Keys and values are escaped with ``escape(_:)``.
///
/// A `Set` (or `NSSet`) is written like an array whose elements are sorted by their text, so its
/// output is deterministic too, as AFNetworking's is: `["tags": Set(["b", "a"])]` gives
/// `tags[]=a&tags[]=b`. Numbers in a set are sorted as text, as AFNetworking sorts them by their
/// `description`: `Set([10, 9, 1])` gives `1`, `10`, `9`. The element keys follow ``ArrayEncoding``;
/// AFNetworking writes a set's elements under the bare key (`tags=a&tags=b`), which is what
/// ``ArrayEncoding/noBrackets`` gives.
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
///
/// AFNetworking's query strings (sorted sets under the bare key, `NSNull` as a bare key) come from:
///
/// ```swift
/// let afnetworking = URLEncoding(destination: .queryString, arrayEncoding: .noBrackets, nullEncoding: .bareKey)
/// let draft = RequestDraft(url: URL(string: "https://example.com/search")!)
/// let encoded = try afnetworking.encode(draft, with: ["a": 1, "flag": NSNull(), "tags": Set(["y", "x"])])
/// // https://example.com/search?a=1&flag&tags=x&tags=y
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

    /// How a null value is written: `nil`, `Optional.none` or `NSNull`.
    ///
    /// For `["a": 1, "flag": NSNull(), "z": 2]`: `.dropKey` gives `a=1&z=2`, `.bareKey`
    /// `a=1&flag&z=2`, as AFNetworking writes `NSNull`. The rule applies at every level, so a null
    /// array element or nested value under `.bareKey` gives `list[]` or `user[nick]`. In a body, the
    /// form is the same text; in a multipart form (``MultipartFormData/append(parameters:encoding:)``)
    /// a bare key is a field with an empty value.
    ///
    /// ```swift
    /// let encoding = URLEncoding(destination: .queryString, nullEncoding: .bareKey)
    /// let draft = RequestDraft(url: URL(string: "https://example.com/search")!)
    /// let encoded = try encoding.encode(draft, with: ["a": 1, "flag": NSNull(), "z": 2])
    /// // https://example.com/search?a=1&flag&z=2
    /// ```
    public enum NullEncoding: Sendable, Hashable {
        /// No pair at all, the default.
        case dropKey
        /// The key alone, with no `=` and no value.
        case bareKey
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

    /// How `nil`, `Optional.none` and `NSNull` are written.
    public let nullEncoding: NullEncoding

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
    ///   - nullEncoding: How `nil`, `Optional.none` and `NSNull` are written; dropped by default.
    public init(
        destination: Destination = .methodDependent,
        arrayEncoding: ArrayEncoding = .brackets,
        boolEncoding: BoolEncoding = .numeric,
        nullEncoding: NullEncoding = .dropKey
    ) {
        self.destination = destination
        self.arrayEncoding = arrayEncoding
        self.boolEncoding = boolEncoding
        self.nullEncoding = nullEncoding
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

    /// Returns the escaped `key=value` pairs for one parameter, recursing into arrays, sets and dictionaries.
    ///
    /// Dictionary keys are sorted; array elements keep their order; set elements are sorted by their
    /// text; `nil`, `Optional.none` and `NSNull` give no pairs (with ``NullEncoding/bareKey``, one pair
    /// whose value is empty: joined with `=` it reads `key=`, while ``encode(_:with:)`` writes the bare
    /// `key`); empty arrays, sets and dictionaries give no pairs.
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
        var pairs: [Pair] = []
        self.appendPairs(forKey: key, value: value, to: &pairs)
        return pairs.map { (self.escape($0.key), self.escape($0.value ?? "")) }
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

    /// The whole query for `parameters`: top-level keys sorted, pairs joined with `&`, a bare key
    /// (a null under ``NullEncoding/bareKey``) without `=`.
    func query(_ parameters: Parameters) -> String {
        self.pairs(parameters)
            .map { pair in
                guard let value = pair.value else { return self.escape(pair.key) }
                return "\(self.escape(pair.key))=\(self.escape(value))"
            }
            .joined(separator: "&")
    }

    /// One flattened parameter, neither part escaped: a key such as `user[tags][]` and its text, or
    /// `nil` for a bare key.
    typealias Pair = (key: String, value: String?)

    /// The unescaped pairs of `parameters`, top-level keys sorted; the one flattener behind queries,
    /// form bodies and ``MultipartFormData/append(parameters:encoding:)``.
    func pairs(_ parameters: Parameters) -> [Pair] {
        var pairs: [Pair] = []
        for (key, value) in parameters.sorted(by: { $0.key < $1.key }) {
            self.appendPairs(forKey: key, value: value, to: &pairs)
        }
        return pairs
    }

    /// Appends the unescaped pairs of one parameter, recursing into dictionaries, arrays and sets.
    private func appendPairs(forKey key: String, value: Any, to pairs: inout [Pair]) {
        guard let value = Self.normalized(value), !(value is NSNull) else {
            if self.nullEncoding == .bareKey {
                pairs.append((key, nil))
            }
            return
        }
        if let bool = EncodingSupport.boolValue(of: value) {
            pairs.append((key, self.boolEncoding.encode(value: bool)))
        } else if let number = EncodingSupport.number(value) {
            pairs.append((key, "\(number)"))
        } else if let text = value as? String {
            pairs.append((key, text))
        } else if let dictionary = value as? [String: Any] {
            for (nestedKey, nestedValue) in dictionary.sorted(by: { $0.key < $1.key }) {
                self.appendPairs(forKey: "\(key)[\(nestedKey)]", value: nestedValue, to: &pairs)
            }
        } else if let array = value as? [Any] {
            self.appendElements(array, forKey: key, to: &pairs)
        } else if let elements = Self.setElements(of: value) {
            self.appendElements(self.sortedByText(elements), forKey: key, to: &pairs)
        } else {
            pairs.append((key, "\(value)"))
        }
    }

    private func appendElements(_ elements: [Any], forKey key: String, to pairs: inout [Pair]) {
        for (index, element) in elements.enumerated() {
            self.appendPairs(forKey: self.arrayEncoding.encode(key: key, atIndex: index), value: element, to: &pairs)
        }
    }

    /// A set's elements in a deterministic order: by the text of their pairs under an empty key, so
    /// scalars sort by their text (`"10"` before `"9"`) and nested values by their flattened form.
    ///
    /// Elements that tie give the same pairs, so their relative order cannot show in the output.
    private func sortedByText(_ elements: [Any]) -> [Any] {
        let keyed = elements.map { element -> (element: Any, text: String) in
            var pairs: [Pair] = []
            self.appendPairs(forKey: "", value: element, to: &pairs)
            return (element, pairs.map { $0.key + ($0.value.map { "=" + $0 } ?? "") }.joined(separator: "&"))
        }
        return keyed.sorted { $0.text < $1.text }.map(\.element)
    }

    /// `value` without any `Optional` or `AnyHashable` wrapping (so `Set<AnyHashable>` elements keep
    /// their types), or `nil` when it is `nil` or `Optional.none`.
    private static func normalized(_ value: Any) -> Any? {
        guard let value = EncodingSupport.unwrapped(value) else { return nil }
        if type(of: value) == AnyHashable.self, let hashable = value as? AnyHashable {
            return self.normalized(hashable.base)
        }
        return value
    }

    /// The elements of a Swift `Set` or an `NSSet`, in no particular order; `nil` for anything else.
    private static func setElements(of value: Any) -> [Any]? {
        if let set = value as? any UnorderedSetValue {
            return set.unorderedElements
        }
        if let set = value as? NSSet {
            return set.allObjects
        }
        return nil
    }
}

/// Lets the encoders find a Swift `Set` of any element type held as `Any`, whose iteration order is
/// its hash order, so they can sort its elements.
protocol UnorderedSetValue {
    var unorderedElements: [Any] { get }
}

extension Set: UnorderedSetValue {
    var unorderedElements: [Any] {
        self.map { $0 as Any }
    }
}
