import CoreMetrics
import Tracing

/// Whether a session reports swift-metrics, and to which factory.
///
/// ```swift
/// MetricsSystem.bootstrap(PrometheusMetricsFactory())  // once, at startup
/// var configuration = Session.Configuration()
/// configuration.metrics = .enabled
/// let session = Session(configuration: configuration)
/// ```
///
/// The metrics, named after OpenTelemetry's HTTP client conventions, with bounded dimensions (method, server
/// address and port, status class, error code; never a full URL):
/// - `http.client.requests`: a counter of finished requests;
/// - `http.client.request.duration`: a timer (histogram) of their durations;
/// - `http.client.active_requests`: a meter of requests in flight.
public struct MetricsReporting: Sendable {
    enum Mode {
        case disabled
        case global
        case factory(any MetricsFactory)
    }

    let mode: Mode

    /// No metrics (the default).
    public static let disabled = MetricsReporting(mode: .disabled)

    /// Metrics to the bootstrapped factory (`MetricsSystem.factory`, read when the session is made); nothing
    /// when none is bootstrapped.
    public static let enabled = MetricsReporting(mode: .global)

    /// Metrics to `factory`, whatever is bootstrapped.
    public static func enabled(factory: any MetricsFactory) -> MetricsReporting {
        MetricsReporting(mode: .factory(factory))
    }

    /// The factory to report to, or `nil` when metrics are off.
    var factory: (any MetricsFactory)? {
        switch self.mode {
        case .disabled:
            return nil
        case .global:
            let factory = MetricsSystem.factory
            return factory is NOOPMetricsHandler ? nil : factory
        case .factory(let factory):
            return factory
        }
    }
}

/// Whether a session traces its requests, and with which tracer.
///
/// ```swift
/// InstrumentationSystem.bootstrap(otelTracer)  // once, at startup: sessions made afterwards trace
/// var configuration = Session.Configuration()
/// configuration.tracing = .disabled            // or opt one session out
/// ```
public struct TracingOptions: Sendable {
    enum Mode {
        case automatic
        case disabled
        case tracer(any Tracer)
    }

    let mode: Mode

    /// The bootstrapped tracer (`InstrumentationSystem.tracer`, read when the session is made); nothing is
    /// traced when none is bootstrapped (the default).
    public static let automatic = TracingOptions(mode: .automatic)

    /// No spans and no propagated context.
    public static let disabled = TracingOptions(mode: .disabled)

    /// Spans from `tracer`, whatever is bootstrapped.
    public static func tracer(_ tracer: any Tracer) -> TracingOptions {
        TracingOptions(mode: .tracer(tracer))
    }

    /// The tracer to use, or `nil` when tracing is off or would only reach the no-op tracer.
    var tracer: (any Tracer)? {
        switch self.mode {
        case .disabled:
            return nil
        case .tracer(let tracer):
            return tracer
        case .automatic:
            let tracer = InstrumentationSystem.tracer
            return tracer is NoOpTracer ? nil : tracer
        }
    }
}
