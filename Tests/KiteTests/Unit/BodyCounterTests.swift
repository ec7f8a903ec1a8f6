import HTTPTypes
import Testing

@testable import Kite

/// The body size a response head announces, which progress totals and the truncation check use.
@Suite struct BodyCounterTests {
    private func length(
        _ fields: [(HTTPField.Name, String)],
        status: Int = 200,
        method: HTTPRequest.Method = .get
    )
        -> Int64?
    {
        var headerFields = HTTPFields()
        for (name, value) in fields { headerFields.append(HTTPField(name: name, value: value)) }
        let response = HTTPResponse(status: .init(code: status), headerFields: headerFields)
        return BodyCounter.expectedLength(of: response, method: method)
    }

    @Test func contentLengthIsTheTotal() {
        #expect(length([(.contentType, "text/plain"), (.contentLength, "128")]) == 128)
        #expect(length([(.contentLength, " 42 ")]) == 42, "surrounding whitespace is tolerated")
        #expect(length([(.contentEncoding, "identity"), (.contentLength, "7")]) == 7)
        #expect(length([(.contentEncoding, "IDENTITY"), (.contentLength, "7")]) == 7)
    }

    @Test func noUsableContentLengthGivesNoTotal() {
        #expect(length([(.contentType, "text/plain")]) == nil)
        #expect(length([(.contentLength, "twelve")]) == nil)
        #expect(length([(.contentLength, "12"), (.contentLength, "12")]) == nil, "two fields are not trusted")
        #expect(length([(.contentLength, "12"), (.contentEncoding, "gzip")]) == nil, "the engine decodes gzip")
        #expect(length([(.contentEncoding, "gzip"), (.contentLength, "12")]) == nil)
    }

    @Test func bodilessResponsesAreEmpty() {
        #expect(length([(.contentLength, "99")], method: .head) == 0)
        #expect(length([(.contentLength, "99")], status: 204) == 0)
        #expect(length([(.contentLength, "99")], status: 304) == 0)
    }
}
