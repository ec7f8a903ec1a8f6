import Foundation
import Kite
import Testing

struct JSONInvalidCase: Sendable, CustomTestStringConvertible {
    let name: String
    let parameters: Parameters
    let message: String
    var testDescription: String { self.name }
}

@Suite("JSONEncoding")
struct JSONEncodingTests {
    static let sample: Parameters = [
        "b": 1,
        "a": [true, false, 2.5, "x/y", NSNull()] as [any Sendable],
        "c": ["z": "é", "y": ["k": -7]] as Parameters,
    ]

    @Test func compactBytes() throws {
        let draft = try JSONEncoding.default.encode(makeDraft(.post), with: Self.sample)
        #expect(bodyText(draft) == #"{"a":[true,false,2.5,"x\/y",null],"b":1,"c":{"y":{"k":-7},"z":"é"}}"#)
        #expect(draft.headerFields[.contentType] == "application/json")
    }

    @Test func prettyPrintedBytes() throws {
        let draft = try JSONEncoding.prettyPrinted.encode(
            makeDraft(.post),
            with: ["b": ["c": "d"], "a": [true, 2.5] as [any Sendable]]
        )
        let expected = """
            {
              "a" : [
                true,
                2.5
              ],
              "b" : {
                "c" : "d"
              }
            }
            """
        #expect(bodyText(draft) == expected)
    }

    @Test func optionsAlwaysIncludeSortedKeys() throws {
        #expect(JSONEncoding.default.options == .sortedKeys)
        #expect(JSONEncoding.prettyPrinted.options == [.prettyPrinted, .sortedKeys])
        let encoding = JSONEncoding(options: .withoutEscapingSlashes)
        #expect(encoding.options == [.withoutEscapingSlashes, .sortedKeys])
        let draft = try encoding.encode(makeDraft(.post), with: ["z": "a/b", "a": 1])
        #expect(bodyText(draft) == #"{"a":1,"z":"a/b"}"#)
    }

    static let valueCases: [(name: String, parameters: Parameters, json: String)] = [
        ("empty", [:], "{}"),
        (
            "integers", ["i8": Int8(-8), "u64": UInt64.max, "i": Int.min],
            #"{"i":-9223372036854775808,"i8":-8,"u64":18446744073709551615}"#
        ),
        ("float keeps short form", ["f": Float(1.1)], #"{"f":1.1}"#),
        ("decimal", ["d": Decimal(string: "12.25")!], #"{"d":12.25}"#),
        ("NSNumber bool and int", ["t": NSNumber(value: true), "n": NSNumber(value: 1)], #"{"n":1,"t":true}"#),
        (
            "optionals", ["none": Int?.none as any Sendable, "some": Int?.some(3) as any Sendable],
            #"{"none":null,"some":3}"#
        ),
        ("nested optionals in arrays", ["a": [1, nil] as [Int?]], #"{"a":[1,null]}"#),
        ("unicode and escapes", ["k": "👍\"\\\n"], #"{"k":"👍\"\\\n"}"#),
        ("substring", ["s": "hello world".prefix(5)], #"{"s":"hello"}"#),
        ("deep nesting", ["a": ["b": ["c": ["d": [1]]]]], #"{"a":{"b":{"c":{"d":[1]}}}}"#),
    ]

    @Test(arguments: Self.valueCases)
    func values(name: String, parameters: Parameters, json: String) throws {
        let draft = try JSONEncoding.default.encode(makeDraft(.post), with: parameters)
        #expect(bodyText(draft) == json)
    }

    static let invalidCases: [JSONInvalidCase] = [
        .init(
            name: "Date",
            parameters: ["user": ["created": Date(timeIntervalSince1970: 0)]],
            message: #"value of type Date at "user.created" is not valid JSON;"#
                + " use strings, numbers, Booleans, arrays, [String: …] dictionaries or NSNull"
        ),
        .init(
            name: "custom struct",
            parameters: ["p": Point(x: 1, y: 2)],
            message: #"value of type Point at "p" is not valid JSON;"#
                + " use strings, numbers, Booleans, arrays, [String: …] dictionaries or NSNull"
        ),
        .init(
            name: "Data in an array",
            parameters: ["items": ["ok", Data([1])] as [any Sendable]],
            message: #"value of type Data at "items[1]" is not valid JSON;"#
                + " use strings, numbers, Booleans, arrays, [String: …] dictionaries or NSNull"
        ),
        .init(
            name: "URL deep",
            parameters: ["a": [["b": [URL(string: "https://x")!]]]],
            message: #"value of type URL at "a[0].b[0]" is not valid JSON;"#
                + " use strings, numbers, Booleans, arrays, [String: …] dictionaries or NSNull"
        ),
        .init(
            name: "NaN",
            parameters: ["score": Double.nan],
            message: #"value nan of type Double at "score" is not valid JSON; JSON has no NaN or infinity"#
        ),
        .init(
            name: "infinity",
            parameters: ["a": [Double.infinity]],
            message: #"value inf of type Double at "a[0]" is not valid JSON; JSON has no NaN or infinity"#
        ),
        .init(
            name: "negative Float infinity",
            parameters: ["f": -Float.infinity],
            message: #"value -inf of type Float at "f" is not valid JSON; JSON has no NaN or infinity"#
        ),
        .init(
            name: "Decimal NaN",
            parameters: ["d": Decimal.nan],
            message: #"value NaN of type Decimal at "d" is not valid JSON; JSON has no NaN or infinity"#
        ),
        .init(
            name: "non-string keys",
            parameters: ["m": [1: "one"]],
            message:
                #"dictionary of type Dictionary<Int, String> at "m" is not valid JSON; JSON object keys must be strings"#
        ),
    ]

    @Test(arguments: Self.invalidCases)
    func invalidValues(_ testCase: JSONInvalidCase) {
        let message = encodingFailureMessage {
            _ = try JSONEncoding.default.encode(makeDraft(.post), with: testCase.parameters)
        }
        #expect(message == testCase.message)
    }

    @Test func nsNumberNaNIsRejected() {
        let message = encodingFailureMessage {
            _ = try JSONEncoding.default.encode(makeDraft(.post), with: ["n": NSNumber(value: Double.nan)])
        }
        #expect(message?.hasSuffix(#"at "n" is not valid JSON; JSON has no NaN or infinity"#) == true)
    }

    @Test func invalidTopLevelJSONObject() {
        let message = encodingFailureMessage {
            _ = try JSONEncoding.default.encode(makeDraft(.post), withJSONObject: Date(timeIntervalSince1970: 0))
        }
        #expect(
            message == "value of type Date at the top level is not valid JSON;"
                + " use strings, numbers, Booleans, arrays, [String: …] dictionaries or NSNull"
        )
    }

    static let topLevelCases: [(name: String, object: any Sendable, json: String)] = [
        ("array of dictionaries", [["id": 1], ["id": 2]], #"[{"id":1},{"id":2}]"#),
        ("empty array", [Int](), "[]"),
        ("string fragment", "kite", #""kite""#),
        ("number fragment", 42, "42"),
        ("bool fragment", true, "true"),
        ("null fragment", NSNull(), "null"),
    ]

    @Test(arguments: Self.topLevelCases)
    func topLevelJSONObjects(name: String, object: any Sendable, json: String) throws {
        let draft = try JSONEncoding.default.encode(makeDraft(.post), withJSONObject: object)
        #expect(bodyText(draft) == json)
        #expect(draft.headerFields[.contentType] == "application/json")
    }

    @Test func presetContentTypeIsKept() throws {
        let draft = try JSONEncoding.default.encode(
            makeDraft(.post, contentType: "application/vnd.api+json"),
            with: ["a": 1]
        )
        #expect(draft.headerFields[.contentType] == "application/vnd.api+json")
        #expect(bodyText(draft) == #"{"a":1}"#)
    }

    @Test(arguments: [HTTPRequest.Method.get, .post])
    func bodyRegardlessOfMethodAndURLUnchanged(method: HTTPRequest.Method) throws {
        let draft = try JSONEncoding.default.encode(makeDraft(method, "https://example.com/p?x=1"), with: ["a": 1])
        #expect(draft.url.absoluteString == "https://example.com/p?x=1")
        #expect(bodyText(draft) == #"{"a":1}"#)
    }

    @Test func nilLeavesDraftUnchanged() throws {
        let original = makeDraft(.post)
        #expect(try JSONEncoding.default.encode(original, with: nil) == original)
        #expect(try JSONEncoding.default.encode(original, withJSONObject: nil) == original)
    }

    @Test func outputParsesBack() throws {
        let draft = try JSONEncoding.default.encode(makeDraft(.post), with: Self.sample)
        let object = try JSONSerialization.jsonObject(with: draft.body ?? Data()) as? [String: Any]
        #expect(object?["b"] as? Int == 1)
        #expect((object?["c"] as? [String: Any])?["z"] as? String == "é")
    }
}
