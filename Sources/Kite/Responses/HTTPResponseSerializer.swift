import Foundation
import HTTPTypes

/// The body as `Data` after AFNetworking's base checks: AFNetworking's `AFHTTPResponseSerializer`, the one to
/// give ``HTTPSessionManager`` for raw bytes. Statuses `200..<300`, any content type, and an empty body is
/// empty `Data` for every status.
///
/// ```swift
/// manager.responseSerializer = HTTPResponseSerializer()
/// manager.get("bytes/16", parameters: nil, headers: nil, progress: nil,
///     success: { _, object in print((object as? Data)?.count ?? 0) }, failure: nil)
/// ```
public struct HTTPResponseSerializer: ResponseAcceptingSerializer {
    /// Which responses are accepted; ``ResponseAcceptance/http`` by default.
    public var acceptance: ResponseAcceptance

    /// Creates the serializer.
    ///
    /// - Parameter acceptance: Which responses are accepted; `200..<300` and any content type by default.
    public init(acceptance: ResponseAcceptance = .http) {
        self.acceptance = acceptance
    }

    public func serialize(
        request: HTTPRequest?,
        response: HTTPResponse?,
        data: Data?,
        error: KiteError?
    ) throws -> Data {
        try self.checkAcceptance(response: response, data: data, error: error)
        return data ?? Data()
    }
}
