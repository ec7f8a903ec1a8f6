import Foundation
import Kite
import Testing

struct URLEncodingEscapeCase: Sendable, CustomTestStringConvertible {
    let input: String
    let expected: String
    var testDescription: String { "escape(\(self.input.debugDescription))" }
}

struct URLEncodingCase: Sendable, CustomTestStringConvertible {
    let name: String
    var encoding = URLEncoding.queryString
    let parameters: Parameters
    /// The expected query after `?`, or `nil` when no query may be added.
    let query: String?
    var testDescription: String { self.name }
}

@Suite("URLEncoding")
struct URLEncodingTests {
    static let escapeCases: [URLEncodingEscapeCase] = [
        .init(input: "", expected: ""),
        .init(input: "abcXYZ019", expected: "abcXYZ019"),
        .init(input: "-._~", expected: "-._~"),
        .init(input: "?/", expected: "?/"),
        .init(input: "a b", expected: "a%20b"),
        .init(input: "+", expected: "%2B"),
        .init(input: "%", expected: "%25"),
        .init(input: "100%+1 ok", expected: "100%25%2B1%20ok"),
        .init(input: ":#[]@", expected: "%3A%23%5B%5D%40"),
        .init(input: "!$&'()*+,;=", expected: "%21%24%26%27%28%29%2A%2B%2C%3B%3D"),
        .init(input: "\"<>\\^`{|}", expected: "%22%3C%3E%5C%5E%60%7B%7C%7D"),
        .init(input: "\n\t\r", expected: "%0A%09%0D"),
        .init(input: "é", expected: "%C3%A9"),
        .init(input: "ü", expected: "%C3%BC"),
        .init(input: "e\u{301}", expected: "e%CC%81"),
        .init(input: "日本語", expected: "%E6%97%A5%E6%9C%AC%E8%AA%9E"),
        .init(input: "👍", expected: "%F0%9F%91%8D"),
        .init(input: "👨‍👩‍👧", expected: "%F0%9F%91%A8%E2%80%8D%F0%9F%91%A9%E2%80%8D%F0%9F%91%A7"),
        .init(input: "a[b]=c&d", expected: "a%5Bb%5D%3Dc%26d"),
    ]

    @Test(arguments: Self.escapeCases)
    func escape(_ testCase: URLEncodingEscapeCase) {
        #expect(URLEncoding.default.escape(testCase.input) == testCase.expected)
    }

    static let cases: [URLEncodingCase] = [
        .init(name: "single pair", parameters: ["a": "b"], query: "a=b"),
        .init(name: "top-level keys sorted", parameters: ["b": 1, "a": 2, "c": 3, "B": 4], query: "B=4&a=2&b=1&c=3"),
        .init(name: "empty parameters add no ?", parameters: [:], query: nil),
        .init(
            name: "only nil values add no ?",
            parameters: ["a": NSNull(), "b": Int?.none as any Sendable],
            query: nil
        ),
        .init(name: "empty string value", parameters: ["a": ""], query: "a="),
        .init(name: "empty key", parameters: ["": "x"], query: "=x"),
        .init(name: "array brackets", parameters: ["a": [1, 2]], query: "a%5B%5D=1&a%5B%5D=2"),
        .init(
            name: "array noBrackets",
            encoding: URLEncoding(destination: .queryString, arrayEncoding: .noBrackets),
            parameters: ["a": [1, 2]],
            query: "a=1&a=2"
        ),
        .init(
            name: "array indexInBrackets",
            encoding: URLEncoding(destination: .queryString, arrayEncoding: .indexInBrackets),
            parameters: ["a": [1, 2]],
            query: "a%5B0%5D=1&a%5B1%5D=2"
        ),
        .init(
            name: "array custom",
            encoding: URLEncoding(
                destination: .queryString,
                arrayEncoding: .custom { key, index in "\(key)(\(index))" }
            ),
            parameters: ["a": ["x", "y"]],
            query: "a%280%29=x&a%281%29=y"
        ),
        .init(name: "array order kept", parameters: ["a": ["z", "y", "x"]], query: "a%5B%5D=z&a%5B%5D=y&a%5B%5D=x"),
        .init(name: "bool numeric", parameters: ["t": true, "f": false], query: "f=0&t=1"),
        .init(
            name: "bool literal",
            encoding: URLEncoding(destination: .queryString, boolEncoding: .literal),
            parameters: ["t": true, "f": false],
            query: "f=false&t=true"
        ),
        .init(
            name: "NSNumber bool vs NSNumber 1 with literal",
            encoding: URLEncoding(destination: .queryString, boolEncoding: .literal),
            parameters: ["t": NSNumber(value: true), "n": NSNumber(value: 1), "i": 1, "z": 0],
            query: "i=1&n=1&t=true&z=0"
        ),
        .init(
            name: "bools in arrays",
            encoding: URLEncoding(destination: .queryString, boolEncoding: .literal),
            parameters: ["a": [true, false]],
            query: "a%5B%5D=true&a%5B%5D=false"
        ),
        .init(
            name: "numbers by their text",
            parameters: [
                "i": -3, "d": 1.5, "w": 2.0, "f": Float(0.1), "dec": Decimal(string: "12.50")!, "u": UInt64.max,
                "n": NSNumber(value: 2.5),
            ],
            query: "d=1.5&dec=12.5&f=0.1&i=-3&n=2.5&u=18446744073709551615&w=2.0"
        ),
        .init(name: "Optional.some unwrapped", parameters: ["a": Int?.some(5) as any Sendable], query: "a=5"),
        .init(
            name: "nil, NSNull and Optional.none dropped",
            parameters: ["a": Int?.none as any Sendable, "b": NSNull(), "c": 1, "d": [1, nil, 2] as [Int?]],
            query: "c=1&d%5B%5D=1&d%5B%5D=2"
        ),
        .init(
            name: "nil in indexed array keeps other indices",
            encoding: URLEncoding(destination: .queryString, arrayEncoding: .indexInBrackets),
            parameters: ["d": [1, nil, 2] as [Int?]],
            query: "d%5B0%5D=1&d%5B2%5D=2"
        ),
        .init(
            name: "empty nested array and dictionary produce nothing",
            parameters: ["a": [Int](), "b": [String: Int](), "c": 1, "d": ["e": [String]()]],
            query: "c=1"
        ),
        .init(name: "nested dictionary", parameters: ["a": ["b": "c"]], query: "a%5Bb%5D=c"),
        .init(
            name: "nested dictionaries three deep",
            parameters: ["a": ["b": ["c": ["d": 1]]]],
            query: "a%5Bb%5D%5Bc%5D%5Bd%5D=1"
        ),
        .init(
            name: "nested keys sorted at every level",
            parameters: ["z": ["b": 1, "a": ["y": 1, "x": 2]] as Parameters, "a": ["d": 1, "c": 2]],
            query: "a%5Bc%5D=2&a%5Bd%5D=1&z%5Ba%5D%5Bx%5D=2&z%5Ba%5D%5By%5D=1&z%5Bb%5D=1"
        ),
        .init(
            name: "array of dictionaries",
            parameters: ["items": [["id": 1, "name": "x"] as Parameters, ["id": 2]]],
            query: "items%5B%5D%5Bid%5D=1&items%5B%5D%5Bname%5D=x&items%5B%5D%5Bid%5D=2"
        ),
        .init(
            name: "array of dictionaries indexed",
            encoding: URLEncoding(destination: .queryString, arrayEncoding: .indexInBrackets),
            parameters: ["items": [["id": 1], ["id": 2]]],
            query: "items%5B0%5D%5Bid%5D=1&items%5B1%5D%5Bid%5D=2"
        ),
        .init(
            name: "nested arrays",
            parameters: ["m": [[1, 2], [3]]],
            query: "m%5B%5D%5B%5D=1&m%5B%5D%5B%5D=2&m%5B%5D%5B%5D=3"
        ),
        .init(
            name: "nested arrays indexed",
            encoding: URLEncoding(destination: .queryString, arrayEncoding: .indexInBrackets),
            parameters: ["m": [[1, 2], [3]]],
            query: "m%5B0%5D%5B0%5D=1&m%5B0%5D%5B1%5D=2&m%5B1%5D%5B0%5D=3"
        ),
        .init(
            name: "dictionary holding arrays holding dictionaries",
            parameters: ["a": ["list": [["k": "v"]], "flag": true] as Parameters],
            query: "a%5Bflag%5D=1&a%5Blist%5D%5B%5D%5Bk%5D=v"
        ),
        .init(
            name: "unicode keys and values",
            parameters: ["naïve": "café 日本 👍", "grüße": "ü"],
            query: "gr%C3%BC%C3%9Fe=%C3%BC&na%C3%AFve=caf%C3%A9%20%E6%97%A5%E6%9C%AC%20%F0%9F%91%8D"
        ),
        .init(
            name: "reserved characters in key and value",
            parameters: ["k:#[]@": "!$&'()*+,;="],
            query: "k%3A%23%5B%5D%40=%21%24%26%27%28%29%2A%2B%2C%3B%3D"
        ),
        .init(name: "plus, percent and space", parameters: ["q": "1+1 = 2 %"], query: "q=1%2B1%20%3D%202%20%25"),
        .init(name: "question mark and slash kept", parameters: ["path": "/a/b?c"], query: "path=/a/b?c"),
        .init(name: "space in key", parameters: ["first name": "Ada"], query: "first%20name=Ada"),
    ]

    @Test(arguments: Self.cases)
    func query(_ testCase: URLEncodingCase) throws {
        let draft = try testCase.encoding.encode(makeDraft(.get), with: testCase.parameters)
        let expected = testCase.query.map { "https://example.com/path?\($0)" } ?? "https://example.com/path"
        #expect(draft.url.absoluteString == expected)
        #expect(draft.body == nil)
        #expect(draft.headerFields[.contentType] == nil)
    }

    @Test(arguments: Self.cases)
    func body(_ testCase: URLEncodingCase) throws {
        let encoding = URLEncoding(
            destination: .httpBody,
            arrayEncoding: testCase.encoding.arrayEncoding,
            boolEncoding: testCase.encoding.boolEncoding
        )
        let draft = try encoding.encode(makeDraft(.get), with: testCase.parameters)
        #expect(bodyText(draft) == (testCase.query ?? ""))
        #expect(draft.url.absoluteString == "https://example.com/path")
        #expect(draft.headerFields[.contentType] == "application/x-www-form-urlencoded; charset=utf-8")
    }

    static let urlCases: [(url: String, parameters: Parameters, expected: String)] = [
        ("https://example.com/p?x=1", ["a": 1], "https://example.com/p?x=1&a=1"),
        ("https://example.com/p?x=1#frag", ["a": 1], "https://example.com/p?x=1&a=1#frag"),
        ("https://example.com/p#frag", ["a": 1, "b": "c d"], "https://example.com/p?a=1&b=c%20d#frag"),
        ("https://example.com/p?", ["a": 1], "https://example.com/p?a=1"),
        ("https://example.com/p?q=a%20b", ["a": 1], "https://example.com/p?q=a%20b&a=1"),
        ("https://example.com/p?x=1#frag", [:], "https://example.com/p?x=1#frag"),
        ("https://example.com/p?x=1", ["n": NSNull()], "https://example.com/p?x=1"),
        ("https://user:pw@example.com:8080/p", ["a": 1], "https://user:pw@example.com:8080/p?a=1"),
        ("http://127.0.0.1/", ["a": [1]], "http://127.0.0.1/?a%5B%5D=1"),
    ]

    @Test(arguments: Self.urlCases)
    func appendsToExistingQuery(url: String, parameters: Parameters, expected: String) throws {
        let draft = try URLEncoding.queryString.encode(makeDraft(.get, url), with: parameters)
        #expect(draft.url.absoluteString == expected)
    }

    static let methodCases: [(method: HTTPRequest.Method, inQuery: Bool)] = [
        (.get, true), (.head, true), (.delete, true), (.post, false), (.put, false), (.patch, false),
        (.options, false),
    ]

    @Test(arguments: Self.methodCases)
    func methodDependentDestination(method: HTTPRequest.Method, inQuery: Bool) throws {
        let draft = try URLEncoding.default.encode(makeDraft(method), with: ["a": 1, "b": "x y"])
        if inQuery {
            #expect(draft.url.absoluteString == "https://example.com/path?a=1&b=x%20y")
            #expect(draft.body == nil)
            #expect(draft.headerFields[.contentType] == nil)
        } else {
            #expect(draft.url.absoluteString == "https://example.com/path")
            #expect(bodyText(draft) == "a=1&b=x%20y")
            #expect(draft.headerFields[.contentType] == "application/x-www-form-urlencoded; charset=utf-8")
        }
    }

    @Test(arguments: [HTTPRequest.Method.get, .post])
    func fixedDestinationsIgnoreMethod(method: HTTPRequest.Method) throws {
        let query = try URLEncoding.queryString.encode(makeDraft(method), with: ["a": 1])
        #expect(query.url.absoluteString == "https://example.com/path?a=1")
        #expect(query.body == nil)
        let body = try URLEncoding.httpBody.encode(makeDraft(method), with: ["a": 1])
        #expect(body.url.absoluteString == "https://example.com/path")
        #expect(bodyText(body) == "a=1")
    }

    @Test func presetContentTypeIsKept() throws {
        let draft = try URLEncoding.httpBody.encode(makeDraft(.post, contentType: "text/plain"), with: ["a": 1])
        #expect(draft.headerFields[.contentType] == "text/plain")
        #expect(bodyText(draft) == "a=1")
    }

    @Test func nilParametersLeaveDraftUnchanged() throws {
        let original = makeDraft(.post, "https://example.com/p?x=1")
        #expect(try URLEncoding.default.encode(original, with: nil) == original)
        #expect(try URLEncoding.queryString.encode(original, with: nil) == original)
    }

    @Test func emptyParametersInBodyGiveEmptyBody() throws {
        let draft = try URLEncoding.httpBody.encode(makeDraft(.post), with: [:])
        #expect(draft.body == Data())
        #expect(draft.headerFields[.contentType] == "application/x-www-form-urlencoded; charset=utf-8")
    }

    @Test func otherFieldsArePreserved() throws {
        var original = makeDraft(.get)
        original.headerFields[.accept] = "application/json"
        original.timeout = .seconds(3)
        let draft = try URLEncoding.default.encode(original, with: ["a": 1])
        #expect(draft.headerFields[.accept] == "application/json")
        #expect(draft.timeout == .seconds(3))
        #expect(draft.method == .get)
    }

    @Test func queryComponentsMatchAlamofire() {
        let components = URLEncoding.default.queryComponents(fromKey: "a", value: ["b": [1, 2], "c": true])
        #expect(components.map { "\($0.0)=\($0.1)" } == ["a%5Bb%5D%5B%5D=1", "a%5Bb%5D%5B%5D=2", "a%5Bc%5D=1"])
        #expect(URLEncoding.default.queryComponents(fromKey: "k", value: NSNull()).isEmpty)
        #expect(
            URLEncoding.default.queryComponents(fromKey: "k v", value: "x").map { "\($0.0)=\($0.1)" } == ["k%20v=x"]
        )
    }

    @Test func strategyHelpers() {
        #expect(URLEncoding.ArrayEncoding.brackets.encode(key: "a", atIndex: 3) == "a[]")
        #expect(URLEncoding.ArrayEncoding.noBrackets.encode(key: "a", atIndex: 3) == "a")
        #expect(URLEncoding.ArrayEncoding.indexInBrackets.encode(key: "a", atIndex: 3) == "a[3]")
        #expect(URLEncoding.BoolEncoding.numeric.encode(value: false) == "0")
        #expect(URLEncoding.BoolEncoding.literal.encode(value: false) == "false")
    }

    @Test func defaultsMatchAlamofire() {
        #expect(URLEncoding.default.destination == .methodDependent)
        #expect(URLEncoding.queryString.destination == .queryString)
        #expect(URLEncoding.httpBody.destination == .httpBody)
        #expect(URLEncoding.default.boolEncoding == .numeric)
        #expect(URLEncoding.default.arrayEncoding.encode(key: "k", atIndex: 0) == "k[]")
    }
}
