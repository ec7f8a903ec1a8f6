import Foundation
import Testing

@testable import KiteTestServer

@Suite("Internal helpers")
struct InternalsTests {
    @Test("JSON parses and serializes with sorted keys")
    func jsonRoundTrip() throws {
        let text = #"{"b": [1, -2.5, 1e3, true, null], "a": "\u00e9\ud83e\ude81\n\"", "c": {}}"#
        let value = try #require(JSONParser.parse(Array(text.utf8)))
        #expect(
            value
                == .object([
                    "a": .string("é🪁\n\""),
                    "b": .array([.integer(1), .double(-2.5), .double(1000), .bool(true), .null]),
                    "c": .object([:]),
                ])
        )
        let singleLine = String(decoding: value.serialized(style: .singleLine), as: UTF8.self)
        #expect(singleLine == #"{"a": "é🪁\n\"", "b": [1, -2.5, 1000.0, true, null], "c": {}}"#)
        let pretty = String(decoding: value.serialized(), as: UTF8.self)
        #expect(pretty.hasPrefix("{\n  \"a\": \"é🪁\\n\\\"\",\n  \"b\": [\n    1,\n    -2.5,"))
    }

    @Test(
        "JSON rejects invalid documents",
        arguments: ["", "{", "[1,]", "01", "\"a", "tru", "{\"a\" 1}", "1 2", "\"\u{01}\""]
    )
    func jsonInvalid(text: String) {
        #expect(JSONParser.parse(Array(text.utf8)) == nil)
    }

    @Test("JSON limits nesting depth")
    func jsonDepth() {
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        #expect(JSONParser.parse(Array(deep.utf8)) == nil)
        let shallow = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        #expect(JSONParser.parse(Array(shallow.utf8)) != nil)
    }

    @Test("Range headers parse as RFC 9110 describes")
    func byteRanges() {
        #expect(ByteRange.parse("bytes=0-9", length: 100) == .satisfiable(0...9))
        #expect(ByteRange.parse("bytes=90-", length: 100) == .satisfiable(90...99))
        #expect(ByteRange.parse("bytes=-10", length: 100) == .satisfiable(90...99))
        #expect(ByteRange.parse("bytes=50-1000", length: 100) == .satisfiable(50...99))
        #expect(ByteRange.parse("bytes=100-", length: 100) == .unsatisfiable)
        #expect(ByteRange.parse("bytes=-0", length: 100) == .unsatisfiable)
        #expect(ByteRange.parse("bytes=0-1,3-4", length: 100) == .ignored)
        #expect(ByteRange.parse("lines=0-1", length: 100) == .ignored)
    }

    @Test("query strings parse like Werkzeug")
    func multiDict() {
        let args = MultiDict(urlEncoded: "a=1&a=2&&b=x+y&c&d=%zz&%E2%9C%93=%E2%9C%93")
        #expect(args.json == .object(["a": .array(["1", "2"]), "b": "x y", "c": "", "d": "%zz", "✓": "✓"]))
        #expect(args.option("A") == "1")
        #expect(args.firstValues.map(\.name) == ["a", "b", "c", "d", "✓"])
    }

    @Test("HTTP dates use the IMF-fixdate format")
    func httpDate() {
        #expect(HTTPDate.string(from: Date(timeIntervalSince1970: 0)) == "Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(HTTPDate.string(from: Date(timeIntervalSince1970: 784_111_777)) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.string(from: Date(timeIntervalSince1970: 951_782_400)) == "Tue, 29 Feb 2000 00:00:00 GMT")
    }

    @Test("seeded byte streams do not depend on how they are split")
    func randomStream() {
        var whole = RandomByteStream(seed: 99)
        var split = RandomByteStream(seed: 99)
        let expected = Array(whole.next(100).readableBytesView)
        var pieces: [UInt8] = []
        for size in [3, 8, 1, 13, 75] {
            pieces += split.next(size).readableBytesView
        }
        #expect(pieces == expected)
    }

    @Test("header names are title-cased like httpbin's")
    func titleCase() {
        #expect(RequestInfo.titleCased("user-agent") == "User-Agent")
        #expect(RequestInfo.titleCased("x-api-key") == "X-Api-Key")
        #expect(RequestInfo.titleCased("x-b3traceid") == "X-B3Traceid")
        #expect(RequestInfo.titleCased("CONTENT-TYPE") == "Content-Type")
    }
}
