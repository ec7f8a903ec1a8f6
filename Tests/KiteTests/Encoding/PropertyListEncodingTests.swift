import Foundation
import Kite
import Testing

@Suite("PropertyListEncoding")
struct PropertyListEncodingTests {
    static let sample: Parameters = [
        "string": "kite é",
        "int": 42,
        "negative": Int64(-7),
        "double": 2.5,
        "bool": true,
        "date": Date(timeIntervalSince1970: 0),
        "data": Data([1, 2, 3]),
        "array": ["x", 1] as [any Sendable],
        "nested": ["inner": ["deep": false]],
    ]

    @Test func xmlBytes() throws {
        let draft = try PropertyListEncoding.xml.encode(makeDraft(.post), with: ["b": "x", "a": 1])
        let expected = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <dict>
            \t<key>a</key>
            \t<integer>1</integer>
            \t<key>b</key>
            \t<string>x</string>
            </dict>
            </plist>

            """
        #expect(bodyText(draft) == expected)
        #expect(draft.headerFields[.contentType] == "application/x-plist")
    }

    @Test(arguments: [
        (PropertyListEncoding.default, PropertyListSerialization.PropertyListFormat.xml),
        (PropertyListEncoding.xml, .xml),
        (PropertyListEncoding.binary, .binary),
    ])
    func roundTrips(encoding: PropertyListEncoding, format: PropertyListSerialization.PropertyListFormat) throws {
        #expect(encoding.format == format)
        let draft = try encoding.encode(makeDraft(.post), with: Self.sample)
        let body = try #require(draft.body)
        var readFormat = PropertyListSerialization.PropertyListFormat.openStep
        let object = try PropertyListSerialization.propertyList(from: body, options: [], format: &readFormat)
        #expect(readFormat == format)
        let dictionary = try #require(object as? [String: Any])
        #expect(dictionary.count == 9)
        #expect(dictionary["string"] as? String == "kite é")
        #expect(dictionary["int"] as? Int == 42)
        #expect(dictionary["negative"] as? Int == -7)
        #expect(dictionary["double"] as? Double == 2.5)
        #expect(dictionary["bool"] as? Bool == true)
        #expect(dictionary["date"] as? Date == Date(timeIntervalSince1970: 0))
        #expect(dictionary["data"] as? Data == Data([1, 2, 3]))
        let array = try #require(dictionary["array"] as? [Any])
        #expect(array.count == 2)
        #expect(array.first as? String == "x")
        #expect(array.last as? Int == 1)
        let nested = try #require(dictionary["nested"] as? [String: Any])
        #expect((nested["inner"] as? [String: Any])?["deep"] as? Bool == false)
        #expect(draft.headerFields[.contentType] == "application/x-plist")
    }

    @Test func binaryHasMagic() throws {
        let draft = try PropertyListEncoding.binary.encode(makeDraft(.post), with: ["a": 1])
        #expect(draft.body?.prefix(8) == Data("bplist00".utf8))
    }

    static let invalidCases: [(name: String, parameters: Parameters, message: String)] = [
        ("NSNull", ["a": NSNull()], #"nil at "a" is not a property list value; property lists have no null"#),
        (
            "Optional.none in array", ["list": [1, nil] as [Int?]],
            #"nil at "list[1]" is not a property list value; property lists have no null"#
        ),
        (
            "custom struct", ["user": ["p": Point(x: 1, y: 2)]],
            #"value of type Point at "user.p" is not a property list value;"#
                + " use strings, numbers, Booleans, dates, data, arrays or [String: …] dictionaries"
        ),
        (
            "Decimal", ["d": Decimal(1)],
            #"value of type Decimal at "d" is not a property list value; convert it to a Double or a String"#
        ),
        (
            "non-string keys", ["m": [1: "one"]],
            #"value of type Dictionary<Int, String> at "m" is not a property list value;"#
                + " property list dictionary keys must be strings"
        ),
    ]

    @Test(arguments: Self.invalidCases)
    func invalidValues(name: String, parameters: Parameters, message: String) {
        let actual = encodingFailureMessage {
            _ = try PropertyListEncoding.default.encode(makeDraft(.post), with: parameters)
        }
        #expect(actual == message)
    }

    @Test func presetContentTypeIsKeptAndNilIsUnchanged() throws {
        let preset = makeDraft(.post, contentType: "application/octet-stream")
        let draft = try PropertyListEncoding.binary.encode(preset, with: ["a": 1])
        #expect(draft.headerFields[.contentType] == "application/octet-stream")
        #expect(try PropertyListEncoding.default.encode(preset, with: nil) == preset)
    }

    @Test func openStepCannotBeWritten() {
        let message = encodingFailureMessage {
            _ = try PropertyListEncoding(format: .openStep).encode(makeDraft(.post), with: ["a": 1])
        }
        #expect(message == "property lists cannot be written in the OpenStep format; use .xml or .binary")
    }
}
