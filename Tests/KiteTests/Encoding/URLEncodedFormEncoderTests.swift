import Foundation
import Kite
import Testing

struct FormCase: Sendable, CustomTestStringConvertible {
    let name: String
    var encoder = URLEncodedFormEncoder()
    let value: any Encodable & Sendable
    let expected: String
    var testDescription: String { self.name }
}

private struct Flat: Encodable, Sendable {
    let name: String
    let age: Int
    let active: Bool
}

private struct CamelKeys: Encodable, Sendable {
    struct Inner: Encodable, Sendable {
        let firstName: String
    }

    let myURLValue: Int
    let userName: String
    let nested: Inner
}

private struct Optionals: Encodable, Sendable {
    let a: Int?
    let b: String?
    let c: Int
}

private struct Dated: Encodable, Sendable {
    let date: Date
}

private struct WithData: Encodable, Sendable {
    let data: Data
}

private struct Numbers: Encodable, Sendable {
    let double: Double
    let whole: Double
    let float: Float
    let int8: Int8
    let uint64: UInt64
    let decimal: Decimal
}

private enum Color: String, Encodable, Sendable {
    case red
}

private struct Misc: Encodable, Sendable {
    let color: Color
    let url: URL
    let empty: [Int]
    let emptyObject: [String: Int]
    let nan: Double
}

private struct Empty: Encodable, Sendable {}

private let utcFormatter: DateFormatter = {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "UTC")
    formatter.dateFormat = "yyyy-MM-dd HH:mm"
    return formatter
}()

@Suite("URLEncodedFormEncoder")
struct URLEncodedFormEncoderTests {
    static let date = Date(timeIntervalSince1970: 1.5)

    static let cases: [FormCase] = [
        // Keys and Booleans.
        .init(
            name: "flat struct, sorted",
            value: Flat(name: "Kite", age: 3, active: true),
            expected: "active=1&age=3&name=Kite"
        ),
        .init(
            name: "encoding order when not alphabetized",
            encoder: URLEncodedFormEncoder(alphabetizeKeyValuePairs: false),
            value: Flat(name: "Kite", age: 3, active: false),
            expected: "name=Kite&age=3&active=0"
        ),
        .init(
            name: "bool literal",
            encoder: URLEncodedFormEncoder(boolEncoding: .literal),
            value: Flat(name: "Kite", age: 3, active: true),
            expected: "active=true&age=3&name=Kite"
        ),
        .init(
            name: "bools in arrays and dictionaries",
            encoder: URLEncodedFormEncoder(boolEncoding: .literal),
            value: ["list": [true, false]],
            expected: "list%5B%5D=true&list%5B%5D=false"
        ),
        // Arrays.
        .init(name: "array brackets", value: ["tags": ["a", "b"]], expected: "tags%5B%5D=a&tags%5B%5D=b"),
        .init(
            name: "array noBrackets",
            encoder: URLEncodedFormEncoder(arrayEncoding: .noBrackets),
            value: ["tags": ["a", "b"]],
            expected: "tags=a&tags=b"
        ),
        .init(
            name: "array indexInBrackets",
            encoder: URLEncodedFormEncoder(arrayEncoding: .indexInBrackets),
            value: ["tags": ["a", "b"]],
            expected: "tags%5B0%5D=a&tags%5B1%5D=b"
        ),
        .init(
            name: "array custom",
            encoder: URLEncodedFormEncoder(arrayEncoding: .custom { key, index in "\(key).\(index)" }),
            value: ["tags": ["a", "b"]],
            expected: "tags.0=a&tags.1=b"
        ),
        .init(name: "array order kept", value: ["v": [3, 1, 2]], expected: "v%5B%5D=3&v%5B%5D=1&v%5B%5D=2"),
        .init(
            name: "nested arrays",
            value: ["m": [[1, 2], [3]]],
            expected: "m%5B%5D%5B%5D=1&m%5B%5D%5B%5D=2&m%5B%5D%5B%5D=3"
        ),
        .init(
            name: "nested arrays indexed",
            encoder: URLEncodedFormEncoder(arrayEncoding: .indexInBrackets),
            value: ["m": [[1, 2], [3]]],
            expected: "m%5B0%5D%5B0%5D=1&m%5B0%5D%5B1%5D=2&m%5B1%5D%5B0%5D=3"
        ),
        .init(
            name: "array of dictionaries",
            value: ["items": [["id": 1, "x": 2], ["id": 3]]],
            expected: "items%5B%5D%5Bid%5D=1&items%5B%5D%5Bx%5D=2&items%5B%5D%5Bid%5D=3"
        ),
        .init(
            name: "array of dictionaries indexed with dots",
            encoder: URLEncodedFormEncoder(arrayEncoding: .indexInBrackets, keyPathEncoding: .dots),
            value: ["items": [["id": 1], ["id": 3]]],
            expected: "items%5B0%5D.id=1&items%5B1%5D.id=3"
        ),
        // Nesting and sorting.
        .init(
            name: "nested three deep",
            value: ["a": ["b": ["c": ["d": 1]]]],
            expected: "a%5Bb%5D%5Bc%5D%5Bd%5D=1"
        ),
        .init(
            name: "keys sorted at every level",
            value: ["z": ["b": ["y": 1, "x": 2], "a": ["y": 3]], "a": ["d": ["k": 1], "c": ["k": 2]]],
            expected: "a%5Bc%5D%5Bk%5D=2&a%5Bd%5D%5Bk%5D=1&z%5Ba%5D%5By%5D=3&z%5Bb%5D%5Bx%5D=2&z%5Bb%5D%5By%5D=1"
        ),
        .init(name: "empty struct", value: Empty(), expected: ""),
        .init(name: "empty dictionary", value: [String: Int](), expected: ""),
        // Key paths.
        .init(name: "key path brackets", value: ["user": ["name": "kite"]], expected: "user%5Bname%5D=kite"),
        .init(
            name: "key path dots",
            encoder: URLEncodedFormEncoder(keyPathEncoding: .dots),
            value: ["user": ["name": ["first": "kite"]]],
            expected: "user.name.first=kite"
        ),
        .init(
            name: "key path custom",
            encoder: URLEncodedFormEncoder(keyPathEncoding: .init { "/\($0)" }),
            value: ["user": ["name": "kite"]],
            expected: "user/name=kite"
        ),
        // Key encodings.
        .init(
            name: "keys default",
            value: CamelKeys(myURLValue: 1, userName: "x", nested: .init(firstName: "y")),
            expected: "myURLValue=1&nested%5BfirstName%5D=y&userName=x"
        ),
        .init(
            name: "keys snake_case",
            encoder: URLEncodedFormEncoder(keyEncoding: .convertToSnakeCase),
            value: CamelKeys(myURLValue: 1, userName: "x", nested: .init(firstName: "y")),
            expected: "my_url_value=1&nested%5Bfirst_name%5D=y&user_name=x"
        ),
        .init(
            name: "keys kebab-case",
            encoder: URLEncodedFormEncoder(keyEncoding: .convertToKebabCase),
            value: CamelKeys(myURLValue: 1, userName: "x", nested: .init(firstName: "y")),
            expected: "my-url-value=1&nested%5Bfirst-name%5D=y&user-name=x"
        ),
        .init(
            name: "keys capitalized",
            encoder: URLEncodedFormEncoder(keyEncoding: .capitalized),
            value: CamelKeys(myURLValue: 1, userName: "x", nested: .init(firstName: "y")),
            expected: "MyURLValue=1&Nested%5BFirstName%5D=y&UserName=x"
        ),
        .init(
            name: "keys uppercased",
            encoder: URLEncodedFormEncoder(keyEncoding: .uppercased),
            value: CamelKeys(myURLValue: 1, userName: "x", nested: .init(firstName: "y")),
            expected: "MYURLVALUE=1&NESTED%5BFIRSTNAME%5D=y&USERNAME=x"
        ),
        .init(
            name: "keys lowercased",
            encoder: URLEncodedFormEncoder(keyEncoding: .lowercased),
            value: CamelKeys(myURLValue: 1, userName: "x", nested: .init(firstName: "y")),
            expected: "myurlvalue=1&nested%5Bfirstname%5D=y&username=x"
        ),
        .init(
            name: "keys custom",
            encoder: URLEncodedFormEncoder(keyEncoding: .custom { "k_" + $0 }),
            value: CamelKeys(myURLValue: 1, userName: "x", nested: .init(firstName: "y")),
            expected: "k_myURLValue=1&k_nested%5Bk_firstName%5D=y&k_userName=x"
        ),
        .init(
            name: "sorted by encoded key",
            encoder: URLEncodedFormEncoder(keyEncoding: .custom { $0 == "a" ? "z" : $0 }),
            value: ["a": 1, "b": 2],
            expected: "b=2&z=1"
        ),
        // Dates.
        .init(name: "date deferredToDate", value: Dated(date: Self.date), expected: "date=-978307198.5"),
        .init(
            name: "date secondsSince1970",
            encoder: URLEncodedFormEncoder(dateEncoding: .secondsSince1970),
            value: Dated(date: Self.date),
            expected: "date=1.5"
        ),
        .init(
            name: "date millisecondsSince1970",
            encoder: URLEncodedFormEncoder(dateEncoding: .millisecondsSince1970),
            value: Dated(date: Self.date),
            expected: "date=1500.0"
        ),
        .init(
            name: "date iso8601",
            encoder: URLEncodedFormEncoder(dateEncoding: .iso8601),
            value: Dated(date: Self.date),
            expected: "date=1970-01-01T00%3A00%3A01Z"
        ),
        .init(
            name: "date formatted",
            encoder: URLEncodedFormEncoder(dateEncoding: .formatted(utcFormatter)),
            value: Dated(date: Self.date),
            expected: "date=1970-01-01%2000%3A00"
        ),
        .init(
            name: "date custom",
            encoder: URLEncodedFormEncoder(dateEncoding: .custom { "\(Int($0.timeIntervalSince1970))s" }),
            value: Dated(date: Self.date),
            expected: "date=1s"
        ),
        .init(
            name: "dates in an array",
            encoder: URLEncodedFormEncoder(dateEncoding: .secondsSince1970),
            value: ["d": [Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: 60)]],
            expected: "d%5B%5D=0.0&d%5B%5D=60.0"
        ),
        // Data.
        .init(name: "data base64", value: WithData(data: Data([0xFB, 0xFF])), expected: "data=%2B/8%3D"),
        .init(
            name: "data deferredToData",
            encoder: URLEncodedFormEncoder(dataEncoding: .deferredToData),
            value: WithData(data: Data([0xFB, 0xFF])),
            expected: "data%5B%5D=251&data%5B%5D=255"
        ),
        .init(
            name: "data custom",
            encoder: URLEncodedFormEncoder(dataEncoding: .custom { $0.map { String($0, radix: 16) }.joined() }),
            value: WithData(data: Data([0xFB, 0xFF])),
            expected: "data=fbff"
        ),
        // Nil.
        .init(name: "nil dropKey", value: Optionals(a: nil, b: nil, c: 1), expected: "c=1"),
        .init(
            name: "nil dropValue",
            encoder: URLEncodedFormEncoder(nilEncoding: .dropValue),
            value: Optionals(a: nil, b: nil, c: 1),
            expected: "a=&b=&c=1"
        ),
        .init(
            name: "nil null",
            encoder: URLEncodedFormEncoder(nilEncoding: .null),
            value: Optionals(a: nil, b: nil, c: 1),
            expected: "a=null&b=null&c=1"
        ),
        .init(
            name: "nil custom",
            encoder: URLEncodedFormEncoder(nilEncoding: .init { "none" }),
            value: Optionals(a: nil, b: "x", c: 1),
            expected: "a=none&b=x&c=1"
        ),
        .init(name: "present optionals", value: Optionals(a: 5, b: "x", c: 1), expected: "a=5&b=x&c=1"),
        .init(name: "nil elements dropped", value: ["v": [1, nil, 3]], expected: "v%5B%5D=1&v%5B%5D=3"),
        .init(
            name: "nil elements dropped, indices stay contiguous",
            encoder: URLEncodedFormEncoder(arrayEncoding: .indexInBrackets),
            value: ["v": [1, nil, 3]],
            expected: "v%5B0%5D=1&v%5B1%5D=3"
        ),
        .init(
            name: "nil elements as null",
            encoder: URLEncodedFormEncoder(nilEncoding: .null),
            value: ["v": [1, nil, 3]],
            expected: "v%5B%5D=1&v%5B%5D=null&v%5B%5D=3"
        ),
        .init(
            name: "nil dictionary values",
            encoder: URLEncodedFormEncoder(nilEncoding: .dropValue),
            value: ["a": Int?.none, "b": 2],
            expected: "a=&b=2"
        ),
        // Spaces and escaping.
        .init(name: "space percent-escaped", value: ["q": "kite flyer"], expected: "q=kite%20flyer"),
        .init(
            name: "space plus-replaced",
            encoder: URLEncodedFormEncoder(spaceEncoding: .plusReplaced),
            value: ["q": "a+b c", "first name": "Ada"],
            expected: "first+name=Ada&q=a%2Bb+c"
        ),
        .init(name: "percent", value: ["p": "100%"], expected: "p=100%25"),
        .init(
            name: "every reserved character",
            value: ["k": ":#[]@!$&'()*+,;="],
            expected: "k=%3A%23%5B%5D%40%21%24%26%27%28%29%2A%2B%2C%3B%3D"
        ),
        .init(name: "question mark and slash kept", value: ["p": "/a?b"], expected: "p=/a?b"),
        .init(
            name: "unicode and emoji",
            value: ["naïve": "café 日本 👍", "grüße": "ü"],
            expected: "gr%C3%BC%C3%9Fe=%C3%BC&na%C3%AFve=caf%C3%A9%20%E6%97%A5%E6%9C%AC%20%F0%9F%91%8D"
        ),
        .init(
            name: "allowed brackets and colon",
            encoder: URLEncodedFormEncoder(
                dateEncoding: .iso8601,
                allowedCharacters: URLEncodedFormEncoder.defaultAllowedCharacters.union(
                    CharacterSet(charactersIn: "[]:")
                )
            ),
            value: ["d": [Self.date]],
            expected: "d[]=1970-01-01T00:00:01Z"
        ),
        .init(
            name: "non-ASCII always escaped even when allowed",
            encoder: URLEncodedFormEncoder(allowedCharacters: CharacterSet(charactersIn: "éa=")),
            value: ["a": "é"],
            expected: "a=%C3%A9"
        ),
        // Other values.
        .init(
            name: "numbers",
            value: Numbers(
                double: 0.1,
                whole: 2,
                float: 0.1,
                int8: -5,
                uint64: .max,
                decimal: Decimal(string: "12.50")!
            ),
            expected: "decimal=12.5&double=0.1&float=0.1&int8=-5&uint64=18446744073709551615&whole=2.0"
        ),
        .init(
            name: "enum, URL, empty containers, NaN",
            value: Misc(
                color: .red,
                url: URL(string: "https://x.y/a?b=c")!,
                empty: [],
                emptyObject: [:],
                nan: .nan
            ),
            expected: "color=red&nan=nan&url=https%3A//x.y/a?b%3Dc"
        ),
        .init(name: "integer-keyed dictionary", value: [2: "b", 1: "a"], expected: "1=a&2=b"),
    ]

    @Test(arguments: Self.cases)
    func encodesString(_ testCase: FormCase) throws {
        let text: String = try testCase.encoder.encode(testCase.value)
        #expect(text == testCase.expected)
    }

    @Test(arguments: Self.cases)
    func encodesData(_ testCase: FormCase) throws {
        let data: Data = try testCase.encoder.encode(testCase.value)
        #expect(data == Data(testCase.expected.utf8))
    }

    static let snakeCaseKeys = [
        "myURLValue", "userName", "URLValue", "simple", "oneTwoThree", "_leading", "trailing_", "ABC", "aBC",
        "isHTTPS", "already_snake", "with2Numbers", "x", "", "HTTPRequestID", "äÖü", "camel__Case", "__private",
        "lowerUPPER", "a1B2c3", "ÉcoleNormale",
    ]

    /// The form encoder's snake_case conversion matches `JSONEncoder`'s key for key.
    @Test(arguments: Self.snakeCaseKeys)
    func snakeCaseMatchesJSONEncoder(key: String) throws {
        let value = DynamicKeys(keys: [key])
        let jsonEncoder = JSONEncoder()
        jsonEncoder.keyEncodingStrategy = .convertToSnakeCase
        let json = try JSONSerialization.jsonObject(with: jsonEncoder.encode(value)) as? [String: Any]
        let jsonKey = try #require(json?.keys.first)
        let form: String = try URLEncodedFormEncoder(keyEncoding: .convertToSnakeCase).encode(value)
        #expect(form == URLEncoding.default.escape(jsonKey) + "=1")
    }

    @Test func defaultsMatchAlamofire() {
        let encoder = URLEncodedFormEncoder()
        #expect(encoder.alphabetizeKeyValuePairs)
        #expect(encoder.boolEncoding == .numeric)
        #expect(encoder.spaceEncoding == .percentEscaped)
        #expect(encoder.allowedCharacters == URLEncodedFormEncoder.defaultAllowedCharacters)
        let allowedASCII = (0..<128).compactMap(Unicode.Scalar.init).filter { encoder.allowedCharacters.contains($0) }
        #expect(
            String(String.UnicodeScalarView(allowedASCII))
                == "-./0123456789?ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz~"
        )
    }
}

/// Encodes `1` under each of its keys, through a keyed container with dynamic keys.
struct DynamicKeys: Encodable, Sendable {
    let keys: [String]

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: TestKey.self)
        for key in self.keys {
            try container.encode(1, forKey: TestKey(stringLiteral: key))
        }
    }
}
