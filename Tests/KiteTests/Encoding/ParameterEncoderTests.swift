import Foundation
import Kite
import Testing

struct EncoderSearch: Encodable, Sendable {
    let query: String
    let page: Int
    let tags: [String]
}

struct EncoderLogin: Encodable, Sendable {
    let email: String
    let password: String
    let remember: Bool
}

private struct Scored: Encodable, Sendable {
    let name: String
    let scores: [Double]
}

private struct Nothing: Encodable, Sendable {}

@Suite("URLEncodedFormParameterEncoder")
struct URLEncodedFormParameterEncoderTests {
    static let search = EncoderSearch(query: "kite flyer", page: 2, tags: ["a", "b"])
    static let searchQuery = "page=2&query=kite%20flyer&tags%5B%5D=a&tags%5B%5D=b"

    static let methodCases: [(method: HTTPRequest.Method, inQuery: Bool)] = [
        (.get, true), (.head, true), (.delete, true), (.post, false), (.put, false), (.patch, false),
    ]

    @Test(arguments: Self.methodCases)
    func methodDependentDestination(method: HTTPRequest.Method, inQuery: Bool) throws {
        let draft = try URLEncodedFormParameterEncoder.default.encode(Self.search, into: makeDraft(method))
        if inQuery {
            #expect(draft.url.absoluteString == "https://example.com/path?" + Self.searchQuery)
            #expect(draft.body == nil)
            #expect(draft.headerFields[.contentType] == nil)
        } else {
            #expect(draft.url.absoluteString == "https://example.com/path")
            #expect(bodyText(draft) == Self.searchQuery)
            #expect(draft.headerFields[.contentType] == "application/x-www-form-urlencoded; charset=utf-8")
        }
    }

    static let urlCases: [(url: String, expected: String)] = [
        ("https://example.com/p?x=1", "https://example.com/p?x=1&" + Self.searchQuery),
        ("https://example.com/p?x=1#frag", "https://example.com/p?x=1&" + Self.searchQuery + "#frag"),
        ("https://example.com/p#frag", "https://example.com/p?" + Self.searchQuery + "#frag"),
        ("https://example.com/p?", "https://example.com/p?" + Self.searchQuery),
    ]

    @Test(arguments: Self.urlCases)
    func appendsToExistingQuery(url: String, expected: String) throws {
        let encoder = URLEncodedFormParameterEncoder(destination: .queryString)
        let draft = try encoder.encode(Self.search, into: makeDraft(.post, url))
        #expect(draft.url.absoluteString == expected)
        #expect(draft.body == nil)
    }

    @Test func emptyValueAddsNoQuestionMark() throws {
        let draft = try URLEncodedFormParameterEncoder.default.encode(
            Nothing(),
            into: makeDraft(.get, "https://e.com/p#f")
        )
        #expect(draft.url.absoluteString == "https://e.com/p#f")
    }

    @Test func bodyDestinationAndPresetContentType() throws {
        let encoder = URLEncodedFormParameterEncoder(
            encoder: URLEncodedFormEncoder(spaceEncoding: .plusReplaced),
            destination: .httpBody
        )
        let draft = try encoder.encode(Self.search, into: makeDraft(.get, contentType: "text/plain"))
        #expect(draft.url.absoluteString == "https://example.com/path")
        #expect(bodyText(draft) == "page=2&query=kite+flyer&tags%5B%5D=a&tags%5B%5D=b")
        #expect(draft.headerFields[.contentType] == "text/plain")
    }

    @Test func nilLeavesDraftUnchanged() throws {
        let original = makeDraft(.get)
        #expect(try URLEncodedFormParameterEncoder.default.encode(EncoderSearch?.none, into: original) == original)
    }

    @Test func encodingErrorsPropagate() {
        let message = encodingFailureMessage {
            _ = try URLEncodedFormParameterEncoder.default.encode([1, 2], into: makeDraft(.get))
        }
        #expect(message?.hasPrefix("URLEncodedFormEncoder can only encode a keyed value") == true)
    }

    @Test func queryCharactersAURLCannotHoldAreAnErrorNotACrash() {
        let encoder = URLEncodedFormParameterEncoder(
            encoder: URLEncodedFormEncoder(allowedCharacters: CharacterSet(charactersIn: "abc=# ")),
            destination: .queryString
        )
        let message = encodingFailureMessage {
            _ = try encoder.encode(["a": "b#c"], into: makeDraft(.get))
        }
        #expect(
            message == #"the encoded query "a=b#c" holds characters a URL query cannot contain unescaped;"#
                + " remove them from the encoder's allowed characters"
        )
        let percent = URLEncodedFormParameterEncoder(
            encoder: URLEncodedFormEncoder(allowedCharacters: CharacterSet(charactersIn: "a=%")),
            destination: .queryString
        )
        #expect(encodingFailureMessage { _ = try percent.encode(["a": "%"], into: makeDraft(.get)) } != nil)
    }

    @Test func defaults() {
        #expect(URLEncodedFormParameterEncoder.default.destination == .methodDependent)
        #expect(URLEncodedFormParameterEncoder().encoder.alphabetizeKeyValuePairs)
    }
}

@Suite("JSONParameterEncoder")
struct JSONParameterEncoderTests {
    static let login = EncoderLogin(email: "a@example.com", password: "p/w", remember: true)

    @Test(arguments: [JSONParameterEncoder.default, .sortedKeys, JSONParameterEncoder()])
    func compactWithSortedKeys(encoder: JSONParameterEncoder) throws {
        #expect(encoder.encoder.outputFormatting == .sortedKeys)
        let draft = try encoder.encode(Self.login, into: makeDraft(.post))
        #expect(bodyText(draft) == #"{"email":"a@example.com","password":"p\/w","remember":true}"#)
        #expect(draft.headerFields[.contentType] == "application/json")
        let dictionary = try encoder.encode(["b": 1, "a": 2, "c": 3], into: makeDraft(.post))
        #expect(bodyText(dictionary) == #"{"a":2,"b":1,"c":3}"#)
    }

    @Test func prettyPrinted() throws {
        let draft = try JSONParameterEncoder.prettyPrinted.encode(
            Scored(name: "k", scores: [1, 2.5]),
            into: makeDraft(.post)
        )
        let expected = """
            {
              "name" : "k",
              "scores" : [
                1,
                2.5
              ]
            }
            """
        #expect(bodyText(draft) == expected)
    }

    @Test func givenEncoderIsUsedAsConfigured() throws {
        let encoder = JSONParameterEncoder(encoder: JSONParameterEncoder.makeEncoder(.withoutEscapingSlashes))
        let draft = try encoder.encode(["path": "a/b"], into: makeDraft(.post))
        #expect(bodyText(draft) == #"{"path":"a/b"}"#)
    }

    @Test func customEncoder() throws {
        let jsonEncoder = JSONEncoder()
        jsonEncoder.keyEncodingStrategy = .convertToSnakeCase
        jsonEncoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let structDraft = try JSONParameterEncoder(encoder: jsonEncoder).encode(
            CamelCased(userName: "a/b"),
            into: makeDraft(.post)
        )
        #expect(bodyText(structDraft) == #"{"user_name":"a/b"}"#)
    }

    @Test(arguments: [HTTPRequest.Method.get, .post, .put])
    func bodyForEveryMethod(method: HTTPRequest.Method) throws {
        let draft = try JSONParameterEncoder.sortedKeys.encode(["a": 1], into: makeDraft(method, "https://e.com/p?x=1"))
        #expect(draft.url.absoluteString == "https://e.com/p?x=1")
        #expect(bodyText(draft) == #"{"a":1}"#)
    }

    @Test func presetContentTypeIsKept() throws {
        let draft = try JSONParameterEncoder.default.encode(["a": 1], into: makeDraft(.post, contentType: "text/json"))
        #expect(draft.headerFields[.contentType] == "text/json")
    }

    @Test func nilLeavesDraftUnchanged() throws {
        let original = makeDraft(.post)
        #expect(try JSONParameterEncoder.default.encode(EncoderLogin?.none, into: original) == original)
    }

    @Test func nanNamesTheKeyPath() {
        let message = encodingFailureMessage {
            _ = try JSONParameterEncoder.default.encode(Scored(name: "k", scores: [1, .nan]), into: makeDraft(.post))
        }
        #expect(message?.hasPrefix(#"value of type Double at "scores[1]" could not be encoded as JSON: "#) == true)
    }

    @Test func customErrorsAreWrapped() {
        let message = encodingFailureMessage {
            _ = try JSONParameterEncoder.default.encode(FailingValue(), into: makeDraft(.post))
        }
        #expect(message == "JSONEncoder could not encode a value of type FailingValue: boom")
    }
}

private struct CamelCased: Encodable, Sendable {
    let userName: String
}

private struct FailingValue: Encodable, Sendable {
    func encode(to encoder: any Encoder) throws {
        throw Boom()
    }
}
