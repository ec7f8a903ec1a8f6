import Hummingbird

/// Applies httpbin's cross-cutting behaviour to every response.
///
/// It answers `OPTIONS` requests as a CORS preflight, adds the CORS headers httpbin adds, turns
/// ``HTTPBinError``s into responses so they get those headers too, and drops `Content-Length`
/// from responses that must not have one (1xx, 204, 304).
struct HTTPBinMiddleware: RouterMiddleware {
    typealias Context = HTTPBinRequestContext

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var response: Response
        if request.method == .options {
            response = Self.preflightResponse(for: request)
        } else {
            do {
                response = try await next(request, context)
            } catch let error as HTTPBinError {
                response = try error.response(from: request, context: context)
            }
        }
        response.headers[.accessControlAllowOrigin] = request.headers[.origin] ?? "*"
        response.headers[.accessControlAllowCredentials] = "true"
        let code = response.status.code
        if code < 200 || code == 204 || code == 304 {
            response.headers[.contentLength] = nil
        }
        return response
    }

    private static func preflightResponse(for request: Request) -> Response {
        var headers: HTTPFields = [
            .allow: "GET, HEAD, OPTIONS, POST, PUT, PATCH, DELETE, TRACE",
            .accessControlAllowMethods: "GET, POST, PUT, DELETE, PATCH, OPTIONS",
            .accessControlMaxAge: "3600",
        ]
        if let requested = request.headers[.accessControlRequestHeaders] {
            headers[.accessControlAllowHeaders] = requested
        }
        return .text("", headers: headers)
    }
}
