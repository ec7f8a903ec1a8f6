import Foundation
import HTTPTypes
import Kite
import Testing

/// A `Cookie` header with several cookies reaches the server as one line.
@Suite struct CookieHeaderTests {
    @Test(arguments: Backend.available)
    func severalCookiesGoOutAsOneCookieLine(backend: Backend) async throws {
        // swift-http-types keeps `a=1; b=2` as two Cookie fields (HTTP/2 crumbs). Sent as two HTTP/1.1 lines,
        // servers join them with a comma and read one cookie `a` with the value `1,b=2`.
        var headers = HTTPFields()
        headers[.cookie] = "mine=yes; also=this"
        headers.append(HTTPField(name: .cookie, value: "third=3"))
        let seen = try await Session.suite.request(try await backend.url("/cookies"), headers: headers)
            .validate()
            .serializingJSON()
            .value
        #expect(seen["cookies"] == .object(["mine": .string("yes"), "also": .string("this"), "third": .string("3")]))
        let echoed = try await Session.suite.request(try await backend.url("/headers"), headers: headers)
            .validate()
            .serializingJSON()
            .value
        #expect(echoed["headers"]?["Cookie"] == .string("mine=yes; also=this; third=3"))
    }
}
