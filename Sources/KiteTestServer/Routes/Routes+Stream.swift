import Hummingbird

/// `/stream/{n}`: `n` (at most 100) JSON lines, each sent as its own chunk.
extension Router<HTTPBinRequestContext> {
    func addStreamRoutes() {
        self.route("/stream/:n") { request, context in
            let count = min(try context.count("n"), 100)
            let info = RequestInfo(request: request, context: context)
            let members = info.members([.url, .args, .headers, .origin])
            let body = ResponseBody { writer in
                for index in 0..<count {
                    var line = members
                    line["id"] = .integer(Int64(index))
                    try await writer.write(JSONValue.object(line).byteBuffer(style: .singleLine))
                }
                try await writer.finish(nil)
            }
            return Response(status: .ok, headers: [.contentType: "application/json"], body: body)
        }
    }
}
