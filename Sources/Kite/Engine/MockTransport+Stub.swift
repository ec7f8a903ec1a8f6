import Foundation
import HTTPTypes

extension MockTransport {
    /// What a ``MockTransport`` answers to the requests that match: a method, a URL pattern and header
    /// fields to match, how many requests it answers, and its ``Response``.
    ///
    /// A request matches when it has the method (any method when `method` is `nil`), its URL matches
    /// `url`, and it carries every field of `headers` with the same value (names compare without regard
    /// to case; a request may carry more fields). Stubs are tried in the order they were added; a stub
    /// with `times` answers that many requests and is then passed over, so the next matching stub answers.
    ///
    /// ```swift
    /// let unauthorized = MockTransport.Stub(
    ///     .get,
    ///     .prefix("https://api.example.com/"),
    ///     headers: [.authorization: "Bearer expired"],
    ///     response: .status(401)
    /// )
    /// let flaky = MockTransport.Stub(.get, "https://api.example.com/feed", times: 2, response: .status(503))
    /// let feed = MockTransport.Stub(.get, "https://api.example.com/feed", response: .status(200, body: .string("[]")))
    /// let mock = MockTransport([unauthorized, flaky, feed])
    /// ```
    public struct Stub: Sendable, CustomStringConvertible {
        /// The method a request must have; `nil` matches every method.
        public var method: HTTPRequest.Method?

        /// What the request's URL must match.
        public var url: URLPattern

        /// Header fields the request must carry, each with the same value.
        public var headers: HTTPFields

        /// How many requests the stub answers at most; `nil` answers every matching request.
        public var times: Int?

        /// What the stub answers.
        public var response: Response

        /// Creates a stub for requests with `method`.
        ///
        /// ```swift
        /// let stub = MockTransport.Stub(.post, "http://api.test/login", response: .status(204))
        /// ```
        ///
        /// - Parameters:
        ///   - method: The method a request must have; `nil` matches every method.
        ///   - url: What the request's URL must match; a string literal is an exact URL.
        ///   - headers: Header fields the request must carry, each with the same value.
        ///   - times: How many requests the stub answers at most; `nil` answers every matching request.
        ///   - response: What the stub answers.
        public init(
            _ method: HTTPRequest.Method?,
            _ url: URLPattern,
            headers: HTTPFields = [:],
            times: Int? = nil,
            response: Response
        ) {
            self.method = method
            self.url = url
            self.headers = headers
            self.times = times
            self.response = response
        }

        /// Creates a stub for requests with any method.
        ///
        /// ```swift
        /// let stub = MockTransport.Stub(.prefix("http://api.test/"), response: .status(503))
        /// ```
        ///
        /// - Parameters:
        ///   - url: What the request's URL must match; a string literal is an exact URL.
        ///   - headers: Header fields the request must carry, each with the same value.
        ///   - times: How many requests the stub answers at most; `nil` answers every matching request.
        ///   - response: What the stub answers.
        public init(
            _ url: URLPattern,
            headers: HTTPFields = [:],
            times: Int? = nil,
            response: Response
        ) {
            self.init(nil, url, headers: headers, times: times, response: response)
        }

        /// Whether a request with `head`, sent to `url`, matches the stub (used up or not).
        func matches(_ head: HTTPRequest, url: String) -> Bool {
            if let method, method != head.method {
                return false
            }
            for field in self.headers where !head.headerFields[values: field.name].contains(field.value) {
                return false
            }
            return self.url.matches(head, url: url)
        }

        /// What the stub matches and answers, such as
        /// `GET exactly http://api.test/users, with Accept: application/json, at most 2 times → status 200, 7 bytes`.
        public var description: String {
            self.description(uses: nil)
        }

        /// The description, with how many requests the stub answered when it answers a limited number.
        func description(uses: Int?) -> String {
            var text = "\(self.method?.rawValue ?? "any method") \(self.url)"
            if !self.headers.isEmpty {
                text += ", with " + self.headers.map { "\($0.name): \($0.value)" }.joined(separator: ", ")
            }
            if let times {
                text += ", at most \(times) time\(times == 1 ? "" : "s")"
                if let uses {
                    text += " (used \(uses))"
                }
            }
            return text + " → \(self.response)"
        }
    }

    /// What a request's URL must match for a ``Stub`` to answer it.
    ///
    /// The URL is the one sent: `scheme://authority/path?query`, after adapters and redirects, without
    /// user, password or fragment. A string literal is an ``exact(_:)`` URL.
    ///
    /// ```swift
    /// let patterns: [MockTransport.URLPattern] = [
    ///     "https://api.example.com/users",  // exactly this URL, no query
    ///     .prefix("https://api.example.com/users?"),  // this path with any query
    ///     .regex(#"https://api\.example\.com/users/\d+"#),  // the whole URL matches the pattern
    ///     .matching { $0.path?.hasSuffix(".json") == true },  // your own check of the request head
    ///     .any,
    /// ]
    /// ```
    public struct URLPattern: Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
        private enum Kind: Sendable {
            case exact(String)
            case prefix(String)
            /// The pattern, and why it does not compile when it does not.
            case regex(String, problem: String?)
            case matching(@Sendable (HTTPRequest) -> Bool)
            case any
        }

        private let kind: Kind

        private init(_ kind: Kind) {
            self.kind = kind
        }

        /// Matches exactly this URL. A URL without a path matches the request for `/`
        /// (`http://api.test` is `http://api.test/`); a query must be given to match a request with one.
        ///
        /// ```swift
        /// mock.stub(.get, .exact("http://api.test/users?page=2"), response: .status(200))
        /// ```
        ///
        /// - Parameter url: The URL.
        /// - Returns: The pattern.
        public static func exact(_ url: String) -> URLPattern {
            URLPattern(.exact(Self.withRootPath(url)))
        }

        /// Matches URLs that start with `prefix`, such as every path of a host.
        ///
        /// ```swift
        /// mock.stub(.get, .prefix("http://api.test/v2/"), response: .status(410))
        /// ```
        ///
        /// - Parameter prefix: The beginning of the URL.
        /// - Returns: The pattern.
        public static func prefix(_ prefix: String) -> URLPattern {
            URLPattern(.prefix(prefix))
        }

        /// Matches URLs that the regular expression matches as a whole (anchors are implied).
        ///
        /// The pattern is a Swift `Regex` (the syntax of Perl, ICU and `NSRegularExpression`), chosen over
        /// `NSRegularExpression` because it is part of the standard library and behaves the same on Linux and
        /// Apple platforms, without Foundation's `NSString` bridging. A pattern that does not compile never
        /// matches, and the stub's description (listed when a request is not matched) says why.
        ///
        /// ```swift
        /// mock.stub(.get, .regex(#"http://api\.test/users/\d+"#), response: .status(200, body: .string("{}")))
        /// ```
        ///
        /// - Parameter pattern: The regular expression.
        /// - Returns: The pattern.
        public static func regex(_ pattern: String) -> URLPattern {
            do {
                _ = try Regex(pattern)
                return URLPattern(.regex(pattern, problem: nil))
            } catch {
                return URLPattern(.regex(pattern, problem: "\(error)"))
            }
        }

        /// Matches requests whose head `predicate` accepts: any check of the method, URL parts or header fields.
        ///
        /// ```swift
        /// mock.stub(
        ///     .matching { $0.authority == "cdn.test" && $0.path?.hasSuffix(".png") == true },
        ///     response: .status(404)
        /// )
        /// ```
        ///
        /// - Parameter predicate: Returns whether the request head matches; called for each request tried.
        /// - Returns: The pattern.
        public static func matching(_ predicate: @escaping @Sendable (HTTPRequest) -> Bool) -> URLPattern {
            URLPattern(.matching(predicate))
        }

        /// Matches every URL, as a last stub that answers whatever the ones before it do not.
        ///
        /// ```swift
        /// mock.stub(.any, response: .status(404))
        /// ```
        public static var any: URLPattern { URLPattern(.any) }

        /// Matches exactly the URL `value`, as ``exact(_:)`` does.
        ///
        /// - Parameter value: The URL.
        public init(stringLiteral value: String) {
            self = .exact(value)
        }

        func matches(_ head: HTTPRequest, url: String) -> Bool {
            switch self.kind {
            case .exact(let expected):
                return url == expected
            case .prefix(let prefix):
                return url.hasPrefix(prefix)
            case .regex(let pattern, let problem):
                guard problem == nil, let regex = try? Regex(pattern) else { return false }
                return (try? regex.wholeMatch(in: url)) != nil
            case .matching(let predicate):
                return predicate(head)
            case .any:
                return true
            }
        }

        /// How the pattern matches: `exactly http://…`, `with prefix http://…`, `matching regex …`,
        /// `matching a closure`, `any URL`.
        public var description: String {
            switch self.kind {
            case .exact(let url): "exactly \(url)"
            case .prefix(let prefix): "with prefix \(prefix)"
            case .regex(let pattern, nil): "matching regex \(pattern)"
            case .regex(let pattern, let problem?): "matching regex \(pattern) (which does not compile: \(problem))"
            case .matching: "matching a closure"
            case .any: "any URL"
            }
        }

        /// `url` with the path `/` when it has an authority and no path, as requests are sent.
        private static func withRootPath(_ url: String) -> String {
            guard let schemeEnd = url.range(of: "://"), schemeEnd.upperBound < url.endIndex else { return url }
            let rest = url[schemeEnd.upperBound...]
            guard let end = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) else { return url + "/" }
            guard url[end] != "/" else { return url }
            return String(url[..<end]) + "/" + String(url[end...])
        }
    }
}
