import Foundation
import Kite
import Testing

@testable import KiteCLI

@Suite struct RequestItemsTests {
    @Test func eachSeparatorMakesItsKindOfItem() throws {
        let items = try RequestItems(parsing: ["name=kite", "count:=3", "q==swift nio", "X-Trace:abc", "on:=true"])
        #expect(items.fields.map(\.0) == ["name", "count", "on"])
        #expect(items.fields.map(\.1) == [.string("kite"), .int(3), .bool(true)])
        #expect(items.query.map { "\($0.0)=\($0.1)" } == ["q=swift nio"])
        #expect(items.headers.map { "\($0.0):\($0.1)" } == ["X-Trace:abc"])
    }

    @Test(arguments: [
        ("a=b:c", "field a = b:c"),
        ("X-A:b=c", "header X-A = b=c"),
        ("a:=1", "field a = 1"),
        ("a==b=c", "query a = b=c"),
        ("url==http://x/?y=1", "query url = http://x/?y=1"),
        (#"a\=b=c"#, "field a=b = c"),
        (#"a\:b:c"#, "header a:b = c"),
        ("empty=", "field empty = "),
    ])
    func theFirstSeparatorDecidesAndLongerOnesWinTies(item: String, expected: String) throws {
        let items = try RequestItems(parsing: [item])
        let described =
            items.fields.map { "field \($0.0) = \($0.1.stringValue ?? $0.1.description)" }
            + items.headers.map { "header \($0.0) = \($0.1)" } + items.query.map { "query \($0.0) = \($0.1)" }
        #expect(described == [expected])
    }

    @Test(arguments: [
        (
            "nosep",
            #"item "nosep" has none of the separators = := == : (key=value, key:=json, key==query, Header:value)"#
        ),
        ("=x", #"item "=x" has an empty name before "=""#),
        ("n:={", #"item "n:={": { is not valid JSON"#),
    ])
    func badItemsAreRejectedWithTheirText(item: String, message: String) {
        #expect(throws: RequestItems.ParseError(description: message)) {
            try RequestItems(parsing: [item])
        }
    }

    @Test func laterFieldsReplaceEarlierOnes() throws {
        let items = try RequestItems(parsing: ["a=1", "a:=2"])
        #expect(items.jsonBody == ["a": .int(2)])
    }

    @Test func methodDefaultsToGETOrPOSTAndQueryIsAppended() throws {
        let get = try Invocation(words: ["example.com/search", "q==a b", "page==2"])
        #expect(get.method == .get)
        #expect(get.url == "http://example.com/search?q=a%20b&page=2")
        let post = try Invocation(words: ["https://example.com/x?y=1#top", "name=kite", "z==1"])
        #expect(post.method == .post)
        #expect(post.url == "https://example.com/x?y=1&z=1#top")
        let put = try Invocation(words: ["put", "example.com"])
        #expect(put.method == .put)
    }

    @Test func formRejectsNonTextFields() {
        #expect(throws: Invocation.Failure.self) {
            try Invocation(words: ["example.com", "n:=1"], form: true)
        }
    }

    @Test func theBuiltRequestCarriesItemsAsHeadersAndJSON() throws {
        let invocation = try Invocation(words: [
            "POST", "example.com/post", "a=b", "X-One:1", "X-One:2", "Accept:text/plain",
        ])
        let request = invocation.makeRequest(on: .default)
        let draft = try #require(request.draft)
        #expect(draft.method == .post)
        #expect(draft.body == Data(#"{"a":"b"}"#.utf8))
        #expect(draft.headerFields[values: try #require(HTTPField.Name("X-One"))] == ["1", "2"])
        #expect(draft.headerFields[.accept] == "text/plain")
        #expect(draft.headerFields[.contentType] == "application/json")
    }
}
