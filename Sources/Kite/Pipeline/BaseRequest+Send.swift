import Foundation
import HTTPTypes
import NIOCore

extension BaseRequest {
    /// Send: hands the head and body to the engine, then decides about the answer. A redirect is followed
    /// by Kite's rules (``Redirect``) and the redirect handler; a `401` challenge is answered once when the
    /// request has a credential. Returns the response that is neither, and the request that got it.
    func send(
        _ head: HTTPRequest,
        body: TransportRequestBody?,
        run: inout PipelineRun
    ) async throws(KiteError) -> (TransportResponse, HTTPRequest) {
        let configuration = self.session.configuration
        let maximum = configuration.maximumRedirects
        var current = head
        var currentBody = body
        // The URLs requested so far, to detect cycles; made at the first redirect.
        var visited: Set<String> = []
        var challenges = ChallengeAnswerer(credential: run.credential, origin: head)
        while true {
            let response = try await self.session.transport.send(
                TransportRequest(head: current, body: currentBody, deadline: run.deadline)
            )
            if case .bytes(let buffer) = currentBody {
                self.countUpload(Int64(buffer.readableBytes), total: Int64(buffer.readableBytes))
            }
            if response.head.status.code == 401, challenges.isArmed {
                if let authorization = try challenges.answer(response.head, to: current, body: currentBody) {
                    try self.requireReplayable(
                        currentBody,
                        response: response.head,
                        because: "the server asked for credentials (status 401), which needs the body again"
                    )
                    await Self.discard(response.body)
                    current.headerFields[.authorization] = authorization
                    continue
                }
            }
            guard maximum > 0, let redirect = Redirect(following: response.head, to: current) else {
                return (response, current)
            }
            try self.check(redirect, from: current, response: response.head, configuration: configuration)
            var next = redirect.head
            if let handler = run.redirectHandler {
                guard let chosen = await handler.task(self, willBeRedirectedTo: next, for: response.head) else {
                    return (response, current)
                }
                next = chosen
                try await self.checkpoint()
            }
            if visited.isEmpty {
                visited.insert(Redirect.url(of: head)?.absoluteString ?? "")
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
                    currentBody,
                    response: response.head,
                    because:
                        "the server redirected with status \(response.head.status.code), which needs the body again"
                )
            }
            await Self.discard(response.body)
            current = next
            currentBody = redirect.keepsBody ? currentBody : nil
        }
    }

    /// Kite's rules a redirect must pass before the handler sees it.
    private func check(
        _ redirect: Redirect,
        from request: HTTPRequest,
        response: HTTPResponse,
        configuration: Session.Configuration
    ) throws(KiteError) {
        if request.scheme?.lowercased() == "https", redirect.head.scheme == "http",
            !configuration.allowsInsecureRedirects
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

    /// Reads and drops a redirect's or challenge's body so its connection can be reused; a long one is abandoned.
    private static func discard(_ body: ByteChunks) async {
        var iterator = body.makeAsyncIterator()
        var discarded = 0
        while discarded < 64 * 1024, let chunk = try? await iterator.next() {
            discarded += chunk.readableBytes
        }
    }
}
