import Foundation
import HTTPTypes

@testable import Kite

/// Requests, responses and stored entries for the cache rules' tests, built around one fixed time.
enum CacheFixture {
    /// `Sun, 06 Nov 1994 08:49:37 GMT`, the time most fixtures are at.
    static let t0 = Date(timeIntervalSince1970: 784_111_777)
    /// `t0` as an IMF-fixdate.
    static let t0Text = "Sun, 06 Nov 1994 08:49:37 GMT"
    /// `t0` plus 1 second.
    static let t0Plus1 = "Sun, 06 Nov 1994 08:49:38 GMT"
    /// `t0` plus 100 seconds.
    static let t0Plus100 = "Sun, 06 Nov 1994 08:51:17 GMT"
    /// `t0` less 100 seconds.
    static let t0Minus100 = "Sun, 06 Nov 1994 08:47:57 GMT"
    /// `t0` plus an hour.
    static let t0PlusHour = "Sun, 06 Nov 1994 09:49:37 GMT"
    /// `t0` less an hour.
    static let t0MinusHour = "Sun, 06 Nov 1994 07:49:37 GMT"
    /// `t0` less 100 days.
    static let t0Minus100Days = "Fri, 29 Jul 1994 08:49:37 GMT"

    /// `t0` plus `seconds`.
    static func at(_ seconds: Double) -> Date {
        self.t0.addingTimeInterval(seconds)
    }

    /// Header fields from name-value pairs, in order; repeated names give several lines.
    static func fields(_ pairs: [(String, String)]) -> HTTPFields {
        var fields = HTTPFields()
        for (name, value) in pairs {
            if let name = HTTPField.Name(name) {
                fields.append(HTTPField(name: name, value: value))
            }
        }
        return fields
    }

    /// A response head.
    static func response(_ code: Int = 200, _ pairs: [(String, String)] = []) -> HTTPResponse {
        HTTPResponse(status: .init(code: code), headerFields: self.fields(pairs))
    }

    /// A request for `https://example.com/r`.
    static func request(_ method: HTTPRequest.Method = .get, _ pairs: [(String, String)] = []) -> HTTPRequest {
        HTTPRequest(
            method: method,
            scheme: "https",
            authority: "example.com",
            path: "/r",
            headerFields: self.fields(pairs)
        )
    }

    /// A stored response, requested at `requested` and received at `received` seconds after `t0`.
    static func stored(
        _ code: Int = 200,
        _ pairs: [(String, String)],
        requested: Double = 0,
        received: Double = 0,
        vary: [String: String?] = [:]
    ) -> StoredResponseInfo {
        StoredResponseInfo(
            response: self.response(code, pairs),
            requestTime: self.at(requested),
            responseTime: self.at(received),
            requestMethod: .get,
            varyingRequestFields: vary
        )
    }

    /// The directives of `Cache-Control` field lines, one per argument.
    static func directives(_ lines: String...) -> CacheControl {
        CacheControl(self.fields(lines.map { ("Cache-Control", $0) }))
    }
}
