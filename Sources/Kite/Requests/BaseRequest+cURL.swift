import Foundation
import HTTPTypes

extension BaseRequest {
    /// The request as a `curl` command: as it was sent, or as it will be sent (with the session's
    /// default headers) if it has not been yet.
    ///
    /// `Authorization`, `Proxy-Authorization` and `Cookie` values, and those of the session's
    /// ``Session/Configuration/redactedHeaderNames``, are shown as `***` unless
    /// `includingCredentials` is `true`. Arguments are single-quoted for POSIX shells; a body that is
    /// not UTF-8 text is written with `$'\xHH'` escapes (bash, zsh).
    ///
    /// ```swift
    /// let request = session.request("http://127.0.0.1:8080/post", method: .post, parameters: ["a": "b"],
    ///                               encoding: JSONEncoding.default)
    /// print(request.cURLDescription())
    /// // $ curl -X POST \
    /// //     -H 'Content-Type: application/json' \
    /// //     ...
    /// //     --data-raw '{"a":"b"}' \
    /// //     'http://127.0.0.1:8080/post'
    /// ```
    ///
    /// - Parameter includingCredentials: Whether to show credential header values.
    /// - Returns: The command, or a line saying why the request could not be built.
    public func cURLDescription(includingCredentials: Bool = false) -> String {
        let draft: RequestDraft
        let head: HTTPRequest
        do throws(KiteError) {
            draft = try self.draftResult.get()
            if let sent = self.request {
                head = sent
            } else {
                var built = try draft.makeHTTPRequest()
                built.headerFields = self.context.headerFields(for: built.headerFields)
                head = built
            }
        } catch {
            return "$ curl # the request could not be built: \(error.message)"
        }
        return CURLCommand.render(
            head: head,
            body: draft.body,
            timeout: draft.timeout ?? self.context.totalTimeout,
            hiding: includingCredentials
                ? [] : CURLCommand.credentialFields.union(self.session.configuration.redactedHeaderNames)
        )
    }
}

extension BaseRequest {
    /// Calls `handler` once with ``cURLDescription(includingCredentials:)`` as the request is first sent (after
    /// its adapters), or when an adapter fails; at once if that has happened already. Alamofire's
    /// `cURLDescription(calling:)`; credentials are shown as `***`.
    ///
    /// ```swift
    /// session.request("http://127.0.0.1:8080/get").cURLDescription { print($0) }.responseData { _ in }
    /// ```
    ///
    /// - Parameters:
    ///   - queue: Where `handler` runs; the session's ``Session/callbackQueue`` by default.
    ///   - handler: Receives the command.
    /// - Returns: The request.
    @discardableResult
    public func cURLDescription(
        on queue: DispatchQueue? = nil,
        calling handler: @escaping @Sendable (String) -> Void
    ) -> Self {
        let registered = (queue: queue ?? self.context.callbackQueue, handler: handler)
        let sent = self.machine.withLockedValue { machine -> Bool in
            guard machine.record.sentRequest == nil else { return true }
            machine.record.cURLHandler = registered
            return false
        }
        if sent { self.callCURLHandler(registered) }
        return self
    }

    func callCURLHandler(_ registered: (queue: DispatchQueue, handler: @Sendable (String) -> Void)) {
        registered.queue.async { registered.handler(self.cURLDescription()) }
    }
}

enum CURLCommand {
    static let credentialFields: Set<HTTPField.Name> = [.authorization, .proxyAuthorization, .cookie]

    /// The command for `head` and `body`; the values of `hidden` fields read `placeholder`, and a log's
    /// command (`redactingURL`) hides secret-looking query values too.
    static func render(
        head: HTTPRequest,
        body: Data?,
        timeout: Duration?,
        hiding hidden: Set<HTTPField.Name>,
        placeholder: String = "***",
        redactingURL: Bool = false
    ) -> String {
        var arguments: [String] = []
        switch head.method {
        case .get:
            break
        case .head:
            arguments.append("--head")
        default:
            arguments.append("-X \(head.method.rawValue)")
        }
        if head.headerFields[.acceptEncoding] != nil {
            arguments.append("--compressed")
        }
        if let timeout {
            let seconds = timeout.timeInterval
            arguments.append("--max-time \(seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds))")
        }
        for field in head.headerFields {
            let value = hidden.contains(field.name) ? placeholder : field.value
            arguments.append("-H \(Self.quote("\(field.name.rawName): \(value)"))")
        }
        if let body, !body.isEmpty {
            if let text = String(data: body, encoding: .utf8), !text.unicodeScalars.contains(where: Self.isControl) {
                arguments.append("--data-raw \(Self.quote(text))")
            } else {
                arguments.append("--data-binary \(Self.ansiQuote(body))")
            }
        }
        let url = "\(head.scheme ?? "http")://\(head.authority ?? "")\(head.path ?? "/")"
        arguments.append(Self.quote(redactingURL ? Redaction.url(url) : url))
        return "$ curl " + arguments.joined(separator: " \\\n    ")
    }

    /// Single-quoted for POSIX shells: `it's` becomes `'it'\''s'`.
    static func quote(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// ANSI-C quoted (`$'…'`), every byte outside printable ASCII as `\xHH`.
    static func ansiQuote(_ data: Data) -> String {
        var text = "$'"
        for byte in data {
            switch byte {
            case UInt8(ascii: "'"), UInt8(ascii: "\\"):
                text += "\\" + String(UnicodeScalar(byte))
            case 0x20...0x7E:
                text.unicodeScalars.append(UnicodeScalar(byte))
            default:
                text += "\\x" + String(byte, radix: 16).leftPadded(to: 2)
            }
        }
        return text + "'"
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.generalCategory == .control && scalar != "\n" && scalar != "\t" && scalar != "\r"
    }
}
