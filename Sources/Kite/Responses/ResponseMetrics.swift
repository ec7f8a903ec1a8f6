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
    public var initialResponseTime: Date? {
        self.latency.map { self.requestStartTime.addingTimeInterval($0.timeInterval) }
    }
    /// When the last body byte arrived or the request failed.
    public var requestCompletedTime: Date {
        self.requestStartTime.addingTimeInterval(self.requestDuration.timeInterval)
    }
    /// When the response was serialized into the value the caller asked for.
    public var serializationCompletedTime: Date {
        self.requestStartTime.addingTimeInterval(self.totalDuration.timeInterval)
    }

    /// From start to the response head; `nil` when no response arrived.
    public let latency: Duration?
    /// From start to completion.
    public let requestDuration: Duration
    /// From completion to the end of serialization.
    public let serializationDuration: Duration
    /// From start to the end of serialization. (The dates and this total are computed from the stored
    /// durations: every response carries these metrics through the pipeline's async frames, which stay small.)
    public var totalDuration: Duration { self.requestDuration + self.serializationDuration }

    /// Request body bytes handed to the engine.
    public let bytesSent: Int64
    /// Response body bytes received, after decompression.
    public let bytesReceived: Int64
    /// How many redirects were followed.
    public let redirectCount: Int
    /// The connection of the request's last exchange (the one that answered, or the one that broke or went
    /// silent), when the session collects connection metrics (``Session/Configuration/collectsConnectionMetrics``);
    /// `nil` otherwise or when no request head was written (a refused connection, say).
    public let connection: ConnectionMetrics?
    /// Where the response came from: the network, or the session's ``ResponseCache`` and why (a fresh hit, a
    /// `304` revalidation, a stale copy). Always ``ResponseCacheStatus/network`` without a cache.
    public let cacheStatus: ResponseCacheStatus

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
    ///   - connection: The connection that served the final response.
    ///   - cacheStatus: Where the response came from.
    public init(
        requestStartTime: Date,
        latency: Duration?,
        requestDuration: Duration,
        serializationDuration: Duration,
        bytesSent: Int64,
        bytesReceived: Int64,
        redirectCount: Int,
        connection: ConnectionMetrics? = nil,
        cacheStatus: ResponseCacheStatus = .network
    ) {
        self.requestStartTime = requestStartTime
        self.latency = latency
        self.requestDuration = requestDuration
        self.serializationDuration = serializationDuration
        self.bytesSent = bytesSent
        self.bytesReceived = bytesReceived
        self.redirectCount = redirectCount
        self.connection = connection
        self.cacheStatus = cacheStatus
    }

    public var description: String {
        let latency = self.latency.map(\.kiteDescription) ?? "none"
        return
            "latency \(latency), request \(self.requestDuration.kiteDescription), serialization "
            + "\(self.serializationDuration.kiteDescription), total \(self.totalDuration.kiteDescription), "
            + "\(self.bytesSent) bytes sent, \(self.bytesReceived) bytes received, \(self.redirectCount) redirects"
            + (self.connection.map { ", \($0)" } ?? "")
            + (self.cacheStatus.isFromCache ? ", cache \(self.cacheStatus)" : "")
    }

    func withSerializationDuration(_ duration: Duration) -> ResponseMetrics {
        ResponseMetrics(
            requestStartTime: self.requestStartTime,
            latency: self.latency,
            requestDuration: self.requestDuration,
            serializationDuration: duration,
            bytesSent: self.bytesSent,
            bytesReceived: self.bytesReceived,
            redirectCount: self.redirectCount,
            connection: self.connection,
            cacheStatus: self.cacheStatus
        )
    }
}

/// The connection that served a response: whether it was reused, its HTTP and TLS versions, its addresses, and
/// how long the request waited for it when it was new.
///
/// Collected when ``Session/Configuration/collectsConnectionMetrics`` is on. URLSession's
/// `URLSessionTaskTransactionMetrics` also splits a new connection's setup into DNS lookup, TCP connect and TLS
/// handshake; on Linux the engine (async-http-client over SwiftNIO) runs those phases inside NIO's bootstrap
/// with no hook before the connection is ready, so Kite reports their sum only, as
/// ``establishmentDuration``.
///
/// A class (immutable, compared by value) so that ``ResponseMetrics``, which every response carries through
/// the pipeline's async frames, grows by one reference only.
public final class ConnectionMetrics: Sendable, Hashable, CustomStringConvertible {
    /// Kite's number for the connection, unique in the process: two responses with the same id came over the
    /// same connection.
    public let id: Int
    /// Whether the connection had served an earlier request (it came from the pool).
    public let isReused: Bool
    /// `http/1.1` or `h2`.
    public let httpVersion: String
    /// `TLSv1.2` or `TLSv1.3`; `nil` for plain HTTP.
    public let tlsVersion: String?
    /// The local address and port, such as `127.0.0.1:53122`.
    public let localAddress: String?
    /// The server's (or proxy's) address and port.
    public let remoteAddress: String?
    /// For a request that waited for a new connection: from handing the request to the engine to the
    /// connection being ready (DNS lookup, TCP connect, TLS handshake and, for HTTP/2, the server's
    /// settings, together). `nil` for a reused connection or one that was ready before the request.
    public let establishmentDuration: Duration?

    /// Creates connection metrics.
    public init(
        id: Int,
        isReused: Bool,
        httpVersion: String,
        tlsVersion: String?,
        localAddress: String?,
        remoteAddress: String?,
        establishmentDuration: Duration?
    ) {
        self.id = id
        self.isReused = isReused
        self.httpVersion = httpVersion
        self.tlsVersion = tlsVersion
        self.localAddress = localAddress
        self.remoteAddress = remoteAddress
        self.establishmentDuration = establishmentDuration
    }

    public static func == (lhs: ConnectionMetrics, rhs: ConnectionMetrics) -> Bool {
        lhs.id == rhs.id && lhs.isReused == rhs.isReused && lhs.httpVersion == rhs.httpVersion
            && lhs.tlsVersion == rhs.tlsVersion && lhs.localAddress == rhs.localAddress
            && lhs.remoteAddress == rhs.remoteAddress && lhs.establishmentDuration == rhs.establishmentDuration
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(self.id)
        hasher.combine(self.isReused)
        hasher.combine(self.httpVersion)
        hasher.combine(self.tlsVersion)
        hasher.combine(self.localAddress)
        hasher.combine(self.remoteAddress)
        hasher.combine(self.establishmentDuration)
    }

    public var description: String {
        let kind = self.isReused ? "reused" : "new"
        let setup = self.establishmentDuration.map { " after \($0.kiteDescription)" } ?? ""
        return
            "\(kind) connection #\(self.id)\(setup), \(self.httpVersion)\(self.tlsVersion.map { " over \($0)" } ?? "")"
            + " to \(self.remoteAddress ?? "?")"
    }
}

extension Duration {
    /// The duration in seconds, as Foundation counts time.
    public var timeInterval: TimeInterval {
        let (seconds, attoseconds) = self.components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}
