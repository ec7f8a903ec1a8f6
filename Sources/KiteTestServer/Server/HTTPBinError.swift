import HTTPTypes
import Hummingbird

/// An error that becomes a short plain-text response, used for bad input (status 400 and friends).
struct HTTPBinError: HTTPResponseError {
    let status: HTTPResponse.Status
    let message: String
    var headers: HTTPFields = [:]

    init(_ status: HTTPResponse.Status, _ message: String, headers: HTTPFields = [:]) {
        self.status = status
        self.message = message
        self.headers = headers
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        var response = Response.text(self.message, status: self.status, contentType: "text/plain; charset=utf-8")
        response.headers.append(contentsOf: self.headers)
        return response
    }
}

extension Response {
    /// A JSON response serialized the way httpbin's `jsonify` does (pretty, sorted, newline-terminated).
    static func json(_ value: JSONValue, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        var fields = headers
        fields[.contentType] = "application/json"
        return Response(status: status, headers: fields, body: ResponseBody(byteBuffer: value.byteBuffer()))
    }

    /// A text response; Flask's default content type for text is HTML.
    static func text(
        _ text: String,
        status: HTTPResponse.Status = .ok,
        contentType: String = "text/html; charset=utf-8",
        headers: HTTPFields = [:]
    ) -> Response {
        var fields = headers
        fields[.contentType] = contentType
        return Response(status: status, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    /// A response of raw bytes.
    static func bytes(
        _ bytes: some Sequence<UInt8>,
        status: HTTPResponse.Status = .ok,
        contentType: String,
        headers: HTTPFields = [:]
    ) -> Response {
        var fields = headers
        fields[.contentType] = contentType
        return Response(status: status, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// A response without a body.
    static func empty(status: HTTPResponse.Status, headers: HTTPFields = [:]) -> Response {
        Response(status: status, headers: headers, body: ResponseBody())
    }

    /// The redirect Flask's `redirect()` produces: a small HTML page pointing at `location`.
    static func redirectPage(to location: String, status: HTTPResponse.Status = .found) -> Response {
        let escaped = UTF8Text.htmlEscape(location)
        let page = """
            <!doctype html>
            <html lang=en>
            <title>Redirecting...</title>
            <h1>Redirecting...</h1>
            <p>You should be redirected automatically to the target URL: <a href="\(escaped)">\(escaped)</a>. \
            If not, click the link.

            """
        return .text(page, status: status, headers: [.location: location])
    }
}

extension HTTPFields {
    /// Appends a field after checking that its name and value are valid HTTP.
    ///
    /// - Throws: ``HTTPBinError`` with status 400 when they are not (for example a value with CR or LF).
    mutating func appendValidated(name: String, value: String) throws(HTTPBinError) {
        guard let fieldName = HTTPField.Name(name) else {
            throw HTTPBinError(.badRequest, "Invalid header name: \(name)")
        }
        guard HTTPField.isValidValue(value) else {
            throw HTTPBinError(.badRequest, "Invalid header value for \(name)")
        }
        self.append(HTTPField(name: fieldName, value: value))
    }
}
