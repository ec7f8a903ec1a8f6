import Foundation

/// When a request started, got its first response byte, completed and was serialized, the
/// durations between, and how many bytes moved.
///
/// The timeline of Alamofire's and AFNetworking's `Timeline`, measured by Kite itself (on Linux,
/// URLSession reports no metrics). Durations come from a monotonic clock; the dates from the wall
/// clock at the start plus those durations.
///
/// ```swift
/// let response = await session.request("http://127.0.0.1:8080/get").serializingData().response
/// if let metrics = response.metrics {
///     print(metrics.latency as Any, metrics.requestDuration, metrics.bytesReceived)
/// }
/// ```
public struct ResponseMetrics: Sendable, Hashable, CustomStringConvertible {
    /// When the request started (was resumed and began building).
    public let requestStartTime: Date
    /// When the response head arrived; `nil` when no response arrived.
    public let initialResponseTime: Date?
    /// When the last body byte arrived or the request failed.
    public let requestCompletedTime: Date
    /// When the response was serialized into the value the caller asked for.
    public let serializationCompletedTime: Date

    /// From start to the response head; `nil` when no response arrived.
    public let latency: Duration?
    /// From start to completion.
    public let requestDuration: Duration
    /// From completion to the end of serialization.
    public let serializationDuration: Duration
    /// From start to the end of serialization.
    public let totalDuration: Duration

    /// Request body bytes handed to the engine.
    public let bytesSent: Int64
    /// Response body bytes received, after decompression.
    public let bytesReceived: Int64
    /// How many redirects were followed.
    public let redirectCount: Int

    /// Creates metrics.
    ///
    /// - Parameters:
    ///   - requestStartTime: When the request started.
    ///   - latency: Start to response head, if a head arrived.
    ///   - requestDuration: Start to completion.
    ///   - serializationDuration: Completion to end of serialization.
    ///   - bytesSent: Request body bytes sent.
    ///   - bytesReceived: Response body bytes received.
    ///   - redirectCount: Redirects followed.
    public init(
        requestStartTime: Date,
        latency: Duration?,
        requestDuration: Duration,
        serializationDuration: Duration,
        bytesSent: Int64,
        bytesReceived: Int64,
        redirectCount: Int
    ) {
        self.requestStartTime = requestStartTime
        self.latency = latency
        self.requestDuration = requestDuration
        self.serializationDuration = serializationDuration
        self.totalDuration = requestDuration + serializationDuration
        self.initialResponseTime = latency.map { requestStartTime.addingTimeInterval($0.timeInterval) }
        self.requestCompletedTime = requestStartTime.addingTimeInterval(requestDuration.timeInterval)
        self.serializationCompletedTime = requestStartTime.addingTimeInterval(self.totalDuration.timeInterval)
        self.bytesSent = bytesSent
        self.bytesReceived = bytesReceived
        self.redirectCount = redirectCount
    }

    public var description: String {
        let latency = self.latency.map(\.kiteDescription) ?? "none"
        return
            "latency \(latency), request \(self.requestDuration.kiteDescription), serialization "
            + "\(self.serializationDuration.kiteDescription), total \(self.totalDuration.kiteDescription), "
            + "\(self.bytesSent) bytes sent, \(self.bytesReceived) bytes received, \(self.redirectCount) redirects"
    }

    func withSerializationDuration(_ duration: Duration) -> ResponseMetrics {
        ResponseMetrics(
            requestStartTime: self.requestStartTime,
            latency: self.latency,
            requestDuration: self.requestDuration,
            serializationDuration: duration,
            bytesSent: self.bytesSent,
            bytesReceived: self.bytesReceived,
            redirectCount: self.redirectCount
        )
    }
}

extension Duration {
    /// The duration in seconds, as Foundation counts time.
    public var timeInterval: TimeInterval {
        let (seconds, attoseconds) = self.components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}
