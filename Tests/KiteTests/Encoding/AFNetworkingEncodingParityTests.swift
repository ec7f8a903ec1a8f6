import Foundation
import Kite
import Testing

struct ParityCase: Sendable, CustomTestStringConvertible {
    let name: String
    var arrayEncoding = URLEncoding.ArrayEncoding.brackets
    var boolEncoding = URLEncoding.BoolEncoding.numeric
    var nullEncoding = URLEncoding.NullEncoding.dropKey
    let parameters: Parameters
    /// The expected query after `?`, or `nil` when no query may be added.
    let query: String?
    var testDescription: String { self.name }

    func encoding(_ destination: URLEncoding.Destination) -> URLEncoding {
        URLEncoding(
            destination: destination,
            arrayEncoding: self.arrayEncoding,
            boolEncoding: self.boolEncoding,
            nullEncoding: self.nullEncoding
        )
    }
}

/// A value whose `Set` properties the Encodable encoder must write in a deterministic order.
private struct Tagged: Encodable, Sendable {
    let tags: Set<String>
    let ids: Set<Int>
    let nested: [String: Set<String>]
    let optionalTags: Set<String>?
}

/// The parts of AFNetworking's `AFQueryStringPairsFromKeyAndValue` that Kite follows: sorted sets,
/// `NSNull` as a bare key, and multipart fields made from parameters.
@Suite("AFNetworking encoding parity")
struct AFNetworkingEncodingParityTests {
    /// Ten letters: a set this large almost never iterates in sorted order by chance.
    static let letters = Set("jihgfedcba".map(String.init))

    static let cases: [ParityCase] = [
        .init(
            name: "set of strings sorted, brackets",
            parameters: ["tags": Set(["b", "a", "c"])],
            query: "tags%5B%5D=a&tags%5B%5D=b&tags%5B%5D=c"
        ),
        .init(
            name: "set of strings sorted, noBrackets (AFNetworking's bare key)",
            arrayEncoding: .noBrackets,
            parameters: ["tags": Set(["b", "a", "c"])],
            query: "tags=a&tags=b&tags=c"
        ),
        .init(
            name: "set indexInBrackets numbers the sorted elements",
            arrayEncoding: .indexInBrackets,
            parameters: ["tags": Set(["b", "a", "c"])],
            query: "tags%5B0%5D=a&tags%5B1%5D=b&tags%5B2%5D=c"
        ),
        .init(
            name: "ten-element set sorted",
            arrayEncoding: .noBrackets,
            parameters: ["l": Self.letters],
            query: "l=a&l=b&l=c&l=d&l=e&l=f&l=g&l=h&l=i&l=j"
        ),
        .init(
            name: "set of numbers sorted as text, as AFNetworking sorts descriptions",
            arrayEncoding: .noBrackets,
            parameters: ["n": Set([10, 9, 1, 2, 100, -3])],
            query: "n=-3&n=1&n=10&n=100&n=2&n=9"
        ),
        .init(
            name: "set nested in a dictionary",
            parameters: ["user": ["name": "x", "tags": Set([2, 1])] as Parameters],
            query: "user%5Bname%5D=x&user%5Btags%5D%5B%5D=1&user%5Btags%5D%5B%5D=2"
        ),
        .init(
            name: "set of arrays sorted by their flattened pairs",
            parameters: ["m": Set([["b", "a"], ["a"]])],
            query: "m%5B%5D%5B%5D=a&m%5B%5D%5B%5D=b&m%5B%5D%5B%5D=a"
        ),
        .init(name: "empty set adds no ?", parameters: ["tags": Set<String>()], query: nil),
        .init(
            name: "set with nil, dropKey",
            parameters: ["o": Set<Int?>([2, nil, 1])],
            query: "o%5B%5D=1&o%5B%5D=2"
        ),
        .init(
            name: "set with nil, bareKey: the bare key sorts first",
            nullEncoding: .bareKey,
            parameters: ["o": Set<Int?>([2, nil, 1])],
            query: "o%5B%5D&o%5B%5D=1&o%5B%5D=2"
        ),
        .init(
            name: "NSNull bareKey",
            nullEncoding: .bareKey,
            parameters: ["a": 1, "flag": NSNull(), "z": 2],
            query: "a=1&flag&z=2"
        ),
        .init(
            name: "Optional.none bareKey",
            nullEncoding: .bareKey,
            parameters: ["a": 1, "flag": String?.none as any Sendable, "z": 2],
            query: "a=1&flag&z=2"
        ),
        .init(
            name: "NSNull dropKey",
            parameters: ["a": 1, "flag": NSNull(), "z": 2],
            query: "a=1&z=2"
        ),
        .init(
            name: "Optional.none dropKey",
            parameters: ["a": 1, "flag": String?.none as any Sendable, "z": 2],
            query: "a=1&z=2"
        ),
        .init(
            name: "nested NSNull bareKey",
            nullEncoding: .bareKey,
            parameters: ["user": ["nick": NSNull()]],
            query: "user%5Bnick%5D"
        ),
        .init(
            name: "nested NSNull dropKey adds no ?",
            parameters: ["user": ["nick": NSNull()]],
            query: nil
        ),
        .init(
            name: "nil array element bareKey",
            nullEncoding: .bareKey,
            parameters: ["d": [1, nil, 2] as [Int?]],
            query: "d%5B%5D=1&d%5B%5D&d%5B%5D=2"
        ),
        .init(
            name: "nil array element bareKey, indexed",
            arrayEncoding: .indexInBrackets,
            nullEncoding: .bareKey,
            parameters: ["d": [1, nil, 2] as [Int?]],
            query: "d%5B0%5D=1&d%5B1%5D&d%5B2%5D=2"
        ),
        .init(
            name: "a bare key is escaped",
            nullEncoding: .bareKey,
            parameters: ["a b&c": NSNull()],
            query: "a%20b%26c"
        ),
    ]

    @Test(arguments: Self.cases)
    func query(_ testCase: ParityCase) throws {
        let draft = try testCase.encoding(.queryString).encode(makeDraft(.get), with: testCase.parameters)
        let expected = testCase.query.map { "https://example.com/path?\($0)" } ?? "https://example.com/path"
        #expect(draft.url.absoluteString == expected)
        #expect(draft.body == nil)
    }

    @Test(arguments: Self.cases)
    func body(_ testCase: ParityCase) throws {
        let draft = try testCase.encoding(.httpBody).encode(makeDraft(.post), with: testCase.parameters)
        #expect(bodyText(draft) == (testCase.query ?? ""))
        #expect(draft.url.absoluteString == "https://example.com/path")
        #expect(draft.headerFields[.contentType] == "application/x-www-form-urlencoded; charset=utf-8")
    }

    @Test func defaultNullEncodingDropsTheKey() {
        #expect(URLEncoding.default.nullEncoding == .dropKey)
        #expect(URLEncoding.queryString.nullEncoding == .dropKey)
        #expect(URLEncoding.httpBody.nullEncoding == .dropKey)
        #expect(URLEncoding(destination: .httpBody, arrayEncoding: .noBrackets).nullEncoding == .dropKey)
    }

    @Test func queryComponentsSortSetsAndNSSets() {
        let encoding = URLEncoding(arrayEncoding: .noBrackets)
        let fromSet = encoding.queryComponents(fromKey: "s", value: Set(["é", "z", "a b"]))
        #expect(fromSet.map { "\($0.0)=\($0.1)" } == ["s=a%20b", "s=z", "s=%C3%A9"])
        let fromNSSet = encoding.queryComponents(fromKey: "s", value: NSSet(array: ["b", "c", "a"]))
        #expect(fromNSSet.map { "\($0.0)=\($0.1)" } == ["s=a", "s=b", "s=c"])
    }

    /// `Set<AnyHashable>` is not `Sendable`, so it can only reach the encoding through `queryComponents`.
    @Test func setOfAnyHashableIsSortedByTextWithBooleansPerBoolEncoding() {
        let literal = URLEncoding(arrayEncoding: .noBrackets, boolEncoding: .literal)
        let components = literal.queryComponents(fromKey: "s", value: Set<AnyHashable>([true, "b", 3]))
        #expect(components.map { "\($0.0)=\($0.1)" } == ["s=3", "s=b", "s=true"])
        let numeric = URLEncoding(arrayEncoding: .noBrackets)
        let numericComponents = numeric.queryComponents(fromKey: "s", value: Set<AnyHashable>([true, "b", 3]))
        #expect(numericComponents.map { "\($0.0)=\($0.1)" } == ["s=1", "s=3", "s=b"])
    }

    @Test func queryComponentsGiveABareKeyAnEmptyValue() {
        let components = URLEncoding(nullEncoding: .bareKey).queryComponents(fromKey: "k", value: NSNull())
        #expect(components.map { "\($0.0)=\($0.1)" } == ["k="])
        #expect(URLEncoding.default.queryComponents(fromKey: "k", value: NSNull()).isEmpty)
    }

    @Test func bareKeysAreAppendedToAnExistingQuery() throws {
        let encoding = URLEncoding(destination: .queryString, nullEncoding: .bareKey)
        let draft = try encoding.encode(makeDraft(.get, "https://example.com/p?x=1#top"), with: ["flag": NSNull()])
        #expect(draft.url.absoluteString == "https://example.com/p?x=1&flag#top")
    }

    @Test func documentedAFNetworkingExample() throws {
        let afnetworking = URLEncoding(destination: .queryString, arrayEncoding: .noBrackets, nullEncoding: .bareKey)
        let draft = RequestDraft(url: URL(string: "https://example.com/search")!)
        let encoded = try afnetworking.encode(draft, with: ["a": 1, "flag": NSNull(), "tags": Set(["y", "x"])])
        #expect(encoded.url.absoluteString == "https://example.com/search?a=1&flag&tags=x&tags=y")
    }

    @Test func encodableSetsAreSortedByText() throws {
        let value = Tagged(
            tags: Self.letters,
            ids: [10, 9, 1],
            nested: ["k": ["b", "a"]],
            optionalTags: ["y", "x"]
        )
        let text: String = try URLEncodedFormEncoder(arrayEncoding: .noBrackets).encode(value)
        #expect(
            text
                == "ids=1&ids=10&ids=9&nested%5Bk%5D=a&nested%5Bk%5D=b&optionalTags=x&optionalTags=y"
                + "&tags=a&tags=b&tags=c&tags=d&tags=e&tags=f&tags=g&tags=h&tags=i&tags=j"
        )
    }

    @Test func encodableArraysKeepTheirOrder() throws {
        let text: String = try URLEncodedFormEncoder().encode(["a": ["z", "y", "x"]])
        #expect(text == "a%5B%5D=z&a%5B%5D=y&a%5B%5D=x")
    }

    @Test func multipartFieldsFromParametersComeFirstAndUnescaped() async throws {
        try await MultipartTestSupport.withTemporaryDirectory { directory in
            let file = try MultipartTestSupport.makeFile("notes.txt", in: directory, bytes: Array("hello".utf8))
            var form = try MultipartFormData(boundary: "B")
            form.append(
                parameters: [
                    "user": ["name": "Zoë & co"], "tags": ["x", "y"], "n": 3, "ok": true, "nothing": NSNull(),
                ],
                encoding: URLEncoding(nullEncoding: .bareKey)
            )
            form.append(file, withName: "file")
            #expect(form.appendError == nil)

            let body = try form.encode()
            #expect(form.contentLength == Int64(body.count))
            let parts = try MultipartTestSupport.parse(Array(body), boundary: form.boundary)
            #expect(parts.map(\.name) == ["n", "nothing", "ok", "tags[]", "tags[]", "user[name]", "file"])
            #expect(
                parts.map { String(decoding: $0.body, as: UTF8.self) } == ["3", "", "1", "x", "y", "Zoë & co", "hello"]
            )
            #expect(parts[5].header("Content-Disposition") == "form-data; name=\"user[name]\"")
            #expect(parts[5].header("Content-Type") == nil)
            #expect(parts[6].header("Content-Disposition") == "form-data; name=\"file\"; filename=\"notes.txt\"")
            #expect(parts[6].header("Content-Type") == "text/plain")
        }
    }

    @Test func multipartFieldsFollowTheEncodingsRules() throws {
        var form = try MultipartFormData(boundary: "B")
        form.append(
            parameters: ["tags": Set(["b", "a"]), "ok": false, "nothing": NSNull(), "id": 7],
            encoding: URLEncoding(destination: .queryString, arrayEncoding: .noBrackets, boolEncoding: .literal)
        )
        let body = try form.encode()
        #expect(form.contentLength == Int64(body.count))
        #expect(
            String(decoding: body, as: UTF8.self)
                == "--B\r\nContent-Disposition: form-data; name=\"id\"\r\n\r\n7\r\n"
                + "--B\r\nContent-Disposition: form-data; name=\"ok\"\r\n\r\nfalse\r\n"
                + "--B\r\nContent-Disposition: form-data; name=\"tags\"\r\n\r\na\r\n"
                + "--B\r\nContent-Disposition: form-data; name=\"tags\"\r\n\r\nb\r\n--B--\r\n"
        )
    }

    @Test func multipartFieldsFromNoParametersAddNothing() throws {
        var form = try MultipartFormData(boundary: "B")
        form.append(parameters: [:])
        form.append(parameters: ["gone": NSNull()])
        #expect(try form.encode() == Data("--B--\r\n".utf8))
    }
}
