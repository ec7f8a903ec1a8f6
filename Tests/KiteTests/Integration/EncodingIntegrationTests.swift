import Foundation
import Kite
import Testing

/// Parameters as the servers parse them (Hummingbird in process, werkzeug in httpbin).
@Suite struct EncodingIntegrationTests {
    @Test(arguments: Backend.available)
    func nestedQueryParametersAndUnicodeRoundTrip(backend: Backend) async throws {
        let parameters: Parameters = [
            "user": ["name": "Zoë 👍", "roles": ["admin", "dev"]] as Parameters,
            "q": "a&b=c?d/e",
            "flag": true,
        ]
        let response = await Session.suite.request(try await backend.url("/get"), parameters: parameters)
            .validate()
            .serializingDecodable(LooseEcho.self)
            .response
        let echo = try #require(response.value)
        #expect(echo.args["user[name]"] == .string("Zoë 👍"))
        #expect(echo.args["user[roles][]"] == .array([.string("admin"), .string("dev")]))
        #expect(echo.args["q"] == .string("a&b=c?d/e"))
        #expect(echo.args["flag"] == .string("1"))
        #expect(
            response.request?.path
                == "/get?flag=1&q=a%26b%3Dc?d/e&user%5Bname%5D=Zo%C3%AB%20%F0%9F%91%8D&user%5Broles%5D%5B%5D=admin&user%5Broles%5D%5B%5D=dev"
        )
    }

    @Test(arguments: Backend.available)
    func formBodiesArePostedForNonQueryMethods(backend: Backend) async throws {
        let response = await Session.suite.request(
            try await backend.url("/post"),
            method: .post,
            parameters: ["name": "kite", "tags": ["a", "b"]]
        )
        .validate()
        .serializingDecodable(LooseEcho.self)
        .response
        let echo = try #require(response.value)
        #expect(echo.form?["name"] == .string("kite"))
        #expect(echo.form?["tags[]"] == .array([.string("a"), .string("b")]))
        #expect(echo.headers.header("Content-Type") == "application/x-www-form-urlencoded; charset=utf-8")
        #expect(response.request?.headerFields[.contentType] == "application/x-www-form-urlencoded; charset=utf-8")
    }

    @Test(arguments: Backend.available)
    func jsonEncodingSendsSortedJSON(backend: Backend) async throws {
        let echo = try await Session.suite.request(
            try await backend.url("/put"),
            method: .put,
            parameters: ["b": [1, 2], "a": ["nested": NSNull()] as Parameters],
            encoding: JSONEncoding.default
        )
        .validate()
        .serializingDecodable(LooseEcho.self)
        .value
        #expect(echo.data == #"{"a":{"nested":null},"b":[1,2]}"#)
        #expect(echo.json == .object(["a": .object(["nested": .null]), "b": .array([.int(1), .int(2)])]))
    }

    @Test(arguments: Backend.available)
    func encodableFormsUseTheEncoderStrategies(backend: Backend) async throws {
        struct Search: Encodable, Sendable {
            let searchTerm: String
            let exact: Bool
        }
        let encoder = URLEncodedFormParameterEncoder(
            encoder: URLEncodedFormEncoder(
                boolEncoding: .literal,
                keyEncoding: .convertToSnakeCase,
                spaceEncoding: .plusReplaced
            ),
            destination: .httpBody
        )
        let echo = try await Session.suite.request(
            try await backend.url("/patch"),
            method: .patch,
            parameters: Search(searchTerm: "swift nio", exact: false),
            encoder: encoder
        )
        .validate()
        .serializingDecodable(LooseEcho.self)
        .value
        #expect(echo.form == ["exact": .string("false"), "search_term": .string("swift nio")])
    }

    @Test(arguments: Backend.available)
    func propertyListsArePostedAsXML(backend: Backend) async throws {
        let echo = try await Session.suite.request(
            try await backend.url("/post"),
            method: .post,
            parameters: ["name": "kite"],
            encoding: PropertyListEncoding.xml
        )
        .validate()
        .serializingDecodable(LooseEcho.self)
        .value
        #expect(echo.headers.header("Content-Type") == "application/x-plist")
        let data = Data(try #require(echo.data).utf8)
        let plist = try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: String]
        #expect(plist == ["name": "kite"])
    }
}
