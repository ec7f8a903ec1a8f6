import Hummingbird

/// Fixed documents in various formats: `/html`, `/json`, `/xml`, `/image/png`, `/robots.txt` and
/// `/deny`.
extension Router<HTTPBinRequestContext> {
    func addFormatRoutes() {
        self.route("/html") { _, _ in
            .text(StaticContent.mobyDickPage)
        }
        self.route("/json") { _, _ in
            .json(StaticContent.slideshowJSON)
        }
        self.route("/xml") { _, _ in
            .text(StaticContent.slideshowXML, contentType: "application/xml")
        }
        self.route("/image/png") { _, _ in
            .bytes(StaticContent.pngImage, contentType: "image/png")
        }
        self.route("/robots.txt") { _, _ in
            .text("User-agent: *\nDisallow: /deny\n", contentType: "text/plain")
        }
        self.route("/deny") { _, _ in
            .text(StaticContent.denyPage, contentType: "text/plain")
        }
    }
}
