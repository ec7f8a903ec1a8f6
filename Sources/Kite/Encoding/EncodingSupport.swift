import Foundation
import HTTPTypes

/// Helpers shared by the parameter encodings and encoders in this folder.
enum EncodingSupport {
    /// The bytes RFC 3986 calls unreserved (`A-Z a-z 0-9 - . _ ~`) plus `?` and `/`, which may stay
    /// unescaped in a query.
    static func isQueryAllowed(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "?"),
            UInt8(ascii: "/"):
            true
        default:
            false
        }
    }

    /// The characters ``isQueryAllowed(_:)`` accepts, as a `CharacterSet`.
    static let queryAllowedCharacters = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~?/"
    )

    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    /// Percent-encodes every UTF-8 byte of `string` for which `isAllowed` is false, with uppercase hex.
    static func percentEscape(_ string: String, isAllowed: (UInt8) -> Bool) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(string.utf8.count)
        for byte in string.utf8 {
            if isAllowed(byte) {
                bytes.append(byte)
            } else {
                bytes.append(UInt8(ascii: "%"))
                bytes.append(Self.hexDigits[Int(byte >> 4)])
                bytes.append(Self.hexDigits[Int(byte & 0x0F)])
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Whether `method` puts parameters in the query when the destination depends on the method.
    static func encodesInQuery(_ method: HTTPRequest.Method) -> Bool {
        method == .get || method == .head || method == .delete
    }

    /// The draft with `query` appended to its URL's query with `&`, keeping the fragment.
    ///
    /// An empty `query` leaves the draft unchanged, so no lone `?` is added.
    static func appendingQuery(_ query: String, to draft: RequestDraft) throws(KiteError) -> RequestDraft {
        guard !query.isEmpty else { return draft }
        guard self.isValidPercentEncodedQuery(query) else {
            throw self.failure(
                "the encoded query \"\(query)\" holds characters a URL query cannot contain unescaped;"
                    + " remove them from the encoder's allowed characters"
            )
        }
        guard var components = URLComponents(url: draft.url, resolvingAgainstBaseURL: false) else {
            throw self.failure("URL \"\(draft.url.absoluteString)\" could not be split into components to add a query")
        }
        if let existing = components.percentEncodedQuery, !existing.isEmpty {
            components.percentEncodedQuery = existing + "&" + query
        } else {
            components.percentEncodedQuery = query
        }
        guard let url = components.url else {
            throw self.failure("URL \"\(draft.url.absoluteString)\" could not be rebuilt with the query \"\(query)\"")
        }
        var draft = draft
        draft.url = url
        return draft
    }

    /// Whether `query` only holds characters RFC 3986 allows in a query, and `%` only before two hex digits.
    ///
    /// `URLComponents` traps when given anything else, so queries are checked before they reach it.
    static func isValidPercentEncodedQuery(_ query: String) -> Bool {
        let bytes = Array(query.utf8)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < bytes.count, self.isHexDigit(bytes[index + 1]), self.isHexDigit(bytes[index + 2])
                else { return false }
                index += 3
                continue
            }
            guard self.isQueryAllowed(byte) || self.isSubDelimiterOrColonOrAt(byte) else { return false }
            index += 1
        }
        return true
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "A")...UInt8(ascii: "F"),
            UInt8(ascii: "a")...UInt8(ascii: "f"):
            true
        default:
            false
        }
    }

    private static func isSubDelimiterOrColonOrAt(_ byte: UInt8) -> Bool {
        "!$&'()*+,;=:@".utf8.contains(byte)
    }

    /// The draft with `body` as its body and `contentType` as its `Content-Type` unless one was set.
    static func settingBody(_ body: Data, contentType: String, on draft: RequestDraft) -> RequestDraft {
        var draft = draft
        if draft.headerFields[.contentType] == nil {
            draft.headerFields[.contentType] = contentType
        }
        draft.body = body
        return draft
    }

    /// A `parameterEncodingFailed` error.
    static func failure(_ message: String, underlyingError: (any Error)? = nil) -> KiteError {
        KiteError(code: .parameterEncodingFailed, message: message, underlyingError: underlyingError)
    }

    /// `value` with any layers of `Optional` removed, or `nil` when one of them is `none`.
    static func unwrapped(_ value: Any) -> Any? {
        guard let optional = value as? any OptionalValue else { return value }
        guard let wrapped = optional.wrappedValue else { return nil }
        return self.unwrapped(wrapped)
    }

    /// Whether `value` is `nil`, `Optional.none` or `NSNull`.
    static func isNull(_ value: Any?) -> Bool {
        guard let value, let unwrapped = self.unwrapped(value) else { return true }
        return unwrapped is NSNull
    }

    /// The Boolean `value` holds, when it is a Swift `Bool` or an `NSNumber` made from one.
    ///
    /// On Linux `NSNumber(value: 1) is Bool` is true, so a plain cast cannot tell `1` from `true`;
    /// this looks at the dynamic type instead.
    static func boolValue(of value: Any) -> Bool? {
        if type(of: value) == Bool.self {
            return value as? Bool
        }
        if let number = self.number(value), type(of: number) == self.booleanNumberType {
            return number.boolValue
        }
        return nil
    }

    /// The `NSNumber` `value` is, when its dynamic type is an `NSNumber` class (not a bridged Swift number).
    static func number(_ value: Any) -> NSNumber? {
        guard type(of: value) is NSNumber.Type else { return nil }
        return value as? NSNumber
    }

    private static let booleanNumberType: NSNumber.Type = type(of: NSNumber(value: true))

    /// A key path such as `user.tags[2].name` for messages.
    static func describe(_ path: [PathComponent]) -> String {
        var text = ""
        for component in path {
            switch component {
            case .key(let key):
                text += text.isEmpty ? key : ".\(key)"
            case .index(let index):
                text += "[\(index)]"
            }
        }
        return text
    }

    /// `at "a.b"` or `at the top level`, for messages.
    static func location(_ path: [PathComponent]) -> String {
        path.isEmpty ? "at the top level" : "at \"\(self.describe(path))\""
    }

    /// The name of the dynamic type of `value`, such as `Date`.
    static func typeName(of value: Any) -> String {
        String(describing: type(of: value))
    }

    /// One step of a key path.
    enum PathComponent {
        case key(String)
        case index(Int)
    }
}

/// Lets `EncodingSupport.unwrapped(_:)` look inside an `Optional` held as `Any`.
protocol OptionalValue {
    var wrappedValue: Any? { get }
}

extension Optional: OptionalValue {
    var wrappedValue: Any? {
        switch self {
        case .some(let value): value
        case .none: nil
        }
    }
}
