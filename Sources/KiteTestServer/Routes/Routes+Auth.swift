import Hummingbird

/// Authentication endpoints: `/basic-auth/{user}/{passwd}`, `/hidden-basic-auth/{user}/{passwd}`
/// and `/bearer`.
extension Router<HTTPBinRequestContext> {
    func addAuthRoutes() {
        self.route("/basic-auth/:user/:passwd") { request, context in
            let user = try context.text("user")
            guard try Self.isAuthorized(request, user: user, password: context.text("passwd")) else {
                return StatusResponses.response(for: 401)
            }
            return .json(["authenticated": true, "user": .string(user)])
        }
        self.route("/hidden-basic-auth/:user/:passwd") { request, context in
            let user = try context.text("user")
            guard try Self.isAuthorized(request, user: user, password: context.text("passwd")) else {
                return StatusResponses.response(for: 404)
            }
            return .json(["authenticated": true, "user": .string(user)])
        }
        self.route("/bearer") { request, _ in
            let prefix = "Bearer "
            guard let authorization = request.headers[.authorization], authorization.hasPrefix(prefix) else {
                return .text("", status: .unauthorized, headers: [.wwwAuthenticate: "Bearer"])
            }
            let token = String(authorization.dropFirst(prefix.count))
            return .json(["authenticated": true, "token": .string(token)])
        }
    }

    /// Whether the request's Basic credentials are `user` and `password`.
    static func isAuthorized(_ request: Request, user: String, password: String) -> Bool {
        guard let credentials = Self.basicCredentials(request) else { return false }
        return credentials.user == user && credentials.password == password
    }

    /// The user name and password of a `Basic` Authorization header, if there is a valid one.
    static func basicCredentials(_ request: Request) -> (user: String, password: String)? {
        guard let authorization = request.headers[.authorization] else { return nil }
        let parts = authorization.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "basic",
            let decoded = UTF8Text.decodeBase64URL(parts[1].trimmingSpaces()),
            let text = UTF8Text.decode(decoded),
            let colon = text.firstIndex(of: ":")
        else { return nil }
        return (String(text[..<colon]), String(text[text.index(after: colon)...]))
    }
}
