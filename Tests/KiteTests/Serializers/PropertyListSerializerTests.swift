import Foundation
import Testing

@testable import Kite

@Suite struct PropertyListSerializerTests {
    private let get = HTTPRequest(method: .get, scheme: "http", authority: "example.com", path: "/")

    private func response(_ code: Int = 200, contentType: String? = "application/x-plist") -> HTTPResponse {
        var fields = HTTPFields()
        if let contentType { fields[.contentType] = contentType }
        return HTTPResponse(status: .init(code: code), headerFields: fields)
    }

    private func serialize(
        _ data: Data,
        with serializer: PropertyListResponseSerializer = PropertyListResponseSerializer(),
        status: Int = 200,
        contentType: String? = "application/x-plist"
    ) throws -> PropertyListValue {
        try serializer.serialize(
            request: self.get,
            response: self.response(status, contentType: contentType),
            data: data,
            error: nil
        )
    }

    /// 2023-11-14T22:13:20Z: whole seconds, which XML property lists keep exactly.
    private static let date = Date(timeIntervalSince1970: 1_700_000_000)

    /// A property list with every type, as Foundation objects.
    private static var document: [String: Any] {
        [
            "string": "héllo <&>",
            "int": 42,
            "negative": -7,
            "real": 3.25,
            "yes": true,
            "no": false,
            "date": Self.date,
            "data": Data([0x00, 0x01, 0xFE, 0xFF]),
            "array": [1, "two", [3.5, false]] as [Any],
            "dictionary": ["inner": ["deep": true, "zero": 0] as [String: Any]] as [String: Any],
        ]
    }

    /// What ``document`` must read as.
    private static let expected: PropertyListValue = .dictionary([
        "string": .string("héllo <&>"),
        "int": .int(42),
        "negative": .int(-7),
        "real": .double(3.25),
        "yes": .bool(true),
        "no": .bool(false),
        "date": .date(Self.date),
        "data": .data(Data([0x00, 0x01, 0xFE, 0xFF])),
        "array": .array([.int(1), .string("two"), .array([.double(3.5), .bool(false)])]),
        "dictionary": .dictionary(["inner": .dictionary(["deep": .bool(true), "zero": .int(0)])]),
    ])

    private static func encoded(_ format: PropertyListSerialization.PropertyListFormat) throws -> Data {
        try PropertyListSerialization.data(fromPropertyList: Self.document, format: format, options: 0)
    }

    private static func xml(_ body: String) -> Data {
        Data(
            (#"""
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            """# + body + "\n</plist>\n").utf8
        )
    }

    // MARK: - Values

    @Test(arguments: [PropertyListSerialization.PropertyListFormat.xml, .binary])
    func everyTypeReadsAsItsExactValue(format: PropertyListSerialization.PropertyListFormat) throws {
        let data = try Self.encoded(format)
        #expect(data.starts(with: Array((format == .binary ? "bplist00" : "<?xml").utf8)))
        let value = try self.serialize(data)
        #expect(value == Self.expected)
        #expect(value["yes"]?.boolValue == true)
        #expect(value["int"]?.intValue == 42)
        #expect(value["string"]?.stringValue == "héllo <&>")
        #expect(value["array"]?[2]?[1] == .bool(false))
        #expect(value["array"]?[3] == nil)
    }

    @Test func trueIsABooleanAndOneIsAnInteger() throws {
        let value = try self.serialize(
            Self.xml(
                """
                <array><true/><false/><integer>1</integer><integer>0</integer><real>1</real><string>1</string></array>
                """
            )
        )
        #expect(value == .array([.bool(true), .bool(false), .int(1), .int(0), .double(1), .string("1")]))
        #expect(value[0]?.intValue == nil)
        #expect(value[2]?.boolValue == nil)
    }

    @Test func binaryBooleansAndSmallIntegersStayApart() throws {
        let data = try PropertyListSerialization.data(
            fromPropertyList: [true, 1, false, 0] as [Any],
            format: .binary,
            options: 0
        )
        #expect(try self.serialize(data) == .array([.bool(true), .int(1), .bool(false), .int(0)]))
    }

    @Test func integersAtTheEdgesOfInt() throws {
        let value = try self.serialize(
            Self.xml(
                """
                <array><integer>9223372036854775807</integer><integer>-9223372036854775808</integer></array>
                """
            )
        )
        #expect(value == .array([.int(Int.max), .int(Int.min)]))
    }

    @Test func integersBeyondIntBecomeDoubles() throws {
        let xml = try self.serialize(
            Self.xml("<array><integer>18446744073709551615</integer><integer>9223372036854775808</integer></array>")
        )
        #expect(xml == .array([.double(Double(UInt64.max)), .double(0x1p63)]))
        let binary = try PropertyListSerialization.data(
            fromPropertyList: [UInt64.max, Int64.min, 1.0e300] as [Any],
            format: .binary,
            options: 0
        )
        #expect(
            try self.serialize(binary) == .array([.double(Double(UInt64.max)), .int(Int.min), .double(1e300)])
        )
    }

    @Test func openStepTextIsAPropertyListToo() throws {
        // As in Foundation everywhere: OpenStep values are strings, so plain text reads as a string.
        #expect(
            try self.serialize(Data("{ a = (1, b); }".utf8))
                == .dictionary(["a": .array([.string("1"), .string("b")])])
        )
        #expect(try self.serialize(Data("hello".utf8)) == .string("hello"))
    }

    @Test func aTopLevelScalarIsAValue() throws {
        #expect(try self.serialize(Self.xml("<string>only</string>")) == .string("only"))
        #expect(try self.serialize(Self.xml("<integer>-3</integer>")) == .int(-3))
    }

    // MARK: - Failures

    @Test(
        arguments: [
            "<?xml version=\"1.0\"?><plist version=\"1.0\"><dict><key>a</key></plist>",
            "<?xml version=\"1.0\"?><plist version=\"1.0\"><integer>x</integer></plist>",
            "bplist00\u{1}\u{2}\u{3}",
        ]
    )
    func malformedPropertyListsAreSerializationFailures(body: String) {
        #expect {
            try self.serialize(Data(body.utf8))
        } throws: { error in
            let error = error as? KiteError
            return error?.code == .responseSerializationFailed
                && error?.message.hasPrefix("the body is not a property list: ") == true
                && error?.underlyingError != nil
                && error?.response?.status.code == 200
        }
    }

    @Test func anEmptyBodyIsAnErrorExceptFor204() throws {
        #expect {
            try self.serialize(Data())
        } throws: { error in
            let error = error as? KiteError
            return error?.code == .responseSerializationFailed
                && error?.message
                    == "the response body is empty (status 200), so it cannot be serialized as a property list"
        }
        #expect(try self.serialize(Data(), status: 204) == .dictionary([:]))
    }

    // MARK: - Acceptance

    @Test func defaultAcceptanceIsAFNetworkings() throws {
        let serializer = PropertyListResponseSerializer()
        #expect(serializer.acceptance == .propertyList)
        #expect(serializer.acceptableContentTypes == ["application/x-plist"])
        #expect(serializer.readOptions == [])
        let data = try Self.encoded(.xml)
        #expect(try self.serialize(data, contentType: "application/x-plist; charset=utf-8") == Self.expected)
        #expect {
            try self.serialize(data, contentType: "text/plain")
        } throws: { error in
            let error = error as? KiteError
            return error?.code == .responseValidationFailed
                && error?.message == #"response Content-Type "text/plain" is not one of application/x-plist"#
                && error?.responseBody == data
        }
        #expect {
            try self.serialize(data, status: 404)
        } throws: { error in
            (error as? KiteError)?.message == "response status 404 is not acceptable (200..<300)"
        }
    }

    @Test func anyAcceptanceReadsAPropertyListWhateverItsType() throws {
        let serializer = PropertyListResponseSerializer(acceptance: .any)
        #expect(try self.serialize(try Self.encoded(.binary), with: serializer, contentType: nil) == Self.expected)
    }

    // MARK: - On the wire

    /// `/base64/{value}` sends the decoded bytes as `text/html; charset=utf-8`: an XML property list fits.
    private func base64URL(_ data: Data, on backend: Backend) async throws -> String {
        let value = data.base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
        return try await backend.url("/base64/" + value)
    }

    @Test(arguments: Backend.available)
    func serializingPropertyListReadsAnXMLPropertyListFromTheServer(backend: Backend) async throws {
        let data = try Self.encoded(.xml)
        let url = try await self.base64URL(data, on: backend)
        let sent = await Session.suite.request(url).serializingData().response
        #expect(sent.value == data)
        #expect(sent.response?.headerFields[.contentType] == "text/html; charset=utf-8")

        let value = try await Session.suite.request(url).serializingPropertyList(options: []).value
        #expect(value == Self.expected)
    }

    @Test(arguments: Backend.available)
    func serializingPropertyListWithAFNetworkingsAcceptanceRefusesHTML(backend: Backend) async throws {
        let data = try Self.encoded(.xml)
        let url = try await self.base64URL(data, on: backend)
        let error = try #require(
            await Session.suite.request(url).serializingPropertyList(options: [], acceptance: .propertyList)
                .response.error
        )
        #expect(error.code == .responseValidationFailed)
        #expect(
            error.description
                == #"GET \#(url) failed: response Content-Type "text/html; charset=utf-8" is not one of application/x-plist"#
        )
        #expect(error.responseBody == data)
    }

    @Test(arguments: Backend.available)
    func serializingPropertyListFailsOnHTML(backend: Backend) async throws {
        let url = try await backend.url("/html")
        let error = try #require(await Session.suite.request(url).serializingPropertyList(options: []).response.error)
        #expect(error.code == .responseSerializationFailed)
        #expect(error.message.hasPrefix("the body is not a property list: "))
    }

    // MARK: - responseObject()

    @Test func responseObjectGivesFoundationTypes() throws {
        let object = try #require(Self.expected.responseObject() as? [String: Any])
        #expect(object.count == 10)
        #expect(object["string"] as? String == "héllo <&>")
        #expect(type(of: try #require(object["int"])) == Int.self)
        #expect(object["int"] as? Int == 42)
        #expect(object["negative"] as? Int == -7)
        #expect(type(of: try #require(object["real"])) == Double.self)
        #expect(object["real"] as? Double == 3.25)
        #expect(type(of: try #require(object["yes"])) == Bool.self)
        #expect(object["yes"] as? Bool == true)
        #expect(object["no"] as? Bool == false)
        #expect(object["date"] as? Date == Self.date)
        #expect(object["data"] as? Data == Data([0x00, 0x01, 0xFE, 0xFF]))
        let array = try #require(object["array"] as? [Any])
        #expect(array.count == 3)
        #expect(array[1] as? String == "two")
        let nested = try #require(array[2] as? [Any])
        #expect(nested[0] as? Double == 3.5)
        let dictionary = try #require(object["dictionary"] as? [String: Any])
        let inner = try #require(dictionary["inner"] as? [String: Any])
        #expect(inner["deep"] as? Bool == true)
        #expect(inner["zero"] as? Int == 0)
    }

    @Test func responseObjectRoundTripsThroughPropertyListSerialization() throws {
        let object = try #require(Self.expected.responseObject())
        let data = try PropertyListSerialization.data(fromPropertyList: object, format: .binary, options: 0)
        #expect(try self.serialize(data) == Self.expected)
    }

    /// A malformed binary property list whose first object is a set crashed the process in Foundation's bridging
    /// (found by the `propertyList` fuzz target); a set, which `PropertyListValue` has no case for, is refused
    /// before Foundation reads the body.
    @Test func aBinaryPropertyListHoldingASetIsRefusedWithoutReadingIt() throws {
        let crashing = try #require(
            Data(
                base64Encoded:
                    "YnBsaXN0MCbGAQIDBAUGBwsMDRARVGxpc3RRblRuYW1lbmVWc3RlZFJva1JwaSMICQMQAVN0d29CAAEQA1RLaXRl"
                    + "0Q4HUWHQCUAjCgAAAAAAAAgVGhwhKCsuMjQ5Kj1CRUdCSQAAAAAAAAEBAAAAAAAAABIAAAAAAAAAAAAAAAAAAABS"
            )
        )
        #expect(BinaryPropertyList.holdsSet(crashing))
        let error = try #require(throws: KiteError.self) { try self.serialize(crashing) }
        #expect(error.code == .responseSerializationFailed)
        #expect(error.message == "the binary property list holds a set, which PropertyListValue has no case for")

        // {"a": [1, "x"]} from Python's plistlib: no set, read as before.
        let plain = try #require(
            Data(base64Encoded: "YnBsaXN0MDDRAQJRYaIDBBABUXgICw0QEgAAAAAAAAEBAAAAAAAAAAUAAAAAAAAAAAAAAAAAAAAU")
        )
        #expect(!BinaryPropertyList.holdsSet(plain))
        #expect(try self.serialize(plain) == .dictionary(["a": .array([.int(1), .string("x")])]))
    }
}
