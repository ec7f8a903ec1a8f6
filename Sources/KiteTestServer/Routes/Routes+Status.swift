import HTTPTypes
import Hummingbird

/// `/status/{codes}`: answers with the given status code, or one picked from a weighted list.
extension Router<HTTPBinRequestContext> {
    func addStatusRoutes() {
        self.route("/status/:codes", methods: Self.anyMethod) { _, context in
            let codes = try context.text("codes")
            return StatusResponses.response(for: try StatusResponses.pick(from: codes))
        }
    }
}

/// The responses httpbin gives for bare status codes, including its special cases.
enum StatusResponses {
    /// Where httpbin's redirect statuses point.
    static let redirectLocation = "/redirect/1"

    static let teapot = #"""

            -=[ teapot ]=-

               _...._
             .'  _ _ `.
            | ."` ^ `". _,
            \_;`"---"`|//
              |       ;/
              \_     _/
                `"""`

        """#

    /// Parses `codes` (`"418"` or a weighted list like `"200:3,500:1"`) and picks one.
    ///
    /// - Throws: ``HTTPBinError`` (400) when a code or weight is invalid.
    static func pick(from codes: String) throws(HTTPBinError) -> Int {
        guard codes.contains(",") else {
            return try Self.validated(codes)
        }
        var choices: [(code: Int, weight: Double)] = []
        for choice in codes.split(separator: ",", omittingEmptySubsequences: false) {
            let parts = choice.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            let code = try Self.validated(String(parts[0]))
            var weight = 1.0
            if parts.count == 2 {
                guard let parsed = Double(parts[1]), parsed.isFinite, parsed >= 0 else {
                    throw HTTPBinError(.badRequest, "Invalid status code")
                }
                weight = parsed
            }
            choices.append((code, weight))
        }
        let total = choices.reduce(0) { $0 + $1.weight }
        guard total > 0 else { throw HTTPBinError(.badRequest, "Invalid status code") }
        var remaining = Double.random(in: 0..<total)
        for choice in choices {
            if remaining < choice.weight {
                return choice.code
            }
            remaining -= choice.weight
        }
        return choices[choices.count - 1].code
    }

    /// A status code the server can send as a final response (200 through 599).
    static func validated(_ text: String) throws(HTTPBinError) -> Int {
        guard let code = Int(text.trimmingSpaces()), (200...599).contains(code) else {
            throw HTTPBinError(.badRequest, "Invalid status code")
        }
        return code
    }

    /// The response for `code`, with httpbin's extra headers and bodies for some codes.
    ///
    /// `code` must be in 200...599 (see ``validated(_:)``).
    static func response(for code: Int) -> Response {
        let status = HTTPResponse.Status(code: code)
        switch code {
        case 301, 302, 303, 305, 307, 308:
            return .empty(status: status, headers: [.location: Self.redirectLocation])
        case 401:
            return .empty(status: status, headers: [.wwwAuthenticate: #"Basic realm="Fake Realm""#])
        case 402:
            return .text(
                "Payment required",
                status: status,
                headers: [.xMoreInfo: "http://vimeo.com/22053820"]
            )
        case 406:
            let body: JSONValue = [
                "message": "Client did not request a supported media type.",
                "accept": ["image/webp", "image/svg+xml", "image/jpeg", "image/png", "image/*"],
            ]
            return .json(body, status: status)
        case 407:
            return .empty(status: status, headers: [.proxyAuthenticate: #"Basic realm="Fake Realm""#])
        case 418:
            return .text(
                Self.teapot,
                status: status,
                headers: [.xMoreInfo: "http://tools.ietf.org/html/rfc2324"]
            )
        default:
            return .empty(status: status)
        }
    }
}

extension HTTPField.Name {
    /// httpbin's `X-More-Info` header, sent with 402 and 418.
    static let xMoreInfo = HTTPField.Name("X-More-Info")!
}
