import Hummingbird

/// Fixed documents in various formats: `/html`, `/json`, `/xml`, `/image/png`, `/robots.txt` and
/// `/deny`; and `/records/{n}`, a generated JSON array of `n` records (not in httpbin).
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
        self.route("/records/:n") { _, context in
            let count = min(try context.count("n"), Self.maximumRecords)
            return Response(
                status: .ok,
                headers: [.contentType: "application/json"],
                body: ResponseBody(byteBuffer: Self.records(count))
            )
        }
    }

    /// The most records `/records/{n}` produces (about 12 MB).
    static let maximumRecords = 100_000

    /// A JSON array of `count` records, the same for the same count:
    /// `{"id":0,"name":"record 0","email":"user0@example.com","active":true,"score":0.5,"tags":["alpha","beta"]}`.
    static func records(_ count: Int) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.reserveCapacity(count * 112 + 2)
        buffer.writeStaticString("[")
        for index in 0..<count {
            if index > 0 {
                buffer.writeStaticString(",")
            }
            buffer.writeString(
                #"{"id":\#(index),"name":"record \#(index)","email":"user\#(index)@example.com","#
                    + #""active":\#(index % 2 == 0),"score":\#(Double(index) + 0.5),"tags":["alpha","beta"]}"#
            )
        }
        buffer.writeStaticString("]")
        return buffer
    }
}
