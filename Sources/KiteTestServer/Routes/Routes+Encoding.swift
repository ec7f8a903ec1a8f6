import CompressNIO
import Hummingbird

/// Content-encoding endpoints: `/gzip`, `/deflate`, `/encoding/utf8` and `/base64/{value}`.
extension Router<HTTPBinRequestContext> {
    func addEncodingRoutes() {
        self.route("/gzip") { request, context in
            let info = RequestInfo(request: request, context: context)
            let json = info.json(.origin, .headers, adding: ["method": .string(info.method), "gzipped": true])
            // httpbin compresses with gzip level 4.
            let configuration = ZlibConfiguration(compressionLevel: .compressionLevel4)
            return try Self.compressed(json, algorithm: .gzip, configuration: configuration, encoding: "gzip")
        }
        self.route("/deflate") { request, context in
            let info = RequestInfo(request: request, context: context)
            let json = info.json(.origin, .headers, adding: ["method": .string(info.method), "deflated": true])
            // httpbin uses Python's zlib.compressobj(): zlib-wrapped deflate at the default level.
            return try Self.compressed(json, algorithm: .zlib, configuration: .init(), encoding: "deflate")
        }
        self.route("/encoding/utf8") { _, _ in
            .text(StaticContent.utf8Demo)
        }
        self.route("/base64/:value") { _, context in
            let value = try context.text("value")
            guard let bytes = UTF8Text.decodeBase64URL(value), let text = UTF8Text.decode(bytes) else {
                throw HTTPBinError(.badRequest, "Incorrect Base64 data try: SFRUUEJJTiBpcyBhd2Vzb21l")
            }
            return .text(text)
        }
    }

    /// A JSON response compressed with `algorithm` and labelled with `Content-Encoding: encoding`.
    private static func compressed(
        _ json: JSONValue,
        algorithm: ZlibAlgorithm,
        configuration: ZlibConfiguration,
        encoding: String
    ) throws -> Response {
        var plain = json.byteBuffer()
        let compressed = try plain.compress(with: algorithm, configuration: configuration)
        return Response(
            status: .ok,
            headers: [.contentType: "application/json", .contentEncoding: encoding],
            body: ResponseBody(byteBuffer: compressed)
        )
    }
}
