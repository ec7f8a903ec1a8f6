import Foundation

/// Encodes an `Encodable` value as `application/x-www-form-urlencoded` text, Alamofire style.
///
/// The value must encode as keyed data, such as a struct or a `[String: …]` dictionary. Nested values
/// become key paths (`user[name]=kite`, see ``KeyPathEncoding``), arrays repeat their key
/// (`tags[]=a&tags[]=b`, see ``ArrayEncoding``), and every key and value is
/// percent-escaped: every character outside ``allowedCharacters`` is written as the `%XX` of its
/// UTF-8 bytes, and a space as `%20` or `+` (see ``SpaceEncoding``). A `Set`'s elements, which it
/// encodes in its hash order, are sorted by their text (`Set([9, 10])` gives `10` before `9`), so the
/// output is deterministic.
///
/// The encoder is immutable and `Sendable`; configure it through its initializer. It is a real
/// `Encoder`: it never goes through JSON, and `Date`, `Data`, `Decimal` and `URL` values are
/// recognised wherever they appear.
///
/// ```swift
/// struct Search: Encodable {
///     let query: String
///     let page: Int
///     let filters: [String: Bool]
/// }
/// let encoder = URLEncodedFormEncoder(boolEncoding: .literal, spaceEncoding: .plusReplaced)
/// let text: String = try encoder.encode(Search(query: "kite flyer", page: 2, filters: ["new": true]))
/// // filters%5Bnew%5D=true&page=2&query=kite+flyer
/// ```
public final class URLEncodedFormEncoder: Sendable {
    /// Whether the pairs at each level are sorted by their (key-encoded) key, so output is deterministic.
    ///
    /// When `false`, keys keep the order in which the value encoded them. Array elements always keep
    /// their order.
    public let alphabetizeKeyValuePairs: Bool

    /// How array element keys are written.
    public let arrayEncoding: ArrayEncoding

    /// How Booleans are written.
    public let boolEncoding: BoolEncoding

    /// How `Data` is written.
    public let dataEncoding: DataEncoding

    /// How `Date` is written.
    public let dateEncoding: DateEncoding

    /// How each key is rewritten.
    public let keyEncoding: KeyEncoding

    /// How nested keys are joined to their parent key.
    public let keyPathEncoding: KeyPathEncoding

    /// How `nil` is written.
    public let nilEncoding: NilEncoding

    /// How spaces are written.
    public let spaceEncoding: SpaceEncoding

    /// The characters written as they are; every other character is percent-escaped.
    ///
    /// Only ASCII characters are ever left unescaped; a space is written as ``spaceEncoding`` says.
    /// The default is the same set as ``URLEncoding/escape(_:)`` uses: `A-Z a-z 0-9 - . _ ~ ? /`.
    public let allowedCharacters: CharacterSet

    /// The default set of ``allowedCharacters``: RFC 3986 unreserved characters plus `?` and `/`.
    ///
    /// ```swift
    /// let encoder = URLEncodedFormEncoder(
    ///     allowedCharacters: URLEncodedFormEncoder.defaultAllowedCharacters.union(CharacterSet(charactersIn: "[]"))
    /// )
    /// ```
    public static var defaultAllowedCharacters: CharacterSet { EncodingSupport.queryAllowedCharacters }

    /// Creates an encoder; every argument has Alamofire's default.
    ///
    /// ```swift
    /// let encoder = URLEncodedFormEncoder(arrayEncoding: .noBrackets, keyEncoding: .convertToSnakeCase)
    /// ```
    ///
    /// - Parameters:
    ///   - alphabetizeKeyValuePairs: Whether keys are sorted at each level; `true` by default.
    ///   - arrayEncoding: How array element keys are written; `key[]` by default.
    ///   - boolEncoding: How Booleans are written; `1`/`0` by default.
    ///   - dataEncoding: How `Data` is written; Base64 by default.
    ///   - dateEncoding: How `Date` is written; `Date`'s own `Encodable` implementation by default.
    ///   - keyEncoding: How keys are rewritten; unchanged by default.
    ///   - keyPathEncoding: How nested keys are joined; `parent[child]` by default.
    ///   - nilEncoding: How `nil` is written; the key is dropped by default.
    ///   - spaceEncoding: How spaces are written; `%20` by default.
    ///   - allowedCharacters: The characters left unescaped; ``defaultAllowedCharacters`` by default.
    public init(
        alphabetizeKeyValuePairs: Bool = true,
        arrayEncoding: ArrayEncoding = .brackets,
        boolEncoding: BoolEncoding = .numeric,
        dataEncoding: DataEncoding = .base64,
        dateEncoding: DateEncoding = .deferredToDate,
        keyEncoding: KeyEncoding = .useDefaultKeys,
        keyPathEncoding: KeyPathEncoding = .brackets,
        nilEncoding: NilEncoding = .dropKey,
        spaceEncoding: SpaceEncoding = .percentEscaped,
        allowedCharacters: CharacterSet = URLEncodedFormEncoder.defaultAllowedCharacters
    ) {
        self.alphabetizeKeyValuePairs = alphabetizeKeyValuePairs
        self.arrayEncoding = arrayEncoding
        self.boolEncoding = boolEncoding
        self.dataEncoding = dataEncoding
        self.dateEncoding = dateEncoding
        self.keyEncoding = keyEncoding
        self.keyPathEncoding = keyPathEncoding
        self.nilEncoding = nilEncoding
        self.spaceEncoding = spaceEncoding
        self.allowedCharacters = allowedCharacters
    }

    /// Encodes a value as form-encoded text.
    ///
    /// ```swift
    /// let text: String = try URLEncodedFormEncoder().encode(["name": "Kite", "tags": "a&b"])
    /// // name=Kite&tags=a%26b
    /// ```
    ///
    /// - Parameter value: The value; it must encode as keyed data (a struct, a class or a
    ///   `[String: …]` dictionary).
    /// - Returns: The `key=value` pairs joined with `&`; an empty string when there are none.
    /// - Throws: ``KiteError`` with code `parameterEncodingFailed` when the top-level value is not keyed,
    ///   or when the value, a strategy closure or `encode(to:)` fails; the message names the key path.
    public func encode(_ value: any Encodable) throws -> String {
        let root = try self.encodeTree(value)
        return FormSerializer(encoder: self).serialize(root)
    }

    /// Encodes a value as form-encoded text in UTF-8.
    ///
    /// ```swift
    /// let body: Data = try URLEncodedFormEncoder().encode(["name": "Kite"])
    /// ```
    ///
    /// - Parameter value: The value; it must encode as keyed data (a struct, a class or a
    ///   `[String: …]` dictionary).
    /// - Returns: The UTF-8 bytes of the text the `String` overload returns.
    /// - Throws: ``KiteError`` with code `parameterEncodingFailed`, as the `String` overload does.
    public func encode(_ value: any Encodable) throws -> Data {
        let text: String = try self.encode(value)
        return Data(text.utf8)
    }

    /// Runs `value.encode(to:)` into a tree and checks that the root is keyed.
    private func encodeTree(_ value: any Encodable) throws(KiteError) -> FormObject {
        let slot = FormSlot()
        let options = FormEncodingOptions(
            boolEncoding: self.boolEncoding,
            dataEncoding: self.dataEncoding,
            dateEncoding: self.dateEncoding,
            nilEncoding: self.nilEncoding
        )
        do {
            try FormValueEncoding.encode(value, into: slot, codingPath: [], options: options)
        } catch let error as KiteError {
            throw error
        } catch let error as FormEncodingFailure {
            throw EncodingSupport.failure(error.description, underlyingError: error.underlyingError)
        } catch {
            throw EncodingSupport.failure(
                "URLEncodedFormEncoder could not encode a value of type \(EncodingSupport.typeName(of: value)): \(error)",
                underlyingError: error
            )
        }
        switch slot.node {
        case .object(let object):
            return object
        case .string, .array, nil:
            throw EncodingSupport.failure(
                "URLEncodedFormEncoder can only encode a keyed value (a struct, a class or a [String: …] dictionary)"
                    + " at the top level, not a value of type \(EncodingSupport.typeName(of: value))"
                    + " that encodes as \(slot.node?.kindDescription ?? "nothing")"
            )
        }
    }
}
