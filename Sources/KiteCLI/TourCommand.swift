import ArgumentParser
import Foundation
import HTTPTypes
import Kite
import KiteOpenAPI
import KiteTestServer
import Logging
import NIOConcurrencyHelpers
import OpenAPIRuntime

/// `kite tour`: starts the test server on a loopback port and walks through real requests.
struct TourCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tour",
        abstract: "Walk through Kite's features against a local test server (offline)."
    )

    struct Echo: Decodable, Sendable {
        let args: [String: String]
        let json: [String: String]?
        let url: String
    }

    struct Login: Encodable, Sendable {
        let email: String
        let password: String
    }

    func run() async throws {
        let server = try await KiteTestServer.start()
        let base = server.baseURL
        let session = Session.default
        print("Kite \(kiteVersion) tour against the test server at \(base)\n")

        var surprises: [String] = []
        func check(_ ok: Bool, _ what: String) {
            if !ok { surprises.append(what) }
        }

        let query = session.request("\(base)/get", parameters: ["q": "swift nio", "page": 2])
        let queryResponse = await Self.show("1. GET with query parameters, validated and decoded", query) {
            await query.validate().serializingDecodable(Echo.self).response
        }
        check(queryResponse.value?.args == ["page": "2", "q": "swift nio"], "query parameters did not round-trip")

        let post = session.request(
            "\(base)/post",
            method: .post,
            parameters: Login(email: "a@example.com", password: "secret"),
            encoder: JSONParameterEncoder.default,
            headers: [.accept: "application/json"]
        )
        let postResponse = await Self.show("2. POST an Encodable as JSON, decode the echo", post) {
            await post.validate().serializingDecodable(Echo.self).response
        }
        check(postResponse.value?.json?["email"] == "a@example.com", "the JSON body did not round-trip")

        let teapot = session.request("\(base)/status/418")
        let teapotResponse = await Self.show("3. A validation failure, as a readable KiteError", teapot) {
            await teapot.validate(statusCode: 200..<300).serializingString().response
        }
        check(teapotResponse.error?.code == .responseValidationFailed, "status 418 was not reported as invalid")

        let redirect = session.request("\(base)/redirect/3")
        let redirectResponse = await Self.show("4. Three redirects, followed", redirect) {
            await redirect.validate().serializingDecodable(Echo.self).response
        }
        print(
            "   landed on \(redirectResponse.url?.absoluteString ?? "?") after \(redirectResponse.metrics?.redirectCount ?? 0) redirects\n"
        )
        check(redirectResponse.metrics?.redirectCount == 3, "the redirects were not followed")

        let gzip = session.request("\(base)/gzip")
        let gzipResponse = await Self.show("5. A gzip body, decoded on the fly", gzip) {
            await gzip.validate().serializingJSON().response
        }
        check(gzipResponse.value?["gzipped"] == .bool(true), "the gzip body was not decoded")

        let slow = session.request("\(base)/delay/3") { $0.timeout = .seconds(1) }
        let slowResponse = await Self.show("6. A 1 s total timeout against a 3 s response", slow) {
            await slow.serializingData().response
        }
        check(slowResponse.error?.timeout == .total, "the total timeout did not fire")

        let refused = session.upload(Data(count: 4 * 1024 * 1024), to: "\(base)/status/413")
        let refusedResponse = await Self.show("7. A 4 MiB upload the server refuses (413) before reading it", refused) {
            await refused.serializingData(emptyResponseCodes: [413]).response
        }
        check(
            refusedResponse.response?.status.code == 413 || refusedResponse.error?.code == .connectionLost,
            "the early answer to the upload was not reported"
        )

        let policy = RetryPolicy(exponentialBackoffScale: 0.05)
        let flaky = session.request("\(base)/flaky/tour-\(UUID().uuidString)?failures=2", interceptor: policy)
        let flakyResponse = await Self.show("8. A flaky endpoint (two 503s, then 200), retried by RetryPolicy", flaky) {
            await flaky.validate().serializingData().response
        }
        print("   succeeded after \(flaky.retryCount) retries\n")
        check(flakyResponse.response?.status.code == 200 && flaky.retryCount == 2, "the retries did not happen")

        let digest = session.request("\(base)/digest-auth/auth/kite/s3cret/SHA-256")
            .authenticate(username: "kite", password: "s3cret")
        let digestResponse = await Self.show("9. A Digest (SHA-256) challenge, answered", digest) {
            await digest.validate().serializingData().response
        }
        check(digestResponse.response?.status.code == 200, "the Digest challenge was not answered")

        // A session of its own that logs each request (secrets redacted) and reports its connections.
        var logger = Logger(label: "tour") { StreamLogHandler.standardOutput(label: $0) }
        logger.logLevel = .info
        var observed = Session.Configuration()
        observed.collectsConnectionMetrics = true
        let observing = Session(configuration: observed, logger: logger)
        let logged = observing.request("\(base)/get?q=kite&access_token=abc123")
        let first = await Self.show("10. A logged request (swift-log, token redacted) and its connection", logged) {
            await logged.validate().serializingData().response
        }
        let second = await observing.request("\(base)/get").validate().serializingData().response
        print("   first:  \(first.metrics?.connection.map(String.init(describing:)) ?? "none")")
        print("   second: \(second.metrics?.connection.map(String.init(describing:)) ?? "none")\n")
        check(
            first.metrics?.connection?.isReused == false && second.metrics?.connection?.isReused == true,
            "the second request did not reuse the first one's connection"
        )
        try await observing.shutdown()

        // HTTPS with a private CA: a pinned intermediate passes, an expired certificate is refused by name.
        let authority = try TestCertificateAuthority()
        let secure = try await KiteTestServer.start(tls: .init(authority: authority, certificate: .leaf))
        let expired = try await KiteTestServer.start(tls: .init(authority: authority, certificate: .expired))
        var trusting = Session.Configuration()
        trusting.tls.trustRoots = .certificates([authority.root.certificate])
        let pinning = Session(
            configuration: trusting,
            serverTrustManager: ServerTrustManager(evaluators: [
                "127.0.0.1": PinnedCertificatesTrustEvaluator(certificates: [authority.intermediate.certificate])
            ])
        )
        let pinned = pinning.request("\(secure.baseURL)/get")
        let pinnedResponse = await Self.show("11. HTTPS pinned to the private CA's intermediate", pinned) {
            await pinned.validate().serializingData().response
        }
        let refusedTLS = pinning.request("\(expired.baseURL)/get")
        let refusedTLSResponse = await Self.show("12. An expired certificate, refused with its reason", refusedTLS) {
            await refusedTLS.serializingData().response
        }
        check(pinnedResponse.response?.status.code == 200, "the pinned HTTPS request failed")
        check(refusedTLSResponse.error?.code == .serverTrustEvaluationFailed, "the expired certificate was accepted")
        try await pinning.shutdown()
        try await secure.shutdown()
        try await expired.shutdown()

        // AFNetworking code, ported line by line: a manager with a base URL and success/failure closures.
        let manager = HTTPSessionManager(baseURL: URL(string: base))
        print("== 13. AFNetworking's GET:parameters:headers:progress:success:failure: on HTTPSessionManager")
        let ported: String = await withCheckedContinuation { continuation in
            manager.get(
                "get",
                parameters: ["q": "afnetworking", "tags": ["a", "b"]],
                headers: nil,
                progress: nil,
                success: { task, responseObject in
                    let args = (responseObject as? [String: Any])?["args"] as? [String: Any] ?? [:]
                    let url = task.request?.url?.absoluteString ?? ""
                    continuation.resume(returning: "\(url)\n-> args as [String: Any]: \(args.keys.sorted())")
                },
                failure: { _, error in continuation.resume(returning: "-> failure: \(error)") }
            )
        }
        print("   \(ported)")
        let refusedObject: KiteError? = await withCheckedContinuation { continuation in
            manager.get(
                "html",
                parameters: nil,
                headers: nil,
                progress: nil,
                success: { _, _ in continuation.resume(returning: nil) },
                failure: { _, error in continuation.resume(returning: error) }
            )
        }
        print("   /html -> failure: \(refusedObject.map(String.init(describing:)) ?? "none")")
        print("      error.responseBody: \(refusedObject?.responseBody?.count ?? 0) bytes kept\n")
        check(ported.contains("[\"q\", \"tags[]\"]"), "the ported GET did not give the parsed JSON")
        check(refusedObject?.code == .responseValidationFailed, "the JSON serializer accepted text/html")

        let image = session.request("\(base)/image/png")
        let imageResponse = await Self.show("14. An image's format and pixel size, read from its header", image) {
            await image.serializingImage().response
        }
        print("   \(imageResponse.value.map(String.init(describing:)) ?? "no image")\n")
        check(imageResponse.value?.format == .png, "the PNG was not recognised")

        // Reachability from the kernel's routing tables (netlink on Linux): no traffic is sent to find out.
        print("== 15. Reachability of the network and of the test server, from the kernel's tables")
        let network = NetworkReachabilityManager()?.status
        let loopback = NetworkReachabilityManager(host: "127.0.0.1")?.status
        print("   network: \(network.map(String.init(describing:)) ?? "not available")")
        print("   127.0.0.1: \(loopback.map(String.init(describing:)) ?? "not available")\n")
        check(loopback == .reachable(.ethernetOrWiFi), "the loopback address was not reachable")

        // Cookies: /cookies/set answers 302 with Set-Cookie; the redirected request carries the cookie back.
        let cookies = session.request("\(base)/cookies/set?flavour=oat")
        let cookieResponse = await Self.show("16. A cookie set by a redirect, sent back by the session's jar", cookies)
        {
            await cookies.validate().serializingJSON().response
        }
        check(cookieResponse.value?["cookies"]?["flavour"] == .string("oat"), "the cookie did not come back")

        // Proxies: the environment's rules, as curl applies them (here with given variables, not the process's).
        print("== 17. The proxy each URL would go through, by curl's rules for http_proxy, https_proxy and no_proxy")
        let variables = [
            "https_proxy": "http://me:secret@proxy.corp:3128", "http_proxy": "socks5h://127.0.0.1:1080",
            "no_proxy": ".internal,10.0.0.0/8",
        ]
        print("   \(variables.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))")
        let proxies = ProxyConfiguration.environment(variables: variables)
        var chosen: [String] = []
        for target in ["https://api.example.com/", "http://example.com/", "https://db.internal/", "http://10.1.2.3/"] {
            let proxy = (try? proxies.proxy(for: URL(string: target)!)).flatMap { $0 }
            chosen.append(proxy?.absoluteString ?? "direct")
            print("   \(target) -> \(proxy?.absoluteString ?? "direct")")
        }
        print()
        check(
            chosen == ["http://proxy.corp:3128", "socks5://127.0.0.1:1080", "direct", "direct"],
            "the proxies were not chosen by the rules"
        )

        // Trust: a server whose certificate the handshake refuses, and the reason Kite reads from the chain it
        // presents (over a second connection along the request's route, refused before any request byte).
        let selfSigned = try await KiteTestServer.start(
            host: "127.0.0.1",
            port: 0,
            tls: KiteTestServer.TLSOptions(authority: authority, certificate: .selfSigned)
        )
        let untrusted = session.request("\(selfSigned.baseURL)/get")
        let refusal = await Self.show("18. A self-signed server refused, the reason named", untrusted) {
            await untrusted.serializingData().response
        }
        check(refusal.error?.message.contains("is self-signed") == true, "the trust failure was not explained")
        try await selfSigned.shutdown()

        // Alamofire's closure form of a streamed body, decoded as JSON one line at a time as the lines arrive.
        print("== 19. JSON lines decoded as they stream (responseStreamDecodable)")
        struct Line: Decodable, Sendable { let id: Int }
        let ids: [Int] = await withCheckedContinuation { continuation in
            let seen = NIOLockedValueBox([Int]())
            session.streamRequest("\(base)/stream/3").responseStreamDecodable(of: Line.self) { stream in
                if let line = stream.value { seen.withLockedValue { $0.append(line.id) } }
                if stream.completion != nil { continuation.resume(returning: seen.withLockedValue { $0 }) }
            }
        }
        print("   ids as they arrived: \(ids)\n")
        check(ids == [0, 1, 2], "the streamed JSON lines were not decoded in order")

        // Every unfinished request of a session cancelled at once, as Alamofire's cancelAllRequests does.
        print("== 20. Two 10 s requests, cancelled together by cancelAllRequests")
        let busy = Session()
        let long = [busy.request("\(base)/drip?duration=10&numbytes=10"), busy.request("\(base)/delay/10")]
        let tasks = long.map { $0.serializingData() }
        busy.cancelAllRequests()
        var cancelledCodes: [String] = []
        for task in tasks { cancelledCodes.append(await task.response.error.map { "\($0.code)" } ?? "finished") }
        print("   \(cancelledCodes.joined(separator: ", "))\n")
        check(cancelledCodes == ["cancelled", "cancelled"], "cancelAllRequests did not cancel both")
        try await busy.shutdown()

        // The response cache (RFC 9111): the same GET twice, the second from the cache; then a response that must be
        // revalidated, answered by the server's 304 and served from the cache, each with where it came from.
        print("== 21. A response cache: a fresh hit, then a 304 revalidation")
        var cachingConfiguration = Session.Configuration.default
        cachingConfiguration.cache = ResponseCache(memoryCapacity: 1 << 20)
        let caching = Session(configuration: cachingConfiguration)
        var cacheStatuses: [ResponseCacheStatus] = []
        let revalidated = "/cached/kite-tour?Cache-Control=no-cache&ETag=%22v1%22"
        for path in ["/cache/60", "/cache/60", revalidated, revalidated] {
            let response = await caching.request("\(base)\(path)").serializingData().response
            let status = response.metrics?.cacheStatus ?? .network
            cacheStatuses.append(status)
            let code = response.response.map { "\($0.status.code)" } ?? "no response"
            print("   GET \(path) -> \(code), \(status)")
        }
        print()
        check(
            cacheStatuses.map(\.isFromCache) == [false, true, false, true] && cacheStatuses.last == .revalidated,
            "the cache did not answer as described"
        )
        try await caching.shutdown()

        // What a client made by swift-openapi-generator does with its transport: a head and a streamed body in,
        // a head and a streamed body out, through the session's pipeline (KiteOpenAPI's KiteClientTransport).
        print("== 22. A generated client's transport: server-sent events streamed through the session")
        let transport = KiteClientTransport(session: session)
        let eventsRequest = HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/sse?count=2")
        let (eventsHead, eventsBody) = try await transport.send(
            eventsRequest,
            body: nil,
            baseURL: URL(string: base)!,
            operationID: "serverSentEvents"
        )
        var eventData: [String] = []
        for try await event in eventsBody!.asDecodedServerSentEvents() {
            if let data = event.data { eventData.append(data.replacingOccurrences(of: "\n", with: " / ")) }
        }
        print("   GET /sse?count=2 -> \(eventsHead.status.code), events: \(eventData.joined(separator: " | "))\n")
        check(eventsHead.status.code == 200 && eventData.count == 3, "the transport did not stream three events")

        try await server.shutdown()
        if surprises.isEmpty {
            print("Tour complete: every step behaved as described.")
        } else {
            print("Tour finished with surprises: \(surprises.joined(separator: "; "))")
            throw ExitCode(1)
        }
    }

    /// Prints the step's title and cURL line, runs it, then prints status, time and a short body or the error.
    private static func show<Value: Sendable>(
        _ title: String,
        _ request: DataRequest,
        _ run: () async -> DataResponse<Value, KiteError>
    ) async -> DataResponse<Value, KiteError> {
        print("== \(title)")
        print(request.cURLDescription())
        let response = await run()
        let time = response.metrics.map { " in \($0.totalDuration.milliseconds) ms" } ?? ""
        if let head = response.response {
            print("-> \(ResponsePrinter.statusLine(head))\(time)")
        }
        if let data = response.data, let head = response.response, !data.isEmpty {
            let body = ResponsePrinter.body(data, contentType: head.headerFields[.contentType], limit: 240)
            print(
                body.split(separator: "\n", omittingEmptySubsequences: false).map { "   \($0)" }.joined(separator: "\n")
            )
        }
        if let error = response.error {
            print("-> error (\(error.code))\(time): \(error)")
        }
        print()
        return response
    }
}

extension Duration {
    fileprivate var milliseconds: Int64 {
        let (seconds, attoseconds) = self.components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
