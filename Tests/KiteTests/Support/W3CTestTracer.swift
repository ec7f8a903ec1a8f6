import InMemoryTracing
import Instrumentation
import NIOConcurrencyHelpers
import Tracing

/// A recording tracer that propagates context as W3C Trace Context (`traceparent`): InMemoryTracer's spans
/// with W3C-shaped ids (32 and 16 lowercase hex digits).
struct W3CTestTracer: Tracer {
    typealias Span = InMemorySpan

    let base: InMemoryTracer

    init() {
        let counter = NIOLockedValueBox<UInt64>(0)
        let next: @Sendable (Int) -> String = { digits in
            let value = counter.withLockedValue {
                $0 += 1
                return $0
            }
            let hex = String(value, radix: 16)
            return String(repeating: "0", count: digits - hex.count) + hex
        }
        self.base = InMemoryTracer(
            idGenerator: .init(nextTraceID: { "4bf92f3577b34da6" + next(16) }, nextSpanID: { next(16) })
        )
    }

    /// The `traceparent` value of a span context: version 00, sampled.
    static func traceparent(traceID: String, spanID: String) -> String {
        "00-\(traceID)-\(spanID)-01"
    }

    func startSpan<Instant: TracerInstant>(
        _ operationName: String,
        context: @autoclosure () -> InstrumentationContext,
        ofKind kind: SpanKind,
        at instant: @autoclosure () -> Instant,
        function: String,
        file fileID: String,
        line: UInt
    ) -> InMemorySpan {
        self.base.startSpan(
            operationName,
            context: context(),
            ofKind: kind,
            at: instant(),
            function: function,
            file: fileID,
            line: line
        )
    }

    func forceFlush() {}

    func inject<Carrier, Inject: Injector>(
        _ context: InstrumentationContext,
        into carrier: inout Carrier,
        using injector: Inject
    ) where Carrier == Inject.Carrier {
        guard let span = context.inMemorySpanContext else { return }
        injector.inject(
            Self.traceparent(traceID: span.traceID, spanID: span.spanID),
            forKey: "traceparent",
            into: &carrier
        )
    }

    func extract<Carrier, Extract: Extractor>(
        _ carrier: Carrier,
        into context: inout InstrumentationContext,
        using extractor: Extract
    ) where Carrier == Extract.Carrier {}

    var finishedSpans: [FinishedInMemorySpan] { self.base.finishedSpans }
}
