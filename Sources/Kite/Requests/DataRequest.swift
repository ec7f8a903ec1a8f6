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
public final class DataRequest: BaseRequest, @unchecked Sendable {
    /// The response body, once the request is over.
    public var data: Data? {
        self.storage.withLockedValue { $0.machine.outcome?.data }
    }

    override func receiveBody(
        _ response: TransportResponse,
        into outcome: inout RequestOutcome,
        bytesReceived: inout Int64
    ) async throws(KiteError) {
        var iterator = response.body.makeAsyncIterator()
        var collected: ByteBuffer?
        while var chunk = try await self.nextChunk(&iterator) {
            bytesReceived += Int64(chunk.readableBytes)
            if collected == nil {
                collected = chunk
            } else {
                collected?.writeBuffer(&chunk)
            }
        }
        outcome.data = collected.map { Data(buffer: $0, byteTransferStrategy: .noCopy) } ?? Data()
    }

    /// The response for `outcome` produced by `serializer`, timing the serialization.
    func makeResponse<Serializer: DataResponseSerializerProtocol>(
        _ outcome: RequestOutcome,
        using serializer: Serializer
    ) -> DataResponse<Serializer.SerializedObject, KiteError> {
        let clock = ContinuousClock()
        let start = clock.now
        let result: Result<Serializer.SerializedObject, KiteError>
        do {
            result = .success(
                try serializer.serialize(
                    request: outcome.request,
                    response: outcome.response,
                    data: outcome.data,
                    error: outcome.error
                )
            )
        } catch let error as KiteError {
            result = .failure(error.naming(self.summary).carrying(outcome.response))
        } catch {
            result = .failure(
                KiteError(
                    code: .responseSerializationFailed,
                    message: "the response could not be serialized: \(error)",
                    request: self.summary,
                    response: outcome.response,
                    underlyingError: error
                )
            )
        }
        return DataResponse(
            request: outcome.request,
            response: outcome.response,
            url: outcome.url,
            data: outcome.data,
            metrics: outcome.metrics?.withSerializationDuration(start.duration(to: clock.now)),
            result: result
        )
    }
}
