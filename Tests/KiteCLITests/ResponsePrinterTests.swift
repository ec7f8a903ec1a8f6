import Foundation
import Kite
import Testing

@testable import KiteCLI

@Suite struct ResponsePrinterTests {
    @Test func jsonIsPrettyPrintedWithSortedKeys() {
        let body = ResponsePrinter.body(Data(#"{"b":[1,{}],"a":"x/y","c":[]}"#.utf8), contentType: "application/json")
        #expect(
            body == """
                {
                  "a": "x/y",
                  "b": [
                    1,
                    {}
                  ],
                  "c": []
                }
                """
        )
    }

    @Test func textIsPrintedAndBinaryIsSummarised() {
        #expect(ResponsePrinter.body(Data("héllo\n".utf8), contentType: "text/plain") == "héllo\n")
        #expect(ResponsePrinter.body(Data([0, 1, 2, 255]), contentType: nil) == "[binary data: 4 bytes]")
        #expect(
            ResponsePrinter.body(Data("abcdef".utf8), contentType: "text/plain", limit: 3) == "abc… (3 more characters)"
        )
    }

    @Test func statusLineAndHeaders() {
        let response = HTTPResponse(
            status: .init(code: 418, reasonPhrase: "I'm a teapot"),
            headerFields: [.server: "x"]
        )
        #expect(ResponsePrinter.statusLine(response) == "HTTP 418 I'm a teapot")
        #expect(ResponsePrinter.headers(response.headerFields) == "Server: x")
    }
}
