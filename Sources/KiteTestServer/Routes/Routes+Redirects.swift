import Hummingbird

/// Redirect endpoints: `/redirect/{n}`, `/relative-redirect/{n}`, `/absolute-redirect/{n}`,
/// `/redirect-to` and the `/links` pages.
extension Router<HTTPBinRequestContext> {
    func addRedirectRoutes() {
        self.route("/redirect/:n") { request, context in
            let count = try Self.redirectCount(context)
            let info = RequestInfo(request: request, context: context)
            let absolute = info.args.option("absolute")?.lowercased() == "true"
            let base = absolute ? Self.externalBase(info) : ""
            if count == 1 {
                return .redirectPage(to: base + "/get")
            }
            let kind = absolute ? "absolute" : "relative"
            return .redirectPage(to: "\(base)/\(kind)-redirect/\(count - 1)")
        }
        self.route("/relative-redirect/:n") { _, context in
            let count = try Self.redirectCount(context)
            let location = count == 1 ? "/get" : "/relative-redirect/\(count - 1)"
            return .empty(status: .found, headers: [.location: location])
        }
        self.route("/absolute-redirect/:n") { request, context in
            let count = try Self.redirectCount(context)
            let base = Self.externalBase(RequestInfo(request: request, context: context))
            return .redirectPage(to: count == 1 ? "\(base)/get" : "\(base)/absolute-redirect/\(count - 1)")
        }
        self.route("/redirect-to", methods: Self.anyMethod) { request, context in
            let info = RequestInfo(request: request, context: context)
            guard let url = info.args.option("url") else {
                throw HTTPBinError(.badRequest, "Missing url parameter")
            }
            var code = 302
            if let requested = info.args.option("status_code") {
                guard let parsed = Int(requested.trimmingSpaces()) else {
                    throw HTTPBinError(.badRequest, "Invalid status_code: \(requested)")
                }
                if (300..<400).contains(parsed) {
                    code = parsed
                }
            }
            var headers: HTTPFields = [:]
            try headers.appendValidated(name: "Location", value: url)
            return .text("", status: HTTPResponse.Status(code: code), headers: headers)
        }
        self.route("/links/:n/:offset") { _, context in
            let count = min(max(1, try context.count("n")), 200)
            let offset = try context.count("offset")
            var html = "<html><head><title>Links</title></head><body>"
            for index in 0..<count {
                if index == offset {
                    html += "\(index) "
                } else {
                    html += "<a href='/links/\(count)/\(index)'>\(index)</a> "
                }
            }
            html += "</body></html>"
            return .text(html)
        }
        self.route("/links/:n") { _, context in
            .redirectPage(to: "/links/\(try context.count("n"))/0")
        }
    }

    /// The `n` of a redirect chain, which must be at least 1.
    private static func redirectCount(_ context: HTTPBinRequestContext) throws(HTTPBinError) -> Int {
        let count = try context.count("n")
        guard count > 0 else { throw HTTPBinError(.badRequest, "n must be at least 1") }
        return count
    }

    /// `http://<Host>`, the base of the absolute URLs Flask's `url_for(_external=True)` builds.
    private static func externalBase(_ info: RequestInfo) -> String {
        "http://\(info.host ?? "localhost")"
    }
}
