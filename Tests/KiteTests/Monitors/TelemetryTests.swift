import Foundation
import HTTPTypes
import InMemoryTracing
import Instrumentation
import Kite
import Logging
import MetricsTestKit
import Testing
import Tracing

/// The session's logging (swift-log), metrics (swift-metrics) and tracing (swift-distributed-tracing).
@Suite struct RequestLoggingTests {
    private func withSession<T>(
        level: Logger.Level,
        configuration: Session.Configuration = .init(),
        interceptor: (any RequestInterceptor)? = nil,
        _ body: (Session, String) async throws -> T
    ) async throws -> (T, [RecordingLogHandler.Entry]) {
        let recorder = RecordingLogHandler.Recorder()
        let session = Session(
            configuration: configuration,
            logger: recorder.logger(level: level),
            interceptor: interceptor
        )
        defer { Task { try await session.shutdown() } }
        let result = try await body(session, try await SharedTestServer.shared.baseURL())
        return (result, recorder.all)
    }

    @Test func oneInfoLinePerFinishedRequestWithSecretQueryValuesRedacted() async throws {
        let ((data, base), entries) = try await self.withSession(level: .info) { session, base in
            let data = try await session.request(base + "/get?q=swift&access_token=abc123&api_key=k9").serializingData()
                .value
            return (data, base)
        }
        try #require(entries.count == 1)
        let entry = entries[0]
        let url = "\(base)/get?q=swift&access_token=REDACTED&api_key=REDACTED"
        #expect(entry.level == .info)
        #expect(entry.message.hasPrefix("GET \(url) 200 in "))
        #expect(entry.message.hasSuffix(", sent 0 B, received \(data.count) B, 0 retries"))
        #expect(entry.metadata["http.request.method"] == "GET")
        #expect(entry.metadata["url.full"] == .string(url))
        #expect(entry.metadata["http.response.status_code"] == "200")
        #expect(entry.metadata["http.request.body.size"] == "0")
        #expect(entry.metadata["http.response.body.size"] == .string("\(data.count)"))
        #expect(entry.metadata["http.request.resend_count"] == "0")
        #expect(entry.metadata["error.type"] == nil)
        let seconds = Double(entry.metadata["http.client.request.duration"]?.description ?? "")
        #expect(seconds.map { $0 > 0 && $0 < 30 } == true)
        #expect(!entry.metadata.keys.contains { $0.hasPrefix("http.request.header.") })
        #expect(!"\(entry.message)\(entry.metadata)".contains("abc123"))
    }

    @Test func credentialsInTheURLAreNeverLogged() async throws {
        let (status, entries) = try await self.withSession(level: .trace) { session, base in
            let url = base.replacingOccurrences(of: "http://", with: "http://kite:s3cr3tpw@")
            return await session.request(url + "/get").serializingData().response.response?.status.code
        }
        #expect(status == 200)
        try #require(entries.count == 1)
        #expect(!"\(entries[0].message)\(entries[0].metadata)".contains("s3cr3tpw"))
        #expect(entries[0].metadata["http.request.header.authorization"] == .array(["REDACTED"]))
    }

    @Test func debugAddsHeadersWithEverySensitiveValueRedacted() async throws {
        let session = HTTPField.Name("X-Session")!
        var configuration = Session.Configuration()
        configuration.redactedHeaderNames.insert(session)
        let (_, entries) = try await self.withSession(level: .debug, configuration: configuration) { kite, base in
            var headers = HTTPFields()
            headers[.authorization] = "Bearer secret-1"
            headers[.cookie] = "c=secret-2"
            headers[HTTPField.Name("X-Api-Key")!] = "secret-3"
            headers[.proxyAuthorization] = "Basic secret-4"
            headers[session] = "secret-5"
            headers[HTTPField.Name("X-Visible")!] = "shown"
            return await kite.request(
                base + "/response-headers?Set-Cookie=sid%3Dsecret-6&X-Other=fine",
                headers: headers
            ).serializingData().response
        }
        try #require(entries.count == 1)
        let metadata = entries[0].metadata
        for name in ["authorization", "cookie", "x-api-key", "proxy-authorization", "x-session"] {
            #expect(metadata["http.request.header.\(name)"] == .array(["REDACTED"]), "\(name)")
        }
        #expect(metadata["http.request.header.x-visible"] == .array(["shown"]))
        #expect(metadata["http.response.header.set-cookie"] == .array(["REDACTED"]))
        #expect(metadata["http.response.header.x-other"] == .array(["fine"]))
        #expect(metadata["kite.curl"] == nil)
        let everything = "\(entries[0].message)\(metadata)"
        for secret in 1...5 { #expect(!everything.contains("secret-\(secret)"), "secret-\(secret)") }
        let headers = metadata.filter { $0.key.contains(".header.") }
        #expect(!"\(headers)".contains("secret-6"))
    }

    @Test func traceAddsTheCURLCommandRedacted() async throws {
        let ((), entries) = try await self.withSession(level: .trace) { session, base in
            var headers = HTTPFields()
            headers[.authorization] = "Bearer secret-1"
            _ = await session.request(
                base + "/post?password=hunter2",
                method: .post,
                parameters: ["a": "b"],
                encoding: JSONEncoding.default,
                headers: headers
            ).serializingData().response
        }
        try #require(entries.count == 1)
        let curl = try #require(entries[0].metadata["kite.curl"]?.description)
        #expect(curl.hasPrefix("$ curl -X POST"))
        #expect(curl.contains("-H 'Authorization: REDACTED'"))
        #expect(curl.contains("--data-raw '{\"a\":\"b\"}'"))
        #expect(curl.hasSuffix("/post?password=REDACTED'"))
        #expect(!curl.contains("secret-1") && !curl.contains("hunter2"))
        #expect(entries[0].metadata["http.request.header.authorization"] == .array(["REDACTED"]))
    }

    @Test func aFailureIsLoggedWithItsErrorType() async throws {
        let port = try Sockets.refusingPort()
        let (code, entries) = try await self.withSession(level: .info) { session, _ in
            await session.request("http://127.0.0.1:\(port)/get").serializingData().response.error?.code
        }
        #expect(code == .connectionFailed)
        try #require(entries.count == 1)
        #expect(entries[0].metadata["error.type"] == "connectionFailed")
        #expect(entries[0].metadata["http.response.status_code"] == nil)
        #expect(entries[0].message.hasPrefix("GET http://127.0.0.1:\(port)/get failed (connectionFailed): "))
    }

    @Test func retriesAreCountedInOneLine() async throws {
        let key = UUID().uuidString
        let policy = RetryPolicy(exponentialBackoffScale: 0.01, jitter: .none, retryBudget: nil)
        let (_, entries) = try await self.withSession(level: .info, interceptor: policy) { session, base in
            try await session.request(base + "/flaky/\(key)?failures=1").validate().serializingData().value
        }
        try #require(entries.count == 1)
        #expect(entries[0].metadata["http.request.resend_count"] == "1")
        #expect(entries[0].metadata["http.response.status_code"] == "200")
        #expect(entries[0].message.hasSuffix(", 1 retry"))
    }

    @Test func aRequestCancelledBeforeItStartedIsLoggedToo() async throws {
        let (code, entries) = try await self.withSession(level: .info) { session, base in
            let request = session.request(base + "/get")
            request.cancel()
            return await request.serializingData().response.error?.code
        }
        #expect(code == .cancelled)
        try #require(entries.count == 1)
        #expect(entries[0].metadata["error.type"] == "cancelled")
        #expect(entries[0].message.contains(" failed (cancelled): "))
    }

    @Test func redirectsCountAsResendsAsOpenTelemetryDefinesThem() async throws {
        let (_, entries) = try await self.withSession(level: .info) { session, base in
            try await session.request(base + "/redirect/2").serializingData().value
        }
        try #require(entries.count == 1)
        #expect(entries[0].metadata["http.request.resend_count"] == "2")
        #expect(entries[0].message.hasSuffix(", 0 retries"))
    }

    @Test func aLoggerAboveInfoGetsNothing() async throws {
        let (_, entries) = try await self.withSession(level: .notice) { session, base in
            try await session.request(base + "/get").serializingData().value
        }
        #expect(entries.isEmpty)
    }
}

@Suite struct RequestMetricsTests {
    @Test func countersTimersAndTheInFlightMeterWithBoundedDimensions() async throws {
        let metrics = TestMetrics()
        var configuration = Session.Configuration()
        configuration.metrics = .enabled(factory: metrics)
        let session = Session(configuration: configuration)
        defer { Task { try await session.shutdown() } }
        let base = try await SharedTestServer.shared.baseURL()
        let port = String(URL(string: base)!.port!)
        _ = try await session.request(base + "/get?secret=1").serializingData().value
        _ = try await session.request(base + "/get?secret=2").serializingData().value
        _ = await session.request(base + "/status/404").validate().serializingData().response
        let closed = try Sockets.refusingPort()
        _ = await session.request("http://127.0.0.1:\(closed)/x").serializingData().response

        let ok = [
            ("http.request.method", "GET"), ("server.address", "127.0.0.1"), ("server.port", port),
            ("http.response.status_class", "2xx"),
        ]
        #expect(try metrics.expectCounter("http.client.requests", ok).values == [1, 1])
        let durations = try metrics.expectTimer("http.client.request.duration", ok).values
        #expect(durations.count == 2 && durations.allSatisfy { $0 > 0 && $0 < 30_000_000_000 })

        let notFound = [
            ("http.request.method", "GET"), ("server.address", "127.0.0.1"), ("server.port", port),
            ("http.response.status_class", "4xx"), ("error.type", "responseValidationFailed"),
        ]
        #expect(try metrics.expectCounter("http.client.requests", notFound).totalValue == 1)
        let refused = [
            ("http.request.method", "GET"), ("server.address", "127.0.0.1"), ("server.port", String(closed)),
            ("error.type", "connectionFailed"),
        ]
        #expect(try metrics.expectCounter("http.client.requests", refused).totalValue == 1)
        #expect(metrics.counterTotal(label: "http.client.requests") == 4)

        let active = [
            ("http.request.method", "GET"), ("server.address", "127.0.0.1"), ("server.port", port),
            ("url.scheme", "http"),
        ]
        let meter = try metrics.expectMeter("http.client.active_requests", active)
        #expect(meter.values == [1, 0, 1, 0, 1, 0])
        // Bounded cardinality: no path, query or full URL in any dimension.
        let allDimensions = (metrics.counters.flatMap(\.dimensions) + metrics.timers.flatMap(\.dimensions))
        #expect(!allDimensions.contains { $0.1.contains("/") || $0.1.contains("secret") })
    }

    @Test func anUnknownMethodIsOther() async throws {
        let metrics = TestMetrics()
        var configuration = Session.Configuration()
        configuration.metrics = .enabled(factory: metrics)
        let session = Session(configuration: configuration)
        defer { Task { try await session.shutdown() } }
        let base = try await SharedTestServer.shared.baseURL()
        _ = await session.request(base + "/anything", method: HTTPRequest.Method("BREW")!).serializingData().response
        let methods = metrics.counters(label: "http.client.requests").map {
            Dictionary(uniqueKeysWithValues: $0.dimensions)["http.request.method"]
        }
        #expect(methods == ["_OTHER"])
    }
}

@Suite struct RequestTracingTests {
    private func session(tracer: W3CTestTracer) -> Session {
        var configuration = Session.Configuration()
        configuration.tracing = .tracer(tracer)
        return Session(configuration: configuration)
    }

    @Test func aClientSpanPerRequestWhoseContextIsSentAsTraceparent() async throws {
        let tracer = W3CTestTracer()
        let session = self.session(tracer: tracer)
        defer { Task { try await session.shutdown() } }
        let base = try await SharedTestServer.shared.baseURL()
        let echo = try await session.request(base + "/headers?token=t0ps3cret").serializingDecodable(HeadersEcho.self)
            .value
        let span = try #require(tracer.finishedSpans.first)
        #expect(tracer.finishedSpans.count == 1)
        #expect(span.operationName == "GET")
        #expect(span.kind == .client)
        #expect(span.parentSpanID == nil)
        #expect(echo.header("traceparent") == W3CTestTracer.traceparent(traceID: span.traceID, spanID: span.spanID))
        #expect(span.attributes["http.request.method"]?.toSpanAttribute() == "GET")
        #expect(span.attributes["url.full"]?.toSpanAttribute() == .string("\(base)/headers?token=REDACTED"))
        #expect(span.attributes["server.address"]?.toSpanAttribute() == "127.0.0.1")
        #expect(span.attributes["http.response.status_code"]?.toSpanAttribute() == .int64(200))
        #expect(span.attributes["http.request.resend_count"]?.toSpanAttribute() == .int64(0))
        #expect(span.status == nil)
        #expect(span.events.isEmpty)
    }

    @Test func theSpanIsAChildOfTheCallersSpan() async throws {
        let tracer = W3CTestTracer()
        let session = self.session(tracer: tracer)
        defer { Task { try await session.shutdown() } }
        let base = try await SharedTestServer.shared.baseURL()
        try await tracer.withSpan("parent") { _ in
            _ = try await session.request(base + "/get").serializingData().value
        }
        let spans = tracer.finishedSpans
        try #require(spans.count == 2)
        let parent = try #require(spans.first { $0.operationName == "parent" })
        let child = try #require(spans.first { $0.operationName == "GET" })
        #expect(child.parentSpanID == parent.spanID)
        #expect(child.traceID == parent.traceID)
    }

    @Test func retriesAndRedirectsAreEventsOfOneSpan() async throws {
        let tracer = W3CTestTracer()
        let session = self.session(tracer: tracer)
        defer { Task { try await session.shutdown() } }
        let base = try await SharedTestServer.shared.baseURL()
        let key = UUID().uuidString
        let policy = RetryPolicy(exponentialBackoffScale: 0.01, jitter: .none, retryBudget: nil)
        _ = try await session.request(base + "/flaky/\(key)?failures=1", interceptor: policy).validate()
            .serializingData().value
        _ = try await session.request(base + "/redirect/2").serializingData().value
        let spans = tracer.finishedSpans
        try #require(spans.count == 2)
        #expect(spans[0].events.map(\.name) == ["http.retry"])
        #expect(spans[0].events.first?.attributes["error.type"]?.toSpanAttribute() == "responseValidationFailed")
        #expect(spans[0].attributes["http.request.resend_count"]?.toSpanAttribute() == .int64(1))
        #expect(spans[1].events.map(\.name) == ["http.redirect", "http.redirect"])
        #expect(spans[1].events.last?.attributes["url.full"]?.toSpanAttribute() == .string("\(base)/get"))
        #expect(spans[1].events.first?.attributes["http.response.status_code"]?.toSpanAttribute() == .int64(302))
    }

    @Test func aFailureEndsTheSpanWithTheErrorStatus() async throws {
        let tracer = W3CTestTracer()
        let session = self.session(tracer: tracer)
        defer { Task { try await session.shutdown() } }
        let port = try Sockets.refusingPort()
        let error = await session.request("http://127.0.0.1:\(port)/get").serializingData().response.error
        #expect(error?.code == .connectionFailed)
        let span = try #require(tracer.finishedSpans.first)
        #expect(span.status?.code == .error)
        #expect(span.attributes["error.type"]?.toSpanAttribute() == "connectionFailed")
        #expect((span.errors.first?.error as? KiteError)?.code == .connectionFailed)
        #expect(span.attributes["http.response.status_code"] == nil)
    }

    @Test func anErrorStatusIsAnErrorSpanEvenWithoutValidation() async throws {
        let tracer = W3CTestTracer()
        let session = self.session(tracer: tracer)
        defer { Task { try await session.shutdown() } }
        let base = try await SharedTestServer.shared.baseURL()
        #expect(await session.request(base + "/status/503").serializingData().response.response?.status.code == 503)
        let span = try #require(tracer.finishedSpans.first)
        #expect(span.status?.code == .error)
        #expect(span.attributes["error.type"]?.toSpanAttribute() == "503")
        #expect(span.errors.isEmpty)
    }

    @Test func disabledTracingSendsNoContext() async throws {
        var configuration = Session.Configuration()
        configuration.tracing = .disabled
        let session = Session(configuration: configuration)
        defer { Task { try await session.shutdown() } }
        let base = try await SharedTestServer.shared.baseURL()
        let echo = try await session.request(base + "/headers").serializingDecodable(HeadersEcho.self).value
        #expect(echo.header("traceparent") == nil)
    }
}

extension HeadersEcho {
    /// A request header as the server saw it, by case-insensitive name.
    func header(_ name: String) -> String? {
        self.headers.first { $0.key.lowercased() == name.lowercased() }?.value
    }
}
