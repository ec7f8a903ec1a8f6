import Foundation
import Testing

@testable import Kite

@Suite struct JSONSerializerOptionsTests {
    private let get = HTTPRequest(method: .get, scheme: "http", authority: "example.com", path: "/")

    private func response(_ code: Int = 200, contentType: String? = "application/json") -> HTTPResponse {
        var fields = HTTPFields()
        if let contentType { fields[.contentType] = contentType }
        return HTTPResponse(status: .init(code: code), headerFields: fields)
    }

    private func serialize(
        _ text: String,
        with serializer: JSONResponseSerializer,
        status: Int = 200,
        contentType: String? = "application/json"
    ) throws -> JSONValue {
        try serializer.serialize(
            request: self.get,
            response: self.response(status, contentType: contentType),
            data: Data(text.utf8),
            error: nil
        )
    }

    // MARK: - Null removal

    @Test func nullMembersAndElementsAreRemovedAtEveryDepth() throws {
        let body = #"""
            {"a":null,"b":{"c":null,"d":1,"e":{"f":null}},"g":[{"h":null,"i":2},null,3,[null,[null,{"j":null}]]],"k":"x"}
            """#
        let serializer = JSONResponseSerializer(removesKeysWithNullValues: true)
        let value = try self.serialize(body, with: serializer)
        let expected: JSONValue = .object([
            "b": .object(["d": .int(1), "e": .object([:])]),
            "g": .array([.object(["i": .int(2)]), .int(3), .array([.array([.object([:])])])]),
            "k": .string("x"),
        ])
        #expect(value == expected)
        #expect(value.description == #"{"b":{"d":1,"e":{}},"g":[{"i":2},3,[[{}]]],"k":"x"}"#)
    }

    @Test func nullsAreKeptByDefault() throws {
        let value = try self.serialize(#"{"a":null,"b":[null,1]}"#, with: JSONResponseSerializer())
        #expect(value == .object(["a": .null, "b": .array([.null, .int(1)])]))
        #expect(JSONResponseSerializer().removesKeysWithNullValues == false)
        #expect(JSONResponseSerializer.serializer().removesKeysWithNullValues == false)
    }

    @Test func anArrayOfObjectsLosesOnlyTheNullMembers() throws {
        let serializer = JSONResponseSerializer(readingOptions: [], removesKeysWithNullValues: true)
        let value = try self.serialize(#"[{"id":1,"name":null},{"id":2,"name":"b"},{"id":null}]"#, with: serializer)
        #expect(
            value
                == .array([
                    .object(["id": .int(1)]),
                    .object(["id": .int(2), "name": .string("b")]),
                    .object([:]),
                ])
        )
    }

    @Test func aTopLevelNullStaysNull() throws {
        let serializer = JSONResponseSerializer(removesKeysWithNullValues: true)
        #expect(try self.serialize("null", with: serializer) == .null)
        #expect(JSONValue.null.removingNullValues() == .null)
        #expect(JSONValue.array([.null, .null]).removingNullValues() == .array([]))
        #expect(JSONValue.string("null").removingNullValues() == .string("null"))
        #expect(JSONValue.bool(false).removingNullValues() == .bool(false))
        #expect(JSONValue.int(0).removingNullValues() == .int(0))
    }

    // MARK: - Fragments

    @Test(
        arguments: [
            // (body, value with fragments allowed, its description in the refusal)
            (#""x""#, JSONValue.string("x"), #""x""#),
            ("1", .int(1), "1"),
            ("-2.5", .double(-2.5), "-2.5"),
            ("true", .bool(true), "true"),
            ("null", .null, "null"),
        ]
    )
    func fragmentsNeedFragmentsAllowed(body: String, value: JSONValue, described: String) throws {
        #expect(JSONResponseSerializer().readingOptions == .fragmentsAllowed)
        #expect(try self.serialize(body, with: JSONResponseSerializer()) == value)
        #expect(try self.serialize(body, with: JSONResponseSerializer(readingOptions: .fragmentsAllowed)) == value)

        for serializer in [JSONResponseSerializer(readingOptions: []), .serializer()] {
            #expect {
                try self.serialize(body, with: serializer)
            } throws: { error in
                let error = error as? KiteError
                return error?.code == .responseSerializationFailed
                    && error?.message
                        == "the body is a JSON fragment (\(described)), not an object or array, and readingOptions "
                        + "do not contain .fragmentsAllowed"
            }
        }
    }

    @Test func objectsAndArraysNeedNoFragmentOption() throws {
        let strict = JSONResponseSerializer(readingOptions: [])
        #expect(try self.serialize("{}", with: strict) == .object([:]))
        #expect(try self.serialize("[]", with: strict) == .array([]))
        #expect(try self.serialize(#" [1, "a"] "#, with: strict) == .array([.int(1), .string("a")]))
        #expect(try self.serialize(#"{"a":true}"#, with: .serializer()) == .object(["a": .bool(true)]))
    }

    @Test func invalidJSONIsASerializationFailureWithTheDecodingError() {
        #expect {
            try self.serialize(#"{"a":"#, with: .serializer())
        } throws: { error in
            let error = error as? KiteError
            return error?.code == .responseSerializationFailed
                && error?.message.hasPrefix("the body is not valid JSON: ") == true
                && error?.underlyingError is DecodingError
        }
    }

    // MARK: - Blank bodies

    @Test(arguments: ["", " ", "\n\t ", "\r\n", "   \n"])
    func blankBodiesAreEmptyForEveryPreset(body: String) throws {
        // The default serializer: an error for 200, `.null` for 204 and 205.
        #expect {
            try self.serialize(body, with: JSONResponseSerializer())
        } throws: { error in
            let error = error as? KiteError
            return error?.code == .responseSerializationFailed
                && error?.message == "the response body is empty (status 200), so it cannot be serialized as JSON"
                && error?.response?.status.code == 200
        }
        #expect(try self.serialize(body, with: JSONResponseSerializer(), status: 204) == .null)
        #expect(try self.serialize(body, with: JSONResponseSerializer(), status: 205) == .null)
        #expect(try self.serialize(body, with: JSONResponseSerializer(readingOptions: []), status: 204) == .null)
        let head = HTTPRequest(method: .head, scheme: "http", authority: "example.com", path: "/")
        #expect(
            try JSONResponseSerializer().serialize(
                request: head,
                response: self.response(200),
                data: Data(body.utf8),
                error: nil
            ) == .null
        )

        // AFNetworking's serializer gives `.null` for every status it accepts. It checks the type of a blank body
        // that is not empty (AFNetworking checks any body of one byte or more), so one without a type is refused.
        for status in [200, 201, 204, 299] {
            #expect(try self.serialize(body, with: .serializer(), status: status) == .null)
            if body.isEmpty {
                #expect(try self.serialize(body, with: .serializer(), status: status, contentType: nil) == .null)
            } else {
                #expect {
                    try self.serialize(body, with: .serializer(), status: status, contentType: nil)
                } throws: { error in
                    (error as? KiteError)?.code == .responseValidationFailed
                        && (error as? KiteError)?.responseBody == Data(body.utf8)
                }
            }
        }
        // ...but still refuses a status it does not accept.
        #expect {
            try self.serialize(body, with: .serializer(), status: 500)
        } throws: { error in
            let error = error as? KiteError
            return error?.code == .responseValidationFailed
                && error?.message == "response status 500 is not acceptable (200..<300)"
        }
    }

    @Test func whitespaceAroundJSONIsNotBlank() throws {
        #expect(try self.serialize(" {\"a\":1} \n", with: .serializer()) == .object(["a": .int(1)]))
        #expect(try self.serialize("\n 7 \n", with: JSONResponseSerializer()) == .int(7))
    }

    @Test func aNonBreakingSpaceIsNotJSONWhitespace() {
        #expect(throws: KiteError(code: .responseSerializationFailed, message: "")) {
            try self.serialize("\u{A0}", with: .serializer())
        }
    }

    // MARK: - AFNetworking's defaults

    @Test func serializerHasAFNetworkingsDefaults() {
        let serializer = JSONResponseSerializer.serializer()
        #expect(serializer.acceptance == .json)
        #expect(serializer.readingOptions == [])
        #expect(serializer.emptyResponseCodes == Set(100..<600))
        #expect(serializer.emptyRequestMethods == [.head])
        #expect(JSONResponseSerializer().acceptance == .any)
    }

    @Test(arguments: ["application/json", "text/json", "text/javascript", "application/json; charset=utf-8"])
    func serializerAcceptsTheJSONTypes(contentType: String) throws {
        let value = try self.serialize(#"{"a":1}"#, with: .serializer(), contentType: contentType)
        #expect(value == .object(["a": .int(1)]))
    }

    @Test func serializerRefusesHTMLWithItsBody() {
        let body = "<html>{}</html>"
        #expect {
            try self.serialize(body, with: .serializer(), contentType: "text/html; charset=utf-8")
        } throws: { error in
            let error = error as? KiteError
            return error?.code == .responseValidationFailed
                && error?.message
                    == #"response Content-Type "text/html; charset=utf-8" is not one of application/json, text/javascript, text/json"#
                && error?.responseBody == Data(body.utf8)
        }
    }

    @Test(arguments: Backend.available)
    func serializerRefusesHTMLOnTheWire(backend: Backend) async throws {
        let url = try await backend.url("/html")
        let sent = try await Session.suite.request(url).serializingData().value
        let error = try #require(
            await Session.suite.request(url).serializingResponse(using: JSONResponseSerializer.serializer()).response
                .error
        )
        #expect(error.code == .responseValidationFailed)
        #expect(
            error.description
                == #"GET \#(url) failed: response Content-Type "text/html; charset=utf-8" is not one of application/json, text/javascript, text/json"#
        )
        #expect(error.response?.status.code == 200)
        #expect(error.responseBody == sent)
    }

    @Test(arguments: Backend.available)
    func serializerReadsJSONOnTheWire(backend: Backend) async throws {
        let url = try await backend.url("/json")
        let value = try await Session.suite.request(url)
            .serializingResponse(using: JSONResponseSerializer.serializer())
            .value
        #expect(value == (try await Session.suite.request(url).serializingJSON().value))
        #expect(value["slideshow"]?["title"] == .string("Sample Slide Show"))
        #expect(value["slideshow"]?["author"] == .string("Yours Truly"))
        #expect(value["slideshow"]?["slides"]?[1]?["items"]?.arrayValue?.count == 2)
    }

    @Test(arguments: Backend.available)
    func serializingJSONRemovesNullsSentByTheServer(backend: Backend) async throws {
        let url = try await backend.url("/post")
        let sent: JSONValue = .object([
            "a": .null,
            "b": .array([.null, .int(1), .object(["c": .null, "d": .bool(false)])]),
        ])
        let kept = try await Session.suite.request(
            url,
            method: .post,
            parameters: sent,
            encoder: JSONParameterEncoder.default
        )
        .serializingJSON()
        .value
        #expect(kept["json"] == sent)

        let removed = try await Session.suite.request(
            url,
            method: .post,
            parameters: sent,
            encoder: JSONParameterEncoder.default
        )
        .serializingJSON(removesKeysWithNullValues: true)
        .value
        #expect(removed["json"] == .object(["b": .array([.int(1), .object(["d": .bool(false)])])]))
    }

    @Test(arguments: Backend.available)
    func serializingJSONRejectsAFragmentWithoutFragmentsAllowed(backend: Backend) async throws {
        // `/base64/ImZyYWdtZW50Ig==` sends `"fragment"`.
        let url = try await backend.url("/base64/ImZyYWdtZW50Ig==")
        #expect(try await Session.suite.request(url).serializingJSON().value == .string("fragment"))
        let error = try #require(await Session.suite.request(url).serializingJSON(readingOptions: []).response.error)
        #expect(error.code == .responseSerializationFailed)
        #expect(
            error.message
                == #"the body is a JSON fragment ("fragment"), not an object or array, and readingOptions do not contain .fragmentsAllowed"#
        )
    }

    // MARK: - responseObject()

    @Test func responseObjectGivesFoundationTypes() throws {
        let value: JSONValue = .object([
            "null": .null,
            "int": .int(42),
            "double": .double(2.5),
            "bool": .bool(true),
            "string": .string("s"),
            "array": .array([.int(1), .null, .object(["inner": .bool(false)])]),
        ])
        let object = try #require(value.responseObject() as? [String: Any])
        #expect(object.count == 6)
        #expect(object["null"] is NSNull)
        #expect(object["int"] as? Int == 42)
        #expect(type(of: try #require(object["int"])) == Int.self)
        #expect(object["double"] as? Double == 2.5)
        #expect(type(of: try #require(object["double"])) == Double.self)
        #expect(object["bool"] as? Bool == true)
        #expect(type(of: try #require(object["bool"])) == Bool.self)
        #expect(object["string"] as? String == "s")
        let array = try #require(object["array"] as? [Any])
        #expect(array.count == 3)
        #expect(array[0] as? Int == 1)
        #expect(array[1] is NSNull)
        let inner = try #require(array[2] as? [String: Any])
        #expect(inner["inner"] as? Bool == false)
    }

    @Test func responseObjectOfNullIsNilAndOfScalarsIsTheScalar() throws {
        #expect(JSONValue.null.responseObject() == nil)
        #expect(JSONValue.string("x").responseObject() as? String == "x")
        #expect(JSONValue.int(-1).responseObject() as? Int == -1)
        let empty = try #require(JSONValue.array([]).responseObject() as? [Any])
        #expect(empty.isEmpty)
    }

    @Test func responseObjectSurvivesJSONSerialization() throws {
        let value: JSONValue = .object(["a": .array([.int(1), .null]), "b": .string("x")])
        let object = try #require(value.responseObject())
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        #expect(String(decoding: data, as: UTF8.self) == #"{"a":[1,null],"b":"x"}"#)
    }
}
