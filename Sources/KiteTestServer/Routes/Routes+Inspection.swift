import Foundation
import Hummingbird

/// Request inspection and echo endpoints: `/get`, `/post`, `/put`, `/patch`, `/delete`, `/headers`,
/// `/ip`, `/user-agent`, `/uuid` and `/delay/{seconds}`.
extension Router<HTTPBinRequestContext> {
    func addInspectionRoutes() {
        self.route("/get") { request, context in
            .json(RequestInfo(request: request, context: context).json(.url, .args, .headers, .origin))
        }
        let echoMethods: [(RouterPath, HTTPRequest.Method)] = [
            ("/post", .post), ("/put", .put), ("/patch", .patch), ("/delete", .delete),
        ]
        for (path, method) in echoMethods {
            self.route(path, methods: [method]) { request, context in
                try await Self.echo(request, context: context, keys: RequestInfo.Key.bodyEcho)
            }
        }
        self.route("/headers") { request, context in
            .json(RequestInfo(request: request, context: context).json(.headers))
        }
        self.route("/ip") { request, context in
            .json(RequestInfo(request: request, context: context).json(.origin))
        }
        self.route("/user-agent") { request, context in
            let agent = RequestInfo(request: request, context: context).header("User-Agent")
            return .json(["user-agent": agent.map(JSONValue.string) ?? .null])
        }
        self.route("/uuid") { _, _ in
            .json(["uuid": .string(UUID().uuidString.lowercased())])
        }
        self.route("/delay/:seconds", methods: Self.anyMethod) { request, context in
            let text = try context.text("seconds")
            guard let seconds = Double(text), seconds.isFinite, seconds >= 0 else {
                throw HTTPBinError(.badRequest, "Invalid delay: \(text)")
            }
            try await Task.sleep(for: .seconds(min(seconds, 10)))
            return try await Self.echo(
                request,
                context: context,
                keys: [.url, .args, .form, .data, .origin, .headers, .files]
            )
        }
    }

    /// Answers with the request dictionary for `keys`, reading the body first.
    static func echo(
        _ request: Request,
        context: HTTPBinRequestContext,
        keys: [RequestInfo.Key]
    ) async throws -> Response {
        let info = RequestInfo(request: request, context: context)
        let body = try await RequestBodyInfo.read(from: request, context: context)
        return .json(info.json(keys, body: body))
    }
}

/// Serves `/anything` and `/anything/{path}` for every method, including non-standard ones.
///
/// It is a middleware rather than routes because a router can only match the methods it knows.
struct AnythingMiddleware: RouterMiddleware {
    typealias Context = HTTPBinRequestContext

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let path = request.uri.path
        guard path == "/anything" || path.hasPrefix("/anything/") else {
            return try await next(request, context)
        }
        let response = try await Router.echo(request, context: context, keys: RequestInfo.Key.anything)
        return request.method == .head ? response.createHeadResponse() : response
    }
}
