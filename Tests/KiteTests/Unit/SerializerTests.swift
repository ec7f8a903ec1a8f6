import Foundation
import Testing

@testable import Kite

@Suite struct SerializerTests {
    private func response(_ code: Int = 200, contentType: String? = nil) -> HTTPResponse {
        var fields = HTTPFields()
        if let contentType { fields[.contentType] = contentType }
        return HTTPResponse(status: .init(code: code), headerFields: fields)
    }

    private let get = HTTPRequest(method: .get, scheme: "http", authority: "example.com", path: "/")
    private let head = HTTPRequest(method: .head, scheme: "http", authority: "example.com", path: "/")

    @Test(
        arguments: [
            // (bytes, Content-Type, expected)
            ([0xC3, 0xA9], "text/plain; charset=utf-8", "é"),
            ([0xC3, 0xA9], "text/plain", "Ã©"),
            ([0xE9], "text/plain; charset=ISO-8859-1", "é"),
            ([0xE9], "text/html; charset=\"windows-1252\"", "é"),
            ([0xC3, 0xA9], "application/json", "é"),
            ([0xC3, 0xA9], "application/problem+json", "é"),
            ([0xC3, 0xA9], "text/plain; charset=x-unknown", "Ã©"),
            ([0xC3, 0xA9], nil, "Ã©"),
            ([0x00, 0xE9], "text/plain; charset=utf-16be", "é"),
        ] as [([UInt8], String?, String)]
    )
    func stringUsesTheCharsetThenJSONUTF8ThenLatin1(bytes: [UInt8], contentType: String?, expected: String) throws {
        let value = try StringResponseSerializer().serialize(
            request: self.get,
            response: self.response(contentType: contentType),
            data: Data(bytes),
            error: nil
        )
        #expect(value == expected)
    }

    @Test func anExplicitEncodingWinsOverTheCharset() throws {
        let value = try StringResponseSerializer(encoding: .isoLatin1).serialize(
            request: self.get,
            response: self.response(contentType: "text/plain; charset=utf-8"),
            data: Data([0xC3, 0xA9]),
            error: nil
        )
        #expect(value == "Ã©")
    }

    @Test func bytesThatAreNotValidInTheCharsetAreAnError() {
        #expect {
            try StringResponseSerializer().serialize(
                request: self.get,
                response: self.response(contentType: "text/plain; charset=utf-8"),
                data: Data([0xFF, 0xFE, 0x41]),
                error: nil
            )
        } throws: { error in
            let error = error as? KiteError
            return error?.code == .responseSerializationFailed
                && error?.message == "the 3 body bytes are not valid UTF-8"
        }
    }

    @Test(arguments: [204, 205])
    func emptyStatusesSerializeAsEmptyValues(code: Int) throws {
        let response = self.response(code)
        #expect(
            try DataResponseSerializer().serialize(request: self.get, response: response, data: Data(), error: nil)
                == Data()
        )
        #expect(
            try StringResponseSerializer().serialize(request: self.get, response: response, data: nil, error: nil) == ""
        )
        #expect(
            try JSONResponseSerializer().serialize(request: self.get, response: response, data: nil, error: nil)
                == .null
        )
        #expect(
            try DecodableResponseSerializer<Empty>().serialize(
                request: self.get,
                response: response,
                data: nil,
                error: nil
            )
                == Empty.value
        )
    }

    @Test func headResponsesSerializeAsEmpty() throws {
        #expect(
            try StringResponseSerializer().serialize(
                request: self.head,
                response: self.response(),
                data: Data(),
                error: nil
            )
                == ""
        )
    }

    @Test func anyOtherEmptyBodyIsAnErrorThatSaysWhy() {
        #expect {
            try DataResponseSerializer().serialize(
                request: self.get,
                response: self.response(),
                data: Data(),
                error: nil
            )
        } throws: { error in
            (error as? KiteError)?.message
                == "the response body is empty (status 200), so it cannot be serialized as Data"
        }
        #expect {
            try DecodableResponseSerializer<[String: Int]>().serialize(
                request: self.get,
                response: self.response(204),
                data: nil,
                error: nil
            )
        } throws: { error in
            (error as? KiteError)?.message
                == "the response body is empty and Dictionary<String, Int> has no empty value (conform it to EmptyResponse)"
        }
    }

    struct Slide: Decodable, Sendable {
        let title: String
        let items: [Int]
    }

    struct Show: Decodable, Sendable {
        let slides: [Slide]
    }

    @Test(arguments: [
        (#"{"slides":[{"title":"a","items":[1]},{"title":"b"}]}"#, #"no value for key "items" at slides[1]"#),
        (#"{"slides":[{"title":"a","items":[1,"x"]}]}"#, "expected Int at slides[0].items[1]"),
        (#"{"slides":[{"title":null,"items":[]}]}"#, "expected String but found null at slides[0].title"),
        (#"{"slides": [}"#, "the data is corrupted at the top level"),
    ])
    func decodingErrorsNameTheCodingPath(json: String, reason: String) {
        #expect {
            try DecodableResponseSerializer<Show>().serialize(
                request: self.get,
                response: self.response(contentType: "application/json"),
                data: Data(json.utf8),
                error: nil
            )
        } throws: { error in
            guard let error = error as? KiteError else { return false }
            #expect(error.message.hasPrefix("the body could not be decoded as Show: \(reason)"), "\(error.message)")
            return error.code == .responseSerializationFailed && error.underlyingError is DecodingError
        }
    }

    @Test func anyDataDecoderCanBeUsed() throws {
        struct Settings: Codable, Sendable, Equatable {
            let name: String
            let size: Int
        }
        let plist = try PropertyListEncoder().encode(Settings(name: "kite", size: 3))
        let value = try DecodableResponseSerializer<Settings>(decoder: PropertyListDecoder()).serialize(
            request: self.get,
            response: self.response(contentType: "application/x-plist"),
            data: plist,
            error: nil
        )
        #expect(value == Settings(name: "kite", size: 3))
    }

    @Test func jsonValuesKeepTheirKinds() throws {
        let json = #"{"a":[1,2.5,true,null,"s"],"b":{"c":-3},"big":9007199254740993}"#
        let value = try JSONResponseSerializer().serialize(
            request: self.get,
            response: self.response(),
            data: Data(json.utf8),
            error: nil
        )
        #expect(value["a"] == .array([.int(1), .double(2.5), .bool(true), .null, .string("s")]))
        #expect(value["b"]?["c"]?.intValue == -3)
        #expect(value["big"]?.intValue == 9_007_199_254_740_993, "integers keep full precision")
        #expect(value.description == #"{"a":[1,2.5,true,null,"s"],"b":{"c":-3},"big":9007199254740993}"#)
    }

    @Test func invalidJSONIsAnError() {
        #expect {
            try JSONResponseSerializer().serialize(
                request: self.get,
                response: self.response(),
                data: Data("{".utf8),
                error: nil
            )
        } throws: { error in
            (error as? KiteError)?.message.hasPrefix("the body is not valid JSON: ") == true
        }
    }

    @Test func anIncomingErrorIsRethrownUnchanged() {
        let incoming = KiteError(code: .responseValidationFailed, message: "nope")
        #expect {
            try DataResponseSerializer().serialize(
                request: self.get,
                response: self.response(),
                data: Data("x".utf8),
                error: incoming
            )
        } throws: { error in
            (error as? KiteError)?.message == "nope"
        }
    }

    @Test(
        arguments: [
            ("text/html; charset=UTF-8", "text", "html", "UTF-8"),
            ("Application/JSON", "application", "json", nil),
            (#"multipart/form-data; boundary="a;b""#, "multipart", "form-data", nil),
        ] as [(String, String, String, String?)]
    )
    func mediaTypesParse(text: String, type: String, subtype: String, charset: String?) throws {
        let mediaType = try #require(MediaType(text))
        #expect(mediaType.type == type)
        #expect(mediaType.subtype == subtype)
        #expect(mediaType.parameters["charset"] == charset)
    }
}
