import Foundation
import Kite
import Testing

/// The examples in the encoding DocC comments, checked against what the comments say they give.
@Suite("Encoding documentation examples")
struct DocumentationExampleTests {
    @Test func urlEncodingOverview() throws {
        let encoding = URLEncoding(destination: .queryString, arrayEncoding: .noBrackets, boolEncoding: .literal)
        let draft = RequestDraft(url: URL(string: "https://example.com/search")!)
        let encoded = try encoding.encode(draft, with: ["tag": ["a", "b"], "exact": true])
        #expect(encoded.url.absoluteString == "https://example.com/search?exact=true&tag=a&tag=b")
    }

    @Test func urlEncodingBody() throws {
        let draft = RequestDraft(method: .post, url: URL(string: "https://example.com/form")!)
        let encoded = try URLEncoding.default.encode(draft, with: ["name": "Kite Flyer"])
        #expect(bodyText(encoded) == "name=Kite%20Flyer")
        #expect(encoded.headerFields[.contentType] == "application/x-www-form-urlencoded; charset=utf-8")
    }

    @Test func urlEncodingHelpers() {
        let components = URLEncoding.default.queryComponents(fromKey: "a", value: ["b": [1, 2]])
        #expect(components.map(\.0) == ["a%5Bb%5D%5B%5D", "a%5Bb%5D%5B%5D"])
        #expect(components.map(\.1) == ["1", "2"])
        #expect(URLEncoding.default.escape("a b&c/d?👍") == "a%20b%26c/d?%F0%9F%91%8D")
        #expect(URLEncoding.ArrayEncoding.indexInBrackets.encode(key: "a", atIndex: 2) == "a[2]")
        #expect(URLEncoding.BoolEncoding.numeric.encode(value: true) == "1")
        let custom = URLEncoding(arrayEncoding: .custom { key, index in "\(key)(\(index))" })
        #expect(custom.arrayEncoding.encode(key: "k", atIndex: 1) == "k(1)")
    }

    @Test func jsonEncodingExamples() throws {
        let users = RequestDraft(method: .post, url: URL(string: "https://example.com/users")!)
        let encoded = try JSONEncoding.default.encode(users, with: ["name": "kite", "tags": ["a", "b"]])
        #expect(bodyText(encoded) == #"{"name":"kite","tags":["a","b"]}"#)
        #expect(encoded.headerFields[.contentType] == "application/json")
        let compact = try JSONEncoding.default.encode(users, with: ["b": [true], "a": 1])
        #expect(bodyText(compact) == #"{"a":1,"b":[true]}"#)
        let batch = RequestDraft(method: .post, url: URL(string: "https://example.com/batch")!)
        let array = try JSONEncoding.default.encode(batch, withJSONObject: [["id": 1], ["id": 2]])
        #expect(bodyText(array) == #"[{"id":1},{"id":2}]"#)
        _ = JSONEncoding(options: [.prettyPrinted, .withoutEscapingSlashes])
    }

    @Test func propertyListExamples() throws {
        let draft = RequestDraft(method: .post, url: URL(string: "https://example.com/settings")!)
        let binary = try PropertyListEncoding.binary.encode(draft, with: ["volume": 11, "muted": false])
        #expect(binary.body?.prefix(6) == Data("bplist".utf8))
        let xml = try PropertyListEncoding.xml.encode(draft, with: ["volume": 11])
        #expect(bodyText(xml)?.contains("<key>volume</key>") == true)
        _ = PropertyListEncoding(format: .binary)
    }

    @Test func formEncoderOverview() throws {
        struct Search: Encodable {
            let query: String
            let page: Int
            let filters: [String: Bool]
        }
        let encoder = URLEncodedFormEncoder(boolEncoding: .literal, spaceEncoding: .plusReplaced)
        let text: String = try encoder.encode(Search(query: "kite flyer", page: 2, filters: ["new": true]))
        #expect(text == "filters%5Bnew%5D=true&page=2&query=kite+flyer")
    }

    @Test func formEncoderStrategyComments() throws {
        let name: String = try URLEncodedFormEncoder().encode(["name": "Kite", "tags": "a&b"])
        #expect(name == "name=Kite&tags=a%26b")
        let body: Data = try URLEncodedFormEncoder().encode(["name": "Kite"])
        #expect(body == Data("name=Kite".utf8))
        let flag: String = try URLEncodedFormEncoder(boolEncoding: .literal).encode(["flag": true])
        #expect(flag == "flag=true")
        let data: String = try URLEncodedFormEncoder(
            dataEncoding: .custom { data in data.map { String($0) }.joined(separator: "-") }
        ).encode(["data": Data([1, 2])])
        #expect(data == "data=1-2")
        let date: String = try URLEncodedFormEncoder(dateEncoding: .iso8601)
            .encode(["date": Date(timeIntervalSince1970: 0)])
        #expect(date == "date=1970-01-01T00%3A00%3A00Z")
        let snake: String = try URLEncodedFormEncoder(keyEncoding: .convertToSnakeCase).encode(["myURLValue": 1])
        #expect(snake == "my_url_value=1")
        let dots: String = try URLEncodedFormEncoder(keyPathEncoding: .dots).encode(["user": ["name": "kite"]])
        #expect(dots == "user.name=kite")
        let colons = URLEncodedFormEncoder.KeyPathEncoding { subkey in ":\(subkey)" }
        let colonText: String = try URLEncodedFormEncoder(keyPathEncoding: colons).encode(["user": ["name": "kite"]])
        #expect(colonText == "user%3Aname=kite")
        let null: String = try URLEncodedFormEncoder(nilEncoding: .null).encode(["middleName": String?.none])
        #expect(null == "middleName=null")
        let plus: String = try URLEncodedFormEncoder(spaceEncoding: .plusReplaced).encode(["q": "kite flyer"])
        #expect(plus == "q=kite+flyer")
        let brackets = URLEncodedFormEncoder(
            allowedCharacters: URLEncodedFormEncoder.defaultAllowedCharacters.union(CharacterSet(charactersIn: "[]"))
        )
        let bracketText: String = try brackets.encode(["a": [1]])
        #expect(bracketText == "a[]=1")
        let custom: String = try URLEncodedFormEncoder(arrayEncoding: .custom { key, index in "\(key).\(index)" })
            .encode(["a": [1]])
        #expect(custom == "a.0=1")
        _ = URLEncodedFormEncoder(arrayEncoding: .noBrackets, keyEncoding: .convertToSnakeCase)
        _ = URLEncodedFormEncoder.NilEncoding { "none" }
        _ = URLEncodedFormEncoder.KeyPathEncoding { subkey in "/\(subkey)" }
    }

    @Test func parameterEncoderExamples() throws {
        struct Search: Encodable, Sendable {
            let query: String
            let page: Int
        }
        let draft = RequestDraft(url: URL(string: "https://example.com/search")!)
        let encoded = try URLEncodedFormParameterEncoder.default.encode(Search(query: "kite", page: 2), into: draft)
        #expect(encoded.url.absoluteString == "https://example.com/search?page=2&query=kite")

        let login = RequestDraft(method: .post, url: URL(string: "https://example.com/login")!)
        let form = try URLEncodedFormParameterEncoder.default.encode(["user": "kite"], into: login)
        #expect(bodyText(form) == "user=kite")

        struct Login: Encodable, Sendable {
            let email: String
            let password: String
        }
        let json = try JSONParameterEncoder.default.encode(Login(email: "a@example.com", password: "pw"), into: login)
        #expect(bodyText(json) == #"{"email":"a@example.com","password":"pw"}"#)

        let jsonEncoder = JSONEncoder()
        jsonEncoder.keyEncodingStrategy = .convertToSnakeCase
        jsonEncoder.outputFormatting = .sortedKeys
        _ = JSONParameterEncoder(encoder: jsonEncoder)
        _ = JSONParameterEncoder(encoder: JSONParameterEncoder.makeEncoder([.sortedKeys, .withoutEscapingSlashes]))
        _ = URLEncodedFormParameterEncoder(
            encoder: URLEncodedFormEncoder(keyEncoding: .convertToSnakeCase),
            destination: .queryString
        )
    }
}
