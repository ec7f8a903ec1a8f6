import ArgumentParser
import Foundation
import Kite

/// `kite [METHOD] URL [items...]`: one request, printed as status line, header fields and body.
struct RequestCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "request",
        abstract: "Send one request: kite [METHOD] URL [items...]."
    )

    @Argument(help: "[METHOD] URL [items...]: key=value, key:=json, key==query, Header:value.")
    var words: [String]

    @Flag(name: .shortAndLong, help: "Send data fields as a form instead of JSON.")
    var form = false

    @Option(help: "Total timeout in seconds.")
    var timeout: Double?

    @Flag(help: "Print the request as a curl command first.")
    var curl = false

    @Flag(name: .customLong("check-status"), help: "Exit with 3, 4 or 5 for 3xx, 4xx or 5xx responses.")
    var checkStatus = false

    @Option(
        name: .customLong("cache"),
        help: ArgumentHelp(
            "Keep responses in a disk cache in this directory (RFC 9111); prints where each came from.",
            valueName: "dir"
        )
    )
    var cacheDirectory: String?

    @OptionGroup(title: "TLS")
    var tls: TLSCommandOptions

    func run() async throws {
        let invocation: Invocation
        do {
            invocation = try Invocation(words: self.words, form: self.form, timeout: self.timeout)
        } catch {
            throw ValidationError(error.description)
        }
        let ownSession = !self.tls.isDefault || self.cacheDirectory != nil
        let session: Session
        if let directory = self.cacheDirectory {
            let cache = ResponseCache(
                memoryCapacity: 0,
                diskCapacity: 512 * 1024 * 1024,
                directory: URL(fileURLWithPath: directory, isDirectory: true)
            )
            session = try self.tls.makeSession(cache: cache)
        } else {
            session = self.tls.isDefault ? Session.default : try self.tls.makeSession()
        }
        defer { if ownSession { Task { try? await session.shutdown() } } }
        let request = invocation.makeRequest(on: session)
        if self.curl {
            print(request.cURLDescription())
            print()
        }
        let response = await request.serializingData(emptyResponseCodes: Set(100...599)).response
        if self.cacheDirectory != nil, let metrics = response.metrics {
            FileHandle.standardError.write(Data("kite: cache: \(metrics.cacheStatus)\n".utf8))
        }
        if let head = response.response {
            print(ResponsePrinter.statusLine(head))
            print(ResponsePrinter.headers(head.headerFields))
            print()
            if let data = response.data {
                let body = ResponsePrinter.body(data, contentType: head.headerFields[.contentType])
                if !body.isEmpty { print(body) }
            }
        }
        if let error = response.error {
            FileHandle.standardError.write(Data("kite: \(error)\n".utf8))
            throw ExitCode(1)
        }
        if self.checkStatus, let code = response.response?.status.code, code >= 300 {
            throw ExitCode(Int32(code / 100))
        }
    }
}

/// What the words of `kite [METHOD] URL [items...]` ask for.
struct Invocation {
    let method: HTTPRequest.Method
    let url: String
    let items: RequestItems
    let form: Bool
    let timeout: Duration?

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    init(words: [String], form: Bool = false, timeout: Double? = nil) throws(Failure) {
        var words = words[...]
        var method: HTTPRequest.Method?
        if words.count >= 2, let first = words.first, first.allSatisfy(\.isLetter) {
            guard let parsed = HTTPRequest.Method(first.uppercased()) else {
                throw Failure(description: "\"\(first)\" is not an HTTP method")
            }
            method = parsed
            words = words.dropFirst()
        }
        guard let url = words.first else {
            throw Failure(description: "a URL is required: kite [METHOD] URL [items...]")
        }
        do {
            self.items = try RequestItems(parsing: Array(words.dropFirst()))
        } catch {
            throw Failure(description: error.description)
        }
        if form, let field = self.items.fields.first(where: { $0.1.stringValue == nil }) {
            throw Failure(description: "--form sends text fields only, but \(field.0) is JSON \(field.1)")
        }
        self.method = method ?? (self.items.fields.isEmpty ? .get : .post)
        self.url = Self.urlWithQuery(url.contains("://") ? url : "http://\(url)", query: self.items.query)
        self.form = form
        if let timeout, timeout > 0 {
            self.timeout = .milliseconds(Int64((timeout * 1000).rounded()))
        } else {
            self.timeout = nil
        }
    }

    /// The request on `session`; invalid header items surface as the request's error.
    func makeRequest(on session: Session) -> DataRequest {
        let headerItems = self.items.headers
        let form = self.form
        let timeout = self.timeout
        let modifier: RequestModifier = { draft in
            var named: Set<HTTPField.Name> = []
            for (name, value) in headerItems {
                let field = try HTTPField(validatingName: name, value: value)
                if named.insert(field.name).inserted {
                    draft.headerFields[field.name] = value  // replaces what the encoder set
                } else {
                    draft.headerFields.append(field)  // a repeated item adds a value
                }
            }
            if let timeout { draft.timeout = timeout }
            if !form, draft.body != nil, draft.headerFields[.accept] == nil {
                draft.headerFields[.accept] = "application/json, */*;q=0.5"
            }
        }
        guard let body = self.items.jsonBody else {
            return session.request(self.url, method: self.method, requestModifier: modifier)
        }
        if form {
            let fields = body.compactMapValues(\.stringValue)
            return session.request(
                self.url,
                method: self.method,
                parameters: fields,
                encoder: URLEncodedFormParameterEncoder(destination: .httpBody),
                requestModifier: modifier
            )
        }
        return session.request(
            self.url,
            method: self.method,
            parameters: body,
            encoder: JSONParameterEncoder.default,
            requestModifier: modifier
        )
    }

    private static func urlWithQuery(_ url: String, query: [(String, String)]) -> String {
        guard !query.isEmpty else { return url }
        let encoding = URLEncoding.queryString
        let pairs = query.map { "\(encoding.escape($0.0))=\(encoding.escape($0.1))" }.joined(separator: "&")
        let (base, fragment) = url.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
            .map(String.init).splitFirst()
        let joined = base + (base.contains("?") ? "&" : "?") + pairs
        return fragment.map { joined + "#" + $0 } ?? joined
    }
}

extension Array where Element == String {
    fileprivate func splitFirst() -> (String, String?) {
        (self.first ?? "", self.count > 1 ? self[1] : nil)
    }
}
