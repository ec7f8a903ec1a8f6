import Foundation
import HTTPTypes
import Testing

@testable import Kite

/// Edge cases of acceptance found by review: an empty or misspelled type set must not turn the check off, and a
/// refused blank JSON body keeps its bytes.
@Suite struct ResponseAcceptanceEdgeTests {
    private func response(_ code: Int = 200, contentType: String?) -> HTTPResponse {
        var fields = HTTPFields()
        if let contentType { fields[.contentType] = contentType }
        return HTTPResponse(status: .init(code: code), headerFields: fields)
    }

    @Test func anEmptyTypeSetRefusesEveryNonEmptyBody() throws {
        let acceptance = ResponseAcceptance(contentTypes: [])
        let error = try #require(
            acceptance.check(response: self.response(contentType: "text/plain"), data: Data("x".utf8))
        )
        #expect(error.code == .responseValidationFailed)
        #expect(
            error.message
                == "response Content-Type \"text/plain\" is not no content type (acceptableContentTypes is empty)"
        )
        #expect(acceptance.check(response: self.response(contentType: "text/plain"), data: Data()) == nil)
        var serializer = DataResponseSerializer()
        serializer.acceptableContentTypes = []
        #expect(throws: KiteError.self) {
            try serializer.serialize(
                request: nil,
                response: self.response(contentType: "application/json"),
                data: Data("{}".utf8),
                error: nil
            )
        }
    }

    @Test func aTypeThatIsNotAMediaTypeMatchesNothing() throws {
        let acceptance = ResponseAcceptance(contentTypes: ["json"])
        let error = try #require(
            acceptance.check(response: self.response(contentType: "text/plain"), data: Data("x".utf8))
        )
        #expect(error.message == "response Content-Type \"text/plain\" is not one of json")
        let mixed = ResponseAcceptance(contentTypes: ["json", "application/json"])
        #expect(mixed.check(response: self.response(contentType: "application/json"), data: Data("{}".utf8)) == nil)
    }

    @Test func aRefusedBlankJSONBodyKeepsItsBytes() throws {
        let blank = Data(" ".utf8)
        let serializer = JSONResponseSerializer.serializer()
        do {
            _ = try serializer.serialize(
                request: nil,
                response: self.response(500, contentType: "application/json"),
                data: blank,
                error: nil
            )
            Issue.record("a 500 was accepted")
        } catch let error as KiteError {
            #expect(error.message == "response status 500 is not acceptable (200..<300)")
            #expect(error.responseBody == blank)
        }
        // AFNetworking checks the one-byte body's type before its emptiness: text/html is refused.
        #expect(throws: KiteError.self) {
            try serializer.serialize(
                request: nil,
                response: self.response(contentType: "text/html"),
                data: blank,
                error: nil
            )
        }
        let accepted = try serializer.serialize(
            request: nil,
            response: self.response(contentType: "application/json"),
            data: blank,
            error: nil
        )
        #expect(accepted == .null)
    }
}
