import Foundation

extension URLEncodedFormEncoder {
    /// How the key of an array element is written: the same strategy as ``URLEncoding/ArrayEncoding``.
    ///
    /// For `tags: ["a", "b"]`: `.brackets` gives `tags[]=a&tags[]=b`, `.noBrackets` `tags=a&tags=b`,
    /// `.indexInBrackets` `tags[0]=a&tags[1]=b`. Brackets are then escaped (`tags%5B%5D=a`) unless
    /// ``URLEncodedFormEncoder/allowedCharacters`` contains them.
    ///
    /// ```swift
    /// let encoder = URLEncodedFormEncoder(arrayEncoding: .custom { key, index in "\(key).\(index)" })
    /// ```
    public typealias ArrayEncoding = URLEncoding.ArrayEncoding

    /// How a Boolean is written: the same strategy as ``URLEncoding/BoolEncoding``.
    ///
    /// ```swift
    /// let encoder = URLEncodedFormEncoder(boolEncoding: .literal)  // flag=true
    /// ```
    public typealias BoolEncoding = URLEncoding.BoolEncoding

    /// How `Data` is written.
    ///
    /// ```swift
    /// let encoder = URLEncodedFormEncoder(dataEncoding: .custom { data in data.map { String($0) }.joined(separator: "-") })
    /// ```
    public enum DataEncoding: Sendable {
        /// `Data`'s own `Encodable` implementation: an array of bytes (`data[]=1&data[]=2`).
        case deferredToData
        /// Base64 text, the default.
        case base64
        /// The text a closure returns; an error it throws fails the encoding.
        case custom(@Sendable (Data) throws -> String)

        /// The text for `data`, or `nil` to use `Data`'s own `Encodable` implementation.
        func encode(_ data: Data) throws -> String? {
            switch self {
            case .deferredToData: nil
            case .base64: data.base64EncodedString()
            case .custom(let encode): try encode(data)
            }
        }
    }

    /// How a `Date` is written.
    ///
    /// `DateFormatter` is `Sendable` on this toolchain (swift-corelibs-foundation marks it so and
    /// guards it with a lock), so ``formatted(_:)`` is offered as in Alamofire.
    ///
    /// ```swift
    /// let encoder = URLEncodedFormEncoder(dateEncoding: .iso8601)  // date=1970-01-01T00%3A00%3A00Z
    /// ```
    public enum DateEncoding: Sendable {
        /// `Date`'s own `Encodable` implementation: seconds since 1 January 2001 as a `Double`
        /// (`0.0`), the default.
        case deferredToDate
        /// Seconds since 1 January 1970 as a `Double` (`1.5`).
        case secondsSince1970
        /// Milliseconds since 1 January 1970 as a `Double` (`1500.0`).
        case millisecondsSince1970
        /// ISO 8601 in UTC to the second, as `ISO8601DateFormatter` writes by default
        /// (`2001-01-01T00:00:00Z`).
        case iso8601
        /// The text a date formatter returns.
        case formatted(DateFormatter)
        /// The text a closure returns; an error it throws fails the encoding.
        case custom(@Sendable (Date) throws -> String)

        /// The text for `date`, or `nil` to use `Date`'s own `Encodable` implementation.
        func encode(_ date: Date) throws -> String? {
            switch self {
            case .deferredToDate: nil
            case .secondsSince1970: String(date.timeIntervalSince1970)
            case .millisecondsSince1970: String(date.timeIntervalSince1970 * 1000.0)
            case .iso8601: date.formatted(.iso8601)
            case .formatted(let formatter): formatter.string(from: date)
            case .custom(let encode): try encode(date)
            }
        }
    }

    /// How each key is rewritten before it is written.
    ///
    /// The conversion applies to every key on its own (`userName[firstName]` becomes
    /// `user_name[first_name]`), including dictionary keys, before key paths are joined.
    ///
    /// ```swift
    /// let encoder = URLEncodedFormEncoder(keyEncoding: .convertToSnakeCase)  // myURLValue -> my_url_value
    /// ```
    public enum KeyEncoding: Sendable {
        /// Keys as they are, the default.
        case useDefaultKeys
        /// `camelCase` to `snake_case`, exactly as `JSONEncoder.KeyEncodingStrategy.convertToSnakeCase`.
        case convertToSnakeCase
        /// `camelCase` to `kebab-case`, with the same word splitting as ``convertToSnakeCase``.
        case convertToKebabCase
        /// The first character uppercased (`oneTwo` to `OneTwo`).
        case capitalized
        /// Every character uppercased.
        case uppercased
        /// Every character lowercased.
        case lowercased
        /// The key a closure returns.
        case custom(@Sendable (String) -> String)

        func encode(_ key: String) -> String {
            switch self {
            case .useDefaultKeys: key
            case .convertToSnakeCase: Self.convert(key, separator: "_")
            case .convertToKebabCase: Self.convert(key, separator: "-")
            case .capitalized: key.prefix(1).uppercased() + key.dropFirst()
            case .uppercased: key.uppercased()
            case .lowercased: key.lowercased()
            case .custom(let encode): encode(key)
            }
        }

        /// `JSONEncoder`'s snake-case algorithm with a configurable separator: a word ends before an
        /// uppercase letter, and a run of uppercase letters is a word that ends before the capital
        /// that starts the next lowercase word (`myURLValue` → `my`, `url`, `value`).
        static func convert(_ key: String, separator: String) -> String {
            guard !key.isEmpty else { return key }
            var words: [Range<String.Index>] = []
            var wordStart = key.startIndex
            var searchRange = key.index(after: wordStart)..<key.endIndex
            while let upperCaseRange = key.rangeOfCharacter(from: .uppercaseLetters, options: [], range: searchRange) {
                words.append(wordStart..<upperCaseRange.lowerBound)
                searchRange = upperCaseRange.lowerBound..<searchRange.upperBound
                guard
                    let lowerCaseRange = key.rangeOfCharacter(from: .lowercaseLetters, options: [], range: searchRange)
                else {
                    wordStart = searchRange.lowerBound
                    break
                }
                let nextCharacterAfterCapital = key.index(after: upperCaseRange.lowerBound)
                if lowerCaseRange.lowerBound == nextCharacterAfterCapital {
                    wordStart = upperCaseRange.lowerBound
                } else {
                    let beforeLowerIndex = key.index(before: lowerCaseRange.lowerBound)
                    words.append(upperCaseRange.lowerBound..<beforeLowerIndex)
                    wordStart = beforeLowerIndex
                }
                searchRange = lowerCaseRange.upperBound..<searchRange.upperBound
            }
            words.append(wordStart..<searchRange.upperBound)
            return words.map { key[$0].lowercased() }.joined(separator: separator)
        }
    }

    /// How a nested key is joined to its parent's key.
    ///
    /// ```swift
    /// let encoder = URLEncodedFormEncoder(keyPathEncoding: .dots)  // user.name=kite
    /// let colons = URLEncodedFormEncoder.KeyPathEncoding { subkey in ":\(subkey)" }  // user%3Aname=kite
    /// ```
    public struct KeyPathEncoding: Sendable {
        /// `parent[child]`, the default.
        public static let brackets = KeyPathEncoding { "[\($0)]" }

        /// `parent.child`.
        public static let dots = KeyPathEncoding { ".\($0)" }

        private let encoding: @Sendable (String) -> String

        /// Creates a key path encoding from a closure that returns what to append to the parent's key.
        ///
        /// ```swift
        /// let encoding = URLEncodedFormEncoder.KeyPathEncoding { subkey in "/\(subkey)" }
        /// ```
        ///
        /// - Parameter encoding: Returns the text appended to the parent key for a nested key.
        public init(encoding: @escaping @Sendable (_ subkey: String) -> String) {
            self.encoding = encoding
        }

        func encodeKeyPath(_ keyPath: String) -> String {
            self.encoding(keyPath)
        }
    }

    /// How `nil` (an `Optional` property or element that is `nil`) is written.
    ///
    /// ```swift
    /// let encoder = URLEncodedFormEncoder(nilEncoding: .null)  // middleName=null
    /// ```
    public struct NilEncoding: Sendable {
        /// Leaves the key out, the default.
        public static let dropKey = NilEncoding { nil }

        /// Writes the key with an empty value (`key=`).
        public static let dropValue = NilEncoding { "" }

        /// Writes `null` (`key=null`).
        public static let null = NilEncoding { "null" }

        private let encoding: @Sendable () -> String?

        /// Creates a nil encoding from a closure that returns the text for `nil`, or `nil` to leave the key out.
        ///
        /// ```swift
        /// let encoding = URLEncodedFormEncoder.NilEncoding { "none" }
        /// ```
        ///
        /// - Parameter encoding: Returns the value written for `nil`, or `nil` to drop the key.
        public init(encoding: @escaping @Sendable () -> String?) {
            self.encoding = encoding
        }

        func encodeNil() -> String? {
            self.encoding()
        }
    }

    /// How a space is written.
    ///
    /// ```swift
    /// let encoder = URLEncodedFormEncoder(spaceEncoding: .plusReplaced)  // q=kite+flyer
    /// ```
    public enum SpaceEncoding: Sendable, Hashable {
        /// `%20`, the default.
        case percentEscaped
        /// `+`, as HTML forms do.
        case plusReplaced

        var replacement: String {
            switch self {
            case .percentEscaped: "%20"
            case .plusReplaced: "+"
            }
        }
    }
}
