import Foundation
import HTTPTypes
import NIOCore
import NIOFoundationCompat

/// A request whose response body is collected in memory, then validated and serialized.
///
/// ```swift
/// let echo = try await session.request("http://127.0.0.1:8080/get")
///     .validate()
///     .serializingDecodable(Echo.self)
///     .value
///
/// session.request("http://127.0.0.1:8080/status/418")
///     .validate(statusCode: 200..<300)
///     .responseString(queue: .global()) { response in
///         print(response.result)
///     }
/// ```
// @unchecked: adds no stored state to BaseRequest, whose mutable state is behind its lock.
public class DataRequest: BaseRequest, @unchecked Sendable {
    /// The response body, once the request is over.
    public var data: Data? {
        self.machine.withLockedValue { $0.outcome?.data }
    }

    init(session: Session, draft: Result<RequestDraft, KiteError>, body: RequestBodySource = .draft) {
        super.init(session: session, draft: draft, sink: MemorySink(), body: body)
    }

    /// Limits how large this request's response body may be; a larger one fails with
    /// `responseTooLarge` before or while it arrives. Overrides
    /// ``Session/Configuration/maximumResponseSize``; call it before the request starts.
    ///
    /// ```swift
    /// let data = try await session.request("http://127.0.0.1:8080/bytes/1024")
    ///     .limitResponseSize(to: 512)
    ///     .serializingData()
    ///     .value  // throws: the response body exceeds the limit of 512 bytes (Content-Length 1024)
    /// ```
    ///
    /// - Parameter bytes: The limit in bytes, or `nil` for none.
    /// - Returns: The request.
    @discardableResult
    public func limitResponseSize(to bytes: Int64?) -> Self {
        self.machine.withLockedValue { $0.record.maximumResponseSize = .some(bytes) }
        return self
    }

    /// The response for `outcome` produced by `serializer`, timing the serialization.
    func makeResponse<Serializer: DataResponseSerializerProtocol>(
        _ outcome: RequestOutcome,
        using serializer: Serializer
    ) -> DataResponse<Serializer.SerializedObject, KiteError> {
        let start = NIODeadline.now()
        let result = self.serialize(outcome) {
            try serializer.serialize(
                request: outcome.request,
                response: outcome.response,
                data: outcome.data,
                error: outcome.error
            )
        }
        let response = DataResponse(
            request: outcome.request,
            response: outcome.response,
            url: outcome.url,
            data: outcome.data,
            metrics: outcome.metrics?.withSerializationDuration(start.duration(to: .now())),
            result: result
        )
        self.context.eventMonitor?.request(self, didParseResponse: response)
        return response
    }
}
