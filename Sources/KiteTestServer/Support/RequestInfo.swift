import Hummingbird

/// What httpbin reports about a request apart from its body: `args`, `headers`, `origin`, `url`
/// and `method`.
struct RequestInfo: Sendable {
    /// Headers httpbin hides unless the query has `show_env` (they are added by its hosting).
    private static let environmentHeaders: Set<String> = [
        "x-varnish", "x-request-start", "x-heroku-queue-depth", "x-real-ip", "x-forwarded-proto",
        "x-forwarded-protocol", "x-forwarded-ssl", "x-heroku-queue-wait-time", "x-forwarded-for",
        "x-heroku-dynos-in-use", "x-forwarded-port", "x-request-id", "via", "total-route-time", "connect-time",
    ]

    var method: String
    /// Query parameters.
    var args: MultiDict
    /// Request headers as httpbin names them (`User-Agent`), repeated fields joined with ",".
    var headers: [String: String]
    /// The client address, or the X-Forwarded-For header when present.
    var origin: String
    /// The URL as the client addressed it.
    var url: String
    /// The Host header (the request's authority), if any.
    var host: String?

    init(request: Request, context: HTTPBinRequestContext) {
        self.method = request.method.rawValue
        self.args = MultiDict(urlEncoded: request.uri.query.map { Substring($0) } ?? "")
        self.host = request.head.authority

        var merged: [String: String] = [:]
        var order: [String] = []
        if let host = self.host {
            merged["host"] = host
            order.append("host")
        }
        for field in request.headers {
            let name = field.name.canonicalName
            if let existing = merged[name] {
                merged[name] = existing + "," + field.value
            } else {
                merged[name] = field.value
                order.append(name)
            }
        }
        let showEnvironment = self.args.contains("show_env")
        var headers: [String: String] = [:]
        for name in order where showEnvironment || !Self.environmentHeaders.contains(name) {
            headers[Self.titleCased(name)] = merged[name]
        }
        self.headers = headers

        let remote = context.remoteAddress?.ipAddress ?? "127.0.0.1"
        self.origin = merged["x-forwarded-for"] ?? remote

        let connectionScheme = context.isSecure ? "https" : "http"
        var scheme = merged["x-forwarded-proto"] ?? merged["x-forwarded-protocol"] ?? connectionScheme
        if merged["x-forwarded-proto"] == nil, merged["x-forwarded-protocol"] == nil,
            merged["x-forwarded-ssl"] == "on"
        {
            scheme = "https"
        }
        let target = request.uri.string
        if target.hasPrefix("/") {
            self.url = "\(scheme)://\(self.host ?? "localhost")\(target)"
        } else {
            self.url = target
        }
    }

    /// The value of a header by its case-insensitive name.
    func header(_ name: String) -> String? {
        self.headers[Self.titleCased(name.lowercased())]
    }

    var headersJSON: JSONValue {
        .object(self.headers.mapValues(JSONValue.string))
    }

    /// Title-cases a header name as Python's `str.title()` does for WSGI header names: a letter is
    /// uppercased when it follows a character that is not a letter.
    static func titleCased(_ name: String) -> String {
        var result = ""
        result.reserveCapacity(name.utf8.count)
        var previousIsLetter = false
        for character in name {
            let isLetter = character.isLetter
            result += isLetter && !previousIsLetter ? character.uppercased() : character.lowercased()
            previousIsLetter = isLetter
        }
        return result
    }

    /// The members httpbin's `get_dict` produces for `keys`.
    func json(_ keys: Key..., adding extras: [String: JSONValue] = [:]) -> JSONValue {
        self.json(keys, body: nil, adding: extras)
    }

    /// The members httpbin's `get_dict` produces for `keys`, including body-derived ones.
    func json(_ keys: [Key], body: RequestBodyInfo?, adding extras: [String: JSONValue] = [:]) -> JSONValue {
        .object(self.members(keys, body: body, adding: extras))
    }

    /// The members of ``json(_:body:adding:)`` as a dictionary.
    func members(
        _ keys: [Key],
        body: RequestBodyInfo? = nil,
        adding extras: [String: JSONValue] = [:]
    ) -> [String: JSONValue] {
        var members = extras
        for key in keys {
            switch key {
            case .url: members["url"] = .string(self.url)
            case .args: members["args"] = self.args.json
            case .headers: members["headers"] = self.headersJSON
            case .origin: members["origin"] = .string(self.origin)
            case .method: members["method"] = .string(self.method)
            case .form: members["form"] = body?.form.json ?? [:]
            case .data: members["data"] = .string(body?.data ?? "")
            case .files: members["files"] = body?.files.json ?? [:]
            case .json: members["json"] = body?.json ?? .null
            }
        }
        return members
    }

    /// A member of httpbin's request dictionary.
    enum Key {
        case url
        case args
        case headers
        case origin
        case method
        case form
        case data
        case files
        case json

        /// The members of `/post`, `/put`, `/patch` and `/delete` responses.
        static let bodyEcho: [Key] = [.url, .args, .form, .data, .origin, .headers, .files, .json]
        /// The members of `/anything` responses.
        static let anything: [Key] = Self.bodyEcho + [.method]
    }
}
