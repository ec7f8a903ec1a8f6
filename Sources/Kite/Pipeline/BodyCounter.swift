import Foundation
import HTTPTypes

/// Counts a response body as it arrives, against the total announced by the head.
struct BodyCounter {
    /// Bytes of this body received so far.
    var received: Int64 = 0
    /// Bytes already on disk before this body (a resumed download).
    var startOffset: Int64 = 0
    /// The whole transfer's size, when the head announces it for the bytes Kite will see.
    var total: Int64?
    /// Download rate limits to honour.
    var limiters: [RateLimiter] = []

    /// Whether the head announces a body over `limit` bytes (`nil`: no limit).
    func announcesMore(than limit: Int64?) -> Bool {
        guard let limit, let total else { return false }
        return total > limit
    }

    /// Throws `responseTooLarge` when the head announces a body over `limit` bytes (`nil`: no limit).
    func checkAnnounced(against limit: Int64?, for request: BaseRequest) throws(KiteError) {
        if let limit, let total, announcesMore(than: limit) {
            throw Self.tooLarge(limit: limit, detail: "Content-Length \(total)", request: request)
        }
    }

    /// Throws `responseTooLarge` once more than `limit` bytes arrived (`nil`: no limit).
    func checkReceived(against limit: Int64?, for request: BaseRequest) throws(KiteError) {
        if let limit, self.received > limit {
            throw Self.tooLarge(limit: limit, detail: "\(self.received) bytes arrived", request: request)
        }
    }

    private static func tooLarge(limit: Int64, detail: String, request: BaseRequest) -> KiteError {
        KiteError(
            code: .responseTooLarge,
            message: "the response body exceeds the limit of \(limit) bytes (\(detail))",
            request: request.summary
        )
    }

    /// Whether `response` to `method` has no body whatever its header fields say (HEAD, 204, 304).
    static func hasNoBody(_ response: HTTPResponse, method: HTTPRequest.Method) -> Bool {
        method == .head || response.status.code == 204 || response.status.code == 304
    }

    /// The body size a response head announces, or `nil` when it does not say or the body is
    /// content-encoded (the engine decodes it, so `Content-Length` is not the number of bytes seen).
    static func expectedLength(of response: HTTPResponse, method: HTTPRequest.Method) -> Int64? {
        if Self.hasNoBody(response, method: method) { return 0 }
        // One pass over the fields: the subscript would scan them once per name and join the values.
        var length: String?
        var lengthFields = 0
        for field in response.headerFields {
            if field.name == .contentLength {
                length = field.value
                lengthFields += 1
            } else if field.name == .contentEncoding, field.value.lowercased() != "identity" {
                return nil
            }
        }
        // Several Content-Length fields (even equal ones) are not trusted as a total.
        guard let length, lengthFields == 1 else { return nil }
        return Int64(length) ?? Int64(length.trimmingCharacters(in: .whitespaces))
    }
}
