import HTTPTypes
import Logging
import MetricsTestKit
import Testing

@testable import Kite

@Suite struct RedactionTests {
    @Test(arguments: [
        ("http://example.com/a", "http://example.com/a"),
        ("http://u:p@example.com/a?x=1", "http://example.com/a?x=1"),
        ("http://example.com/a?token=t&q=swift", "http://example.com/a?token=REDACTED&q=swift"),
        (
            "https://s3.example.com/o?X-Amz-Signature=abc&X-Amz-Credential=k%2Fday&x-id=GetObject",
            "https://s3.example.com/o?X-Amz-Signature=REDACTED&X-Amz-Credential=REDACTED&x-id=GetObject"
        ),
        (
            "http://e.com/?sig=1&Password=2&client_secret=3&page=4",
            "http://e.com/?sig=REDACTED&Password=REDACTED&client_secret=REDACTED&page=4"
        ),
        ("http://e.com/?code=1&key=2&monkey=3", "http://e.com/?code=REDACTED&key=REDACTED&monkey=3"),
        ("http://e.com/?flag&session_id=9#frag?token=x", "http://e.com/?flag&session_id=REDACTED#frag?token=x"),
        ("http://e.com/?%74oken=1", "http://e.com/?%74oken=REDACTED"),
        ("http://e.com/?a=1&&b=", "http://e.com/?a=1&&b="),
        (
            "http://e.com/?author=ann&auth=x&oauth_token=y",
            "http://e.com/?author=ann&auth=REDACTED&oauth_token=REDACTED"
        ),
    ])
    func urls(_ input: String, _ expected: String) {
        #expect(Redaction.url(input) == expected)
    }

    @Test func headerFieldsKeepOrderAndHideTheNamedOnes() {
        var fields = HTTPFields()
        fields.append(HTTPField(name: .authorization, value: "Bearer x"))
        fields.append(HTTPField(name: .accept, value: "text/plain"))
        fields.append(HTTPField(name: .setCookie, value: "a=1"))
        fields.append(HTTPField(name: .setCookie, value: "b=2"))
        let shown = Redaction.fields(fields, hiding: Redaction.defaultHeaderNames)
        #expect(shown.map(\.name) == ["authorization", "accept", "set-cookie", "set-cookie"])
        #expect(shown.map(\.value) == ["REDACTED", "text/plain", "REDACTED", "REDACTED"])
    }

    @Test func theDefaultListNamesTheIssuesHeaders() {
        let names = Set(Redaction.defaultHeaderNames.map(\.canonicalName))
        #expect(names == ["authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key"])
    }

    @Test func aSessionWithoutLoggingMetricsOrTracingHasNoTelemetry() {
        #expect(Session(configuration: .default).context.telemetry == nil)
        var quiet = Logger(label: "quiet")
        quiet.logLevel = .notice
        #expect(Session(configuration: .default, logger: quiet).context.telemetry == nil)
        var chatty = Logger(label: "chatty")
        chatty.logLevel = .info
        #expect(Session(configuration: .default, logger: chatty).context.telemetry?.logger != nil)
        var metered = Session.Configuration()
        metered.metrics = .enabled  // nothing is bootstrapped in the tests: swift-metrics' no-op factory
        #expect(Session(configuration: metered).context.telemetry == nil)
        metered.metrics = .enabled(factory: TestMetrics())
        let telemetry = Session(configuration: metered).context.telemetry
        #expect(telemetry?.metricsFactory != nil && telemetry?.logger == nil && telemetry?.tracer == nil)
    }
}
