import Hummingbird

/// Marks every request as having come over TLS, so echoed URLs say `https`.
///
/// Hummingbird decodes HTTP/1.1 requests as `http` even over TLS, so a server that serves TLS adds
/// this middleware in front of the others.
struct TLSConnectionMiddleware: RouterMiddleware {
    typealias Context = HTTPBinRequestContext

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var context = context
        context.isSecure = true
        return try await next(request, context)
    }
}
