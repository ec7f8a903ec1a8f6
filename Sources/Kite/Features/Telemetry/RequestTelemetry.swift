import Foundation
import HTTPTypes
import Instrumentation
import Logging
import Metrics
import Tracing

/// The logging, metrics and tracing a session does for each request. Made only when one of them is on: a
/// session without them checks one optional per stage and pays nothing else.
final class RequestTelemetry: Sendable {
    /// The session's logger, when it logs at `.info` or below.
    let logger: Logger?
    let metricsFactory: (any MetricsFactory)?
    let tracer: (any Tracer)?
    let redactedHeaderNames: Set<HTTPField.Name>

    private init(
        logger: Logger?,
        metricsFactory: (any MetricsFactory)?,
        tracer: (any Tracer)?,
        redactedHeaderNames: Set<HTTPField.Name>
    ) {
        self.logger = logger
        self.metricsFactory = metricsFactory
        self.tracer = tracer
        self.redactedHeaderNames = redactedHeaderNames
    }

    /// The telemetry of a session, or `nil` when it neither logs, measures nor traces.
    static func make(configuration: Session.Configuration, logger: Logger) -> RequestTelemetry? {
        let logger = logger.logLevel <= .info ? logger : nil
        let factory = configuration.metrics.factory
        let tracer = configuration.tracing.tracer
        guard logger != nil || factory != nil || tracer != nil else { return nil }
        return RequestTelemetry(
            logger: logger,
            metricsFactory: factory,
            tracer: tracer,
            redactedHeaderNames: configuration.redactedHeaderNames
        )
    }

    /// What a request's telemetry says about its target, with bounded values for metric dimensions.
    struct Target {
        let method: String
        /// The method for metrics: a known method, else `_OTHER` (OpenTelemetry's rule).
        let boundedMethod: String
        let url: String
        let scheme: String
        let host: String
        let port: Int

        init(_ request: BaseRequest) {
            self.method = request.summary.method
            self.boundedMethod = Self.knownMethods.contains(self.method) ? self.method : "_OTHER"
            self.url = Redaction.url(request.summary.url)
            let url = try? request.draftResult.get().url
            self.scheme = url?.scheme?.lowercased() ?? "http"
            self.host = url?.host ?? ""
            self.port = url?.port ?? (self.scheme == "https" ? 443 : 80)
        }

        static let knownMethods: Set<String> = [
            "GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH", "QUERY",
        ]
    }

    // MARK: Stages

    /// The pipeline started: one more request in flight, and its span starts (in the caller's context).
    func requestStarted(_ request: BaseRequest) {
        let target = Target(request)
        if let factory = self.metricsFactory {
            Meter(label: Names.activeRequests, dimensions: Self.activeDimensions(target), factory: factory).increment()
        }
        if let tracer = self.tracer {
            // OpenTelemetry names a client span by its method, `HTTP` for one outside the known set.
            let span = tracer.startSpan(
                target.boundedMethod == "_OTHER" ? "HTTP" : target.method,
                context: InstrumentationContext.current ?? .topLevel,
                ofKind: .client
            )
            span.attributes[Names.method] = target.method
            span.attributes[Names.url] = target.url
            span.attributes[Names.scheme] = target.scheme
            span.attributes[Names.serverAddress] = target.host
            span.attributes[Names.serverPort] = target.port
            let operationID = request.machine.withLockedValue { machine -> String? in
                machine.record.span = span
                return machine.record.operationID
            }
            if let operationID { span.attributes[Names.operationID] = operationID }
        }
    }

    /// Puts the request's span context into the head about to be sent (W3C `traceparent` with a tracer
    /// that propagates it).
    func inject(into head: inout HTTPRequest, for request: BaseRequest) {
        guard let tracer = self.tracer, let span = request.machine.withLockedValue({ $0.record.span }) else { return }
        tracer.inject(span.context, into: &head.headerFields, using: HTTPFieldsInjector())
    }

    /// A redirect is about to be followed: an event on the span.
    func redirecting(_ request: BaseRequest, to next: HTTPRequest, status: Int) {
        guard self.tracer != nil, let span = request.machine.withLockedValue({ $0.record.span }) else { return }
        span.addEvent(
            SpanEvent(
                name: "http.redirect",
                attributes: [
                    Names.statusCode: .int64(Int64(status)),
                    Names.url: .string(Redaction.url(RequestSummary(next).url)),
                ]
            )
        )
    }

    /// The request is being sent again: an event on the span.
    func retrying(_ request: BaseRequest, after error: KiteError, resendCount: Int) {
        guard self.tracer != nil, let span = request.machine.withLockedValue({ $0.record.span }) else { return }
        span.addEvent(
            SpanEvent(
                name: "http.retry",
                attributes: [
                    Names.resendCount: .int64(Int64(resendCount)),
                    Names.errorType: .string(error.code.description),
                ]
            )
        )
    }

    /// The engine sends an attempt once more on a new connection (``TransportEvents``): a counter, and an event on
    /// the span.
    func resending(_ request: BaseRequest, after error: KiteError) {
        if let factory = self.metricsFactory {
            let target = Target(request)
            let dimensions = [
                (Names.method, target.boundedMethod), (Names.serverAddress, target.host),
                (Names.serverPort, String(target.port)), (Names.errorType, error.code.description),
            ]
            Counter(label: Names.connectionResends, dimensions: dimensions, factory: factory).increment()
        }
        guard self.tracer != nil, let span = request.machine.withLockedValue({ $0.record.span }) else { return }
        span.addEvent(
            SpanEvent(name: Names.connectionResends, attributes: [Names.errorType: .string(error.code.description)])
        )
    }

    /// The response cache handled an exchange: a counter by result (`hit`, `miss`, `revalidated`, `stale`).
    func cacheUsed(_ request: BaseRequest, status: ResponseCacheStatus) {
        guard let factory = self.metricsFactory else { return }
        let result =
            switch status {
            case .network: "miss"
            case .hit: "hit"
            case .revalidated: "revalidated"
            case .stale: "stale"
            }
        let dimensions = [(Names.method, Target(request).boundedMethod), (Names.cacheResult, result)]
        Counter(label: Names.cacheLookups, dimensions: dimensions, factory: factory).increment()
    }

    /// The response cache stored a response.
    func cacheStored(_ request: BaseRequest) {
        guard let factory = self.metricsFactory else { return }
        let dimensions = [(Names.method, Target(request).boundedMethod)]
        Counter(label: Names.cacheStores, dimensions: dimensions, factory: factory).increment()
    }

    /// The request is over: its metrics, its span's end and its log line. A request cancelled before it
    /// `started` only logs: it was never in flight and has no span.
    func requestFinished(_ request: BaseRequest, outcome: RequestOutcome, retryCount: Int, started: Bool = true) {
        let target = Target(request)
        let status = outcome.response.map { Int($0.status.code) }
        let errorType = Self.errorType(outcome.error, status: status)
        let duration = outcome.metrics?.requestDuration ?? .zero
        // OpenTelemetry counts every resend, redirects included.
        let resendCount = retryCount + (outcome.metrics?.redirectCount ?? 0)
        if started, let factory = self.metricsFactory {
            self.record(target, status: status, errorType: errorType, duration: duration, factory: factory)
        }
        if self.tracer != nil, let span = request.machine.withLockedValue({ $0.record.span }) {
            if let status { span.attributes[Names.statusCode] = status }
            span.attributes[Names.resendCount] = resendCount
            if let metrics = outcome.metrics {
                span.attributes[Names.requestBodySize] = Int(metrics.bytesSent)
                span.attributes[Names.responseBodySize] = Int(metrics.bytesReceived)
            }
            if let errorType {
                span.attributes[Names.errorType] = errorType
                if let error = outcome.error { span.recordError(error) }
                span.setStatus(SpanStatus(code: .error, message: outcome.error?.message ?? "status \(errorType)"))
            }
            span.end()
        }
        if let logger = self.logger {
            self.log(
                target,
                outcome: outcome,
                status: status,
                duration: duration,
                retryCount: retryCount,
                resendCount: resendCount,
                request: request,
                logger: logger
            )
        }
    }

    /// `error.type` as OpenTelemetry defines it: the error's code, else the status of a 4xx or 5xx response.
    static func errorType(_ error: KiteError?, status: Int?) -> String? {
        if let error { return error.code.description }
        if let status, status >= 400 { return String(status) }
        return nil
    }

    // MARK: Metrics

    private static func activeDimensions(_ target: Target) -> [(String, String)] {
        [
            (Names.method, target.boundedMethod), (Names.serverAddress, target.host),
            (Names.serverPort, String(target.port)), (Names.scheme, target.scheme),
        ]
    }

    private func record(
        _ target: Target,
        status: Int?,
        errorType: String?,
        duration: Duration,
        factory: any MetricsFactory
    ) {
        Meter(label: Names.activeRequests, dimensions: Self.activeDimensions(target), factory: factory).decrement()
        var dimensions = [
            (Names.method, target.boundedMethod), (Names.serverAddress, target.host),
            (Names.serverPort, String(target.port)),
        ]
        if let status { dimensions.append((Names.statusClass, "\(status / 100)xx")) }
        if let errorType { dimensions.append((Names.errorType, errorType)) }
        Counter(label: Names.requests, dimensions: dimensions, factory: factory).increment()
        let (seconds, attoseconds) = duration.components
        Metrics.Timer(label: Names.duration, dimensions: dimensions, factory: factory)
            .recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }

    // MARK: Logging

    private func log(
        _ target: Target,
        outcome: RequestOutcome,
        status: Int?,
        duration: Duration,
        retryCount: Int,
        resendCount: Int,
        request: BaseRequest,
        logger: Logger
    ) {
        let sent = outcome.metrics?.bytesSent ?? 0
        let received = outcome.metrics?.bytesReceived ?? 0
        var metadata: Logger.Metadata = [
            Names.method: .string(target.method),
            Names.url: .string(target.url),
            Names.duration: .string(String(format: "%.6f", duration.timeInterval)),
            Names.requestBodySize: .string(String(sent)),
            Names.responseBodySize: .string(String(received)),
            Names.resendCount: .string(String(resendCount)),
        ]
        if let status { metadata[Names.statusCode] = .string(String(status)) }
        if let operationID = request.machine.withLockedValue({ $0.record.operationID }) {
            metadata[Names.operationID] = .string(operationID)
        }
        let outcomeText: String
        if let error = outcome.error {
            metadata[Names.errorType] = .string(error.code.description)
            outcomeText = "failed (\(error.code)): \(error.message)"
        } else {
            outcomeText = status.map(String.init) ?? "no response"
        }
        if logger.logLevel <= .debug {
            if let head = outcome.request {
                for (name, values) in self.redactedFields(head.headerFields) {
                    metadata["http.request.header.\(name)"] = .array(values.map { .string($0) })
                }
            }
            if let head = outcome.response {
                for (name, values) in self.redactedFields(head.headerFields) {
                    metadata["http.response.header.\(name)"] = .array(values.map { .string($0) })
                }
            }
        }
        if logger.logLevel <= .trace, let head = outcome.request {
            let body = try? request.draftResult.get().body
            metadata[Names.curl] = .string(
                CURLCommand.render(
                    head: head,
                    body: body,
                    timeout: nil,
                    hiding: self.redactedHeaderNames,
                    placeholder: Redaction.placeholder,
                    redactingURL: true
                )
            )
        }
        let retries = retryCount == 1 ? "1 retry" : "\(retryCount) retries"
        logger.info(
            "\(target.method) \(target.url) \(outcomeText) in \(duration.kiteDescription), sent \(sent) B, received \(received) B, \(retries)",
            metadata: metadata
        )
    }

    /// Field values by lowercased name, in order, sensitive ones replaced.
    private func redactedFields(_ fields: HTTPFields) -> [(String, [String])] {
        var order: [String] = []
        var values: [String: [String]] = [:]
        for (name, value) in Redaction.fields(fields, hiding: self.redactedHeaderNames) {
            if values[name] == nil { order.append(name) }
            values[name, default: []].append(value)
        }
        return order.map { ($0, values[$0]!) }
    }

    /// OpenTelemetry's names, used for log metadata, span attributes and metrics alike.
    enum Names {
        static let method = "http.request.method"
        static let url = "url.full"
        static let scheme = "url.scheme"
        static let serverAddress = "server.address"
        static let serverPort = "server.port"
        static let statusCode = "http.response.status_code"
        static let statusClass = "http.response.status_class"
        static let resendCount = "http.request.resend_count"
        static let requestBodySize = "http.request.body.size"
        static let responseBodySize = "http.response.body.size"
        static let errorType = "error.type"
        static let duration = "http.client.request.duration"
        static let requests = "http.client.requests"
        static let activeRequests = "http.client.active_requests"
        /// Kite's own: attempts sent once more on a new connection (not retries: the request was never sent).
        static let connectionResends = "kite.http.client.connection_resends"
        static let curl = "kite.curl"
        /// Kite's own: exchanges the response cache handled, by ``cacheResult`` (`hit`, `miss`, `revalidated`,
        /// `stale`), and the responses it stored.
        static let cacheLookups = "kite.http.client.cache.lookups"
        static let cacheStores = "kite.http.client.cache.stores"
        static let cacheResult = "kite.cache.result"
        /// The `operationId` of a generated client's request (KiteOpenAPI's transport).
        static let operationID = "openapi.operation_id"
    }
}

/// Writes propagated context into a request's header fields; keys that are not valid field names are skipped.
struct HTTPFieldsInjector: Injector {
    func inject(_ value: String, forKey key: String, into carrier: inout HTTPFields) {
        guard let name = HTTPField.Name(key) else { return }
        carrier[name] = value
    }
}
