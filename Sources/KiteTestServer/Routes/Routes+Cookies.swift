import Hummingbird

/// Cookie endpoints: `/cookies`, `/cookies/set`, `/cookies/set/{name}/{value}` and `/cookies/delete`.
extension Router<HTTPBinRequestContext> {
    /// Cookies httpbin hides unless the query has `show_env` (analytics cookies of its hosting).
    private static let environmentCookies: Set<String> = [
        "_gauges_unique", "_gauges_unique_year", "_gauges_unique_month", "_gauges_unique_day",
        "_gauges_unique_hour", "__utmz", "__utma", "__utmb",
    ]

    func addCookieRoutes() {
        self.route("/cookies") { request, context in
            let showEnvironment = RequestInfo(request: request, context: context).args.contains("show_env")
            var cookies: [String: JSONValue] = [:]
            for (name, value) in Self.requestCookies(request)
            where showEnvironment || !Self.environmentCookies.contains(name) {
                cookies[name] = .string(value)
            }
            return .json(["cookies": .object(cookies)])
        }
        self.route("/cookies/set") { request, context in
            let info = RequestInfo(request: request, context: context)
            var response = Response.redirectPage(to: "/cookies")
            for (name, value) in info.args.firstValues {
                try response.headers.appendValidated(name: "Set-Cookie", value: Cookies.setCookie(name, value))
            }
            return response
        }
        self.route("/cookies/set/:name/:value") { _, context in
            var response = Response.redirectPage(to: "/cookies")
            let cookie = Cookies.setCookie(try context.text("name"), try context.text("value"))
            try response.headers.appendValidated(name: "Set-Cookie", value: cookie)
            return response
        }
        self.route("/cookies/delete") { request, context in
            let info = RequestInfo(request: request, context: context)
            var response = Response.redirectPage(to: "/cookies")
            for (name, _) in info.args.firstValues {
                let cookie = "\(name)=; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=0; Path=/"
                try response.headers.appendValidated(name: "Set-Cookie", value: cookie)
            }
            return response
        }
    }

    /// The name/value pairs of the request's Cookie headers, in order.
    static func requestCookies(_ request: Request) -> [(String, String)] {
        request.headers[values: .cookie].flatMap { header in
            header.split(separator: ";").compactMap { pair -> (String, String)? in
                guard let equals = pair.firstIndex(of: "=") else { return nil }
                let name = pair[..<equals].trimmingSpaces()
                guard !name.isEmpty else { return nil }
                return (name, Cookies.unquote(pair[pair.index(after: equals)...].trimmingSpaces()))
            }
        }
    }
}

/// Cookie value quoting as Werkzeug does it.
enum Cookies {
    /// Bytes Werkzeug leaves unquoted in a cookie value.
    private static let plainBytes = Set(
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_!#$%&'()*+-./:<=>?@[]^`{|}~".utf8
    )

    /// A `Set-Cookie` value for `name=value` with `Path=/`.
    static func setCookie(_ name: String, _ value: String) -> String {
        "\(name)=\(Self.quote(value)); Path=/"
    }

    /// The value as is when it only has plain characters, otherwise double-quoted with backslash
    /// and octal escapes.
    static func quote(_ value: String) -> String {
        guard !value.utf8.allSatisfy(Self.plainBytes.contains) else { return value }
        var quoted = "\""
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                quoted += "\\" + String(UnicodeScalar(byte))
            case UInt8(ascii: ","), UInt8(ascii: ";"), 0..<0x20, 0x7F...:
                let octal = String(byte, radix: 8)
                quoted += "\\" + String(repeating: "0", count: 3 - octal.count) + octal
            default:
                quoted += String(UnicodeScalar(byte))
            }
        }
        return quoted + "\""
    }

    /// Removes the double quotes (and backslash escapes) around a cookie value, if any.
    static func unquote(_ value: String) -> String {
        guard value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") else { return value }
        var bytes: [UInt8] = []
        let inner = Array(value.utf8.dropFirst().dropLast())
        var index = 0
        while index < inner.count {
            if inner[index] == UInt8(ascii: "\\"), index + 1 < inner.count {
                let digits = inner[(index + 1)...].prefix(3)
                if digits.count == 3, digits.allSatisfy({ (0x30...0x37).contains($0) }),
                    let byte = UInt8(String(decoding: digits, as: UTF8.self), radix: 8)
                {
                    bytes.append(byte)
                    index += 4
                } else {
                    bytes.append(inner[index + 1])
                    index += 2
                }
            } else {
                bytes.append(inner[index])
                index += 1
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
