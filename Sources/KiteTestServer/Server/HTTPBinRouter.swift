import Hummingbird

/// Builds the router with every httpbin endpoint the test server offers.
enum HTTPBinRouter {
    /// Makes the router; `isSecure` is for a server that serves TLS, and adds `/tls`.
    static func make(isSecure: Bool = false) -> Router<HTTPBinRequestContext> {
        let router = Router(context: HTTPBinRequestContext.self, options: .autoGenerateHeadEndpoints)
        // Middleware applies to the routes added after it, and to unmatched requests.
        if isSecure {
            router.add(middleware: TLSConnectionMiddleware())
        }
        router.add(middleware: HTTPBinMiddleware())
        router.add(middleware: AnythingMiddleware())
        router.addInspectionRoutes()
        router.addStatusRoutes()
        router.addRedirectRoutes()
        router.addAuthRoutes()
        router.addDigestRoutes()
        router.addRetryRoutes()
        router.addCookieRoutes()
        router.addBytesRoutes()
        router.addRangeRoutes()
        router.addStreamRoutes()
        router.addEncodingRoutes()
        router.addFormatRoutes()
        router.addCachingRoutes()
        router.addCacheProbeRoutes()
        router.addUploadRoutes()
        router.addEventStreamRoutes()
        router.addStreamLinesRoutes()
        if isSecure {
            router.addTLSRoutes()
        }
        return router
    }
}

extension Router<HTTPBinRequestContext> {
    typealias Handler = @Sendable (Request, HTTPBinRequestContext) async throws -> Response

    /// The methods httpbin's routes are declared with, other than the automatic OPTIONS.
    static let knownMethods: [HTTPRequest.Method] = [.get, .head, .post, .put, .patch, .delete, .trace]

    /// The methods of httpbin's "any method" endpoints.
    static let anyMethod: [HTTPRequest.Method] = [.get, .post, .put, .delete, .patch, .trace]

    /// Adds `handler` at `path` for `methods`, and a 405 response for the other known methods.
    ///
    /// A GET route also answers HEAD (the router derives it and drops the body).
    func route(_ path: RouterPath, methods: [HTTPRequest.Method] = [.get], use handler: @escaping Handler) {
        for method in methods {
            self.on(path, method: method, use: handler)
        }
        var allowed = Set(methods)
        if allowed.contains(.get) {
            allowed.insert(.head)
        }
        allowed.insert(.options)
        let allowHeader = allowed.map(\.rawValue).sorted().joined(separator: ", ")
        for method in Self.knownMethods where !allowed.contains(method) {
            self.on(path, method: method) { _, _ in
                Response.text("Method Not Allowed", status: .methodNotAllowed, headers: [.allow: allowHeader])
            }
        }
    }
}

extension HTTPBinRequestContext {
    /// A path parameter, percent-decoded.
    func text(_ name: String) throws(HTTPBinError) -> String {
        guard let raw = self.parameters[name[...]] else {
            throw HTTPBinError(.badRequest, "Missing path parameter \(name)")
        }
        return UTF8Text.percentDecode(raw, plusAsSpace: false)
    }

    /// A path parameter that must be a non-negative integer.
    func count(_ name: String) throws(HTTPBinError) -> Int {
        let text = try self.text(name)
        guard let value = Int(text), value >= 0 else {
            throw HTTPBinError(.badRequest, "\(name) must be a non-negative integer, got \(text)")
        }
        return value
    }
}

extension MultiDict {
    /// An optional numeric query option; absent gives `defaultValue`, unparsable gives a 400 error.
    func number<Value: LosslessStringConvertible>(
        _ name: String,
        default defaultValue: Value
    ) throws(HTTPBinError) -> Value {
        guard let text = self.option(name) else { return defaultValue }
        guard let value = Value(text.trimmingSpaces()) else {
            throw HTTPBinError(.badRequest, "Invalid value for \(name): \(text)")
        }
        return value
    }
}
