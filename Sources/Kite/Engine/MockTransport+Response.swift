import Foundation
import HTTPTypes
import NIOCore

extension MockTransport {
    /// What a ``Stub`` answers: a response (status, header fields, ``Body``), an error, or a closure that
    /// decides per request; optionally after a delay.
    ///
    /// ```swift
    /// let ok = MockTransport.Response.status(200, headers: [.eTag: "\"v1\""], body: .json(["ok": true]))
    /// let moved = MockTransport.Response.status(301, headers: [.location: "https://api.example.com/v2/users"])
    /// let refused = MockTransport.Response.error(
    ///     KiteError(code: .connectionFailed, message: "could not connect to api.example.com:443: connection refused")
    /// )
    /// let echo = MockTransport.Response.respond { request in
    ///     .status(200, body: .data(request.body ?? Data()))
    /// }
    /// let slow = ok.delayed(by: .seconds(2))
    /// ```
    public struct Response: Sendable, CustomStringConvertible {
        enum Kind: Sendable {
            case status(Int, HTTPFields, Body)
            case error(KiteError)
            case respond(@Sendable (Request) async throws -> Response)
        }

        let kind: Kind

        /// How long the answer waits before it is given.
        let delay: Duration

        private init(_ kind: Kind, delay: Duration = .zero) {
            self.kind = kind
            self.delay = delay
        }

        /// A response with a status code, header fields and a body.
        ///
        /// `Content-Length` is added for bodies of known size and `Content-Type` for ``Body/json(_:encoder:)``
        /// and ``Body/string(_:)`` bodies, unless `headers` sets them. As from a server, a response to `HEAD`,
        /// a `1xx`, `204` or `304` response carries no body bytes. A status outside `100...999` fails the request
        /// with `invalidResponse`.
        ///
        /// ```swift
        /// mock.stub(.get, "http://api.test/old", response: .status(302, headers: [.location: "/new"]))
        /// mock.stub(.get, "http://api.test/new", response: .status(200, body: .string("moved here")))
        /// ```
        ///
        /// - Parameters:
        ///   - code: The status code, such as `200`.
        ///   - headers: The response's header fields.
        ///   - body: The response body; empty by default.
        /// - Returns: The response.
        public static func status(_ code: Int, headers: HTTPFields = [:], body: Body = .empty) -> Response {
            Response(.status(code, headers, body))
        }

        /// Fails the request with `error`, as the engine reports a failed exchange: use the codes it uses, such
        /// as `connectionFailed` (refused, unreachable, unknown host), `connectionLost` or `tlsFailed`.
        ///
        /// ```swift
        /// let refused = KiteError(code: .connectionFailed, message: "could not connect to api.test:80: refused")
        /// mock.stub(.any, response: .error(refused))
        /// ```
        ///
        /// - Parameter error: The error the request fails with (its request is filled in by the session).
        /// - Returns: The response.
        public static func error(_ error: KiteError) -> Response {
            Response(.error(error))
        }

        /// Answers with what `handler` returns for each request: its head and body bytes are the
        /// handler's to inspect. An error it throws fails the request: a ``KiteError`` as it is, another one as
        /// `connectionLost` with that error as the underlying one.
        ///
        /// ```swift
        /// mock.stub(.post, "http://api.test/echo", response: .respond { request in
        ///     guard request.headerFields[.contentType] == "application/json" else { return .status(415) }
        ///     return .status(200, headers: [.contentType: "application/json"], body: .data(request.body ?? Data()))
        /// })
        /// ```
        ///
        /// - Parameter handler: Makes the response; runs in the requesting task, so it is cancelled with it.
        /// - Returns: The response.
        public static func respond(_ handler: @escaping @Sendable (Request) async throws -> Response) -> Response {
            Response(.respond(handler))
        }

        /// The same answer, given after `delay`: a slow server. The request's total timeout and cancellation
        /// end the wait, with the errors the real engine gives (`timedOut` with ``KiteError/TimeoutKind/total``,
        /// `cancelled`).
        ///
        /// ```swift
        /// mock.stub(.get, "http://api.test/slow", response: .status(200).delayed(by: .seconds(5)))
        /// ```
        ///
        /// - Parameter delay: How long to wait before answering; delays add up.
        /// - Returns: The delayed response.
        public func delayed(by delay: Duration) -> Response {
            Response(self.kind, delay: self.delay + delay)
        }

        /// What the answer is: `status 200, 12 bytes`, `error connectionFailed: …`, `a closure`, with
        /// `after 2 s` for a delayed one.
        public var description: String {
            let text =
                switch self.kind {
                case .status(let code, _, let body): body.isEmpty ? "status \(code)" : "status \(code), \(body)"
                case .error(let error): "error \(error.code): \(error.message)"
                case .respond: "a closure"
                }
            return self.delay > .zero ? "\(text), after \(self.delay.kiteDescription)" : text
        }

        /// The transport's answer to `request`: waits out the delays and asks the closures.
        func answer(
            _ request: Request,
            deadline: NIODeadline?
        ) async throws(KiteError) -> TransportResponse {
            var response = self
            while true {
                if response.delay > .zero {
                    try await MockTransport.pause(response.delay, deadline: deadline)
                }
                switch response.kind {
                case .status(let code, let headers, let body):
                    return try body.transportResponse(
                        status: code,
                        headers: headers,
                        method: request.method,
                        deadline: deadline
                    )
                case .error(let error):
                    throw error
                case .respond(let handler):
                    do {
                        response = try await handler(request)
                    } catch let error as KiteError {
                        throw error
                    } catch is CancellationError {
                        throw MockTransport.cancelled
                    } catch {
                        throw KiteError(
                            code: .connectionLost,
                            message: "the stub's handler threw \(error)",
                            underlyingError: error
                        )
                    }
                }
            }
        }
    }
}
