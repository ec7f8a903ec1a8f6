import Foundation
import HTTPTypes
import HTTPTypesFoundation
import NIOCore

extension BaseRequest {
    /// Send: hands the head and body to the engine, then decides about the answer. A redirect is followed
    /// by Kite's rules (``Redirect``) and the redirect handler; a `401` challenge is answered once when the
    /// request has a credential. Returns the response that is neither, and the request that got it.
    nonisolated(nonsending) func send(
        _ head: HTTPRequest,
        body: TransportRequestBody?,
        run: inout PipelineRun
    ) async throws(KiteError) -> (TransportResponse, HTTPRequest) {
        var hop = Hop(head: head, body: body)
        // The URLs requested so far, to detect cycles; made at the first redirect.
        var visited: Set<String> = []
        if let extensions = run.extensions, let credential = extensions.credential {
            extensions.challenges = ChallengeAnswerer(credential: credential, origin: head)
        }
        while true {
            if case .bytes(let buffer) = hop.body {
                self.countUpload(Int64(buffer.readableBytes), total: Int64(buffer.readableBytes))
            }
            let request = TransportRequest(
                head: self.prepared(hop.head, cookies: run.handlesCookies),
                body: hop.body,
                deadline: run.deadline,
                bodyDelivery: self.sink.bodyDelivery,
                events: self
            )
            let response: TransportResponse
            if let cache = self.context.cache {
                let networkHead: HTTPResponse?
                (response, networkHead) = try await self.exchange(request, through: cache, run: &run)
                // A stored response's cookies were taken when it came from the server.
                if run.handlesCookies, let networkHead { self.storeCookies(of: networkHead, for: hop.head) }
            } else {
                response = try await self.context.transport.send(request)
                if run.handlesCookies { self.storeCookies(of: response.head, for: hop.head) }
            }
            self.context.eventMonitor?.request(self, didReceiveResponse: response.head)
            let code = response.head.status.code
            let challenged = code == 401 && run.extensions?.challenges != nil
            guard challenged || Redirect.statuses.contains(code) else { return (response, hop.head) }
            // The rare paths live in their own function, so the common one keeps a small async frame.
            guard let next = try await self.nextHop(after: response, from: hop, visited: &visited, run: &run) else {
                return (response, hop.head)
            }
            hop = next
        }
    }

    /// `head` as the engine gets it: with the jar's cookies (unless the request sets `Cookie` itself), and tagged
    /// for the connection probe. Synchronous, so the send stage's async frame does not grow.
    @inline(never)
    private func prepared(_ head: HTTPRequest, cookies: Bool) -> HTTPRequest {
        self.taggedForProbe(cookies ? self.withCookies(head) : head)
    }

    /// `head` with a `Cookie` header from the session's jar for its URL, unless it has one or the jar is empty.
    private func withCookies(_ head: HTTPRequest) -> HTTPRequest {
        if let jar = self.context.httpCookieJar, jar.isEmpty { return head }
        guard let jar = self.context.cookieJar, head.headerFields[.cookie] == nil else { return head }
        guard let url = head.url, let cookies = jar.cookieHeader(for: url) else { return head }
        var sent = head
        sent.headerFields[.cookie] = cookies
        return sent
    }

    /// Stores the cookies a response sets (a redirect's too, so they reach the next hop).
    @inline(never)
    private func storeCookies(of response: HTTPResponse, for head: HTTPRequest) {
        guard let jar = self.context.cookieJar else { return }
        let values = response.headerFields[values: .setCookie]
        guard !values.isEmpty, let url = head.url else { return }
        jar.store(setCookieHeaders: values, from: url)
    }

    /// `head` tagged for the probe when the engine collects connection metrics, with a
    /// new record that becomes the request's latest (also when the exchange then fails). The head the request
    /// reports, logs and redirects from stays untagged. (A synchronous step: the async frame stays as small as
    /// without the probe.)
    private func taggedForProbe(_ head: HTTPRequest) -> HTTPRequest {
        guard let probe = self.context.transport.connectionProbe else { return head }
        let record = probe.makeRecord()
        let previous = self.machine.withLockedValue { machine in
            defer { machine.record.connection = record }
            return machine.record.connection
        }
        if let previous { probe.unregister(previous) }
        var tagged = head
        tagged.headerFields[ConnectionProbe.tagField] = record.tag
        return tagged
    }

    /// A request head and body as sent in one exchange.
    struct Hop {
        var head: HTTPRequest
        var body: TransportRequestBody?
    }

    /// What to send after a `401` or a redirect: the challenge answered, or the redirect Kite's rules and the
    /// redirect handler agree on; `nil` when `response` is the result.
    nonisolated(nonsending) private func nextHop(
        after response: TransportResponse,
        from hop: Hop,
        visited: inout Set<String>,
        run: inout PipelineRun
    ) async throws(KiteError) -> Hop? {
        let extensions = run.extensions
        if response.head.status.code == 401, let extensions {
            guard let authorization = try extensions.challenges?.answer(response.head, to: hop.head, body: hop.body)
            else { return nil }
            try self.requireReplayable(
                hop.body,
                response: response.head,
                because: "the server asked for credentials (status 401), which needs the body again"
            )
            await response.body.discard()
            var next = hop
            next.head.headerFields[.authorization] = authorization
            return next
        }
        let maximum = self.context.maximumRedirects
        guard maximum > 0, let redirect = Redirect(following: response.head, to: hop.head) else { return nil }
        try self.check(redirect, from: hop.head, response: response.head)
        var next = redirect.head
        if let handler = extensions?.redirectHandler {
            guard let chosen = await handler.task(self, willBeRedirectedTo: next, for: response.head) else {
                return nil
            }
            next = chosen
            try await self.checkpoint()
        }
        if visited.isEmpty {
            visited.insert(Redirect.url(of: hop.head)?.absoluteString ?? "")
        }
        run.redirectCount += 1
        if run.redirectCount > maximum {
            throw KiteError(
                code: .tooManyRedirects,
                message: "the server redirected more than \(maximum) times",
                response: response.head
            )
        }
        let target = Redirect.url(of: next)?.absoluteString ?? redirect.url.absoluteString
        if !visited.insert(target).inserted {
            throw KiteError(
                code: .tooManyRedirects,
                message: "the server's redirects form a cycle at \(RequestSummary(next).url)",
                response: response.head
            )
        }
        if redirect.keepsBody {
            try self.requireReplayable(
                hop.body,
                response: response.head,
                because: "the server redirected with status \(response.head.status.code), which needs the body again"
            )
        }
        self.context.eventMonitor?.request(self, willFollowRedirectTo: next, for: response.head)
        self.context.telemetry?.redirecting(self, to: next, status: Int(response.head.status.code))
        await response.body.discard()
        return Hop(head: next, body: redirect.keepsBody ? hop.body : nil)
    }

    /// Kite's rules a redirect must pass before the handler sees it.
    private func check(
        _ redirect: Redirect,
        from request: HTTPRequest,
        response: HTTPResponse
    ) throws(KiteError) {
        let head = redirect.head
        if let reason = RequestHeadCheck.problem(scheme: head.scheme, authority: head.authority, path: head.path) {
            throw KiteError(
                code: .invalidURL,
                message: "the server redirected to URL \"\(RequestSummary(head).url)\", which \(reason)",
                response: response
            )
        }
        if request.scheme?.lowercased() == "https", redirect.head.scheme == "http",
            !self.context.allowsInsecureRedirects
        {
            throw KiteError(
                code: .redirectRefused,
                message: "the server redirected from https to \(RequestSummary(redirect.head).url), which is not "
                    + "encrypted; set Configuration.allowsInsecureRedirects to follow such redirects",
                response: response
            )
        }
    }

    private func requireReplayable(
        _ body: TransportRequestBody?,
        response: HTTPResponse,
        because reason: String
    ) throws(KiteError) {
        guard let body, !body.isReplayable else { return }
        throw KiteError(
            code: .bodyNotReplayable,
            message: "\(reason), but the upload stream cannot be sent twice; upload Data or a file to allow that",
            response: response
        )
    }
}

extension BaseRequest: TransportEvents {
    /// The engine sends this attempt once more on a new connection: event monitors and telemetry hear of it.
    func transportWillResend(after error: KiteError) {
        self.context.eventMonitor?.request(self, willResendOnNewConnectionAfter: error)
        self.context.telemetry?.resending(self, after: error)
    }
}
