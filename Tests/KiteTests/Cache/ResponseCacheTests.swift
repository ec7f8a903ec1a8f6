import Foundation
import HTTPTypes
import NIOConcurrencyHelpers
import Testing

@testable import Kite

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `/cached/{key}` resource of the in-process server with a key of its own, and the count of requests the
/// server got for it.
struct CacheProbe {
    let base: String
    let key = UUID().uuidString

    static func make() async throws -> CacheProbe {
        CacheProbe(base: try await SharedTestServer.shared.baseURL())
    }

    /// The resource's URL; `headers` become response header fields, `_`-options steer the server.
    func url(_ headers: [(String, String)]) -> String {
        guard var components = URLComponents(string: "\(self.base)/cached/\(self.key)") else { return "" }
        components.queryItems = headers.map { URLQueryItem(name: $0.0, value: $0.1) }
        // `+` and `;` are data here, not separators.
        let query = components.percentEncodedQuery ?? ""
        components.percentEncodedQuery = query.replacingOccurrences(of: "+", with: "%2B")
            .replacingOccurrences(of: ";", with: "%3B")
        return components.string ?? ""
    }

    /// How many requests the server got for the key.
    func count() async throws -> Int {
        struct Count: Decodable { let count: Int }
        return try await Session.suite.request("\(self.base)/cached-count/\(self.key)")
            .serializingDecodable(Count.self).value.count
    }
}

/// What `/cached` answers.
struct CachedBody: Decodable, Equatable {
    let key: String
    let count: Int
    let headers: [String: String]
}

/// A session with `cache` (a fresh memory cache by default), and what it got.
func cachingSession(
    _ cache: ResponseCache = ResponseCache(memoryCapacity: 4 << 20),
    policy: URLRequest.CachePolicy = .useProtocolCachePolicy,
    handler: (any CachedResponseHandler)? = nil,
    monitors: [any EventMonitor] = []
) -> Session {
    var configuration = Session.Configuration.default
    configuration.cache = cache
    configuration.requestCachePolicy = policy
    return Session(configuration: configuration, cachedResponseHandler: handler, eventMonitors: monitors)
}

extension DataResponse {
    var cacheStatus: ResponseCacheStatus? { self.metrics?.cacheStatus }
}

func decodeCached(_ response: DataResponse<Data, KiteError>) throws -> CachedBody {
    try JSONDecoder().decode(CachedBody.self, from: try response.result.get())
}

/// RFC 9111 through a session against the in-process server, which counts the requests it gets.
@Suite struct ResponseCacheTests {
    @Test func aFreshResponseIsAnsweredFromTheCacheWithItsAge() async throws {
        let probe = try await CacheProbe.make()
        let session = cachingSession()
        defer { Task { try await session.shutdown() } }
        let url = probe.url([("Cache-Control", "max-age=60")])
        let start = ContinuousClock.now
        let first = await session.request(url).serializingData().response
        let second = await session.request(url).serializingData().response
        let elapsed = Int(start.duration(to: .now).components.seconds)
        #expect(first.cacheStatus == .network)
        guard case .hit(let age) = second.cacheStatus else {
            Issue.record("expected a hit, got \(String(describing: second.cacheStatus))")
            return
        }
        // RFC 9111 §4.2.3: the time since it was requested or since the server dated it (whole seconds), whichever
        // is longer, never more. The in-process server (Hummingbird) dates responses from a clock it updates once a
        // second, which lags behind on a loaded machine: a parallel run saw age 5 after 3 s.
        let dated = try #require(first.response?.headerFields[.date].flatMap { CacheRules.httpDate($0, now: Date()) })
        let sinceDated = Int(Date().timeIntervalSince(dated).rounded(.up))
        #expect(
            (0...max(elapsed, sinceDated) + 1).contains(age),
            "age \(age) s after \(elapsed) s, \(sinceDated) s since dated"
        )
        #expect(second.response?.headerFields[.age] == String(age))
        #expect(second.response?.status.code == 200)
        #expect(second.data == first.data, "the stored body, byte for byte")
        #expect(try decodeCached(second).count == 1)
        #expect(try await probe.count() == 1, "the second request never reached the server")
    }

    @Test func noStoreIsNeverStoredAndNoCacheWithoutValidatorGoesToTheServer() async throws {
        let session = cachingSession()
        defer { Task { try await session.shutdown() } }
        for directive in ["no-store", "max-age=60, no-store", "private, no-store"] {
            let probe = try await CacheProbe.make()
            let url = probe.url([("Cache-Control", directive)])
            _ = await session.request(url).serializingData().response
            let second = await session.request(url).serializingData().response
            #expect(second.cacheStatus == .network, "\(directive)")
            #expect(try decodeCached(second).count == 2, "\(directive)")
        }
        // A request's own no-store: its response is not stored either.
        let probe = try await CacheProbe.make()
        let url = probe.url([("Cache-Control", "max-age=60")])
        _ = await session.request(url, headers: [.cacheControl: "no-store"]).serializingData().response
        _ = await session.request(url).serializingData().response
        #expect(try await probe.count() == 2)
    }

    @Test func anEntityTagIsRevalidatedAndA304ServesTheStoredBody() async throws {
        let probe = try await CacheProbe.make()
        let session = cachingSession()
        defer { Task { try await session.shutdown() } }
        let url = probe.url([("Cache-Control", "no-cache"), ("ETag", "\"v1\""), ("X-Version", "one")])
        let first = await session.request(url).serializingData().response
        let second = await session.request(url).serializingData().response
        #expect(second.cacheStatus == .revalidated)
        #expect(second.response?.status.code == 200, "the caller gets the stored 200, not the 304")
        #expect(second.data == first.data)
        #expect(try decodeCached(second).count == 1, "the body is the first response's")
        #expect(try await probe.count() == 2, "the server was asked, conditionally")
        // The server saw the stored tag in If-None-Match.
        let direct = try await Session.suite.request(url, headers: [.ifNoneMatch: "\"other\""])
            .serializingDecodable(CachedBody.self).value
        #expect(direct.headers["if-none-match"] == "\"other\"")
    }

    @Test func theConditionalRequestCarriesTheStoredValidators() async throws {
        let probe = try await CacheProbe.make()
        let session = cachingSession()
        defer { Task { try await session.shutdown() } }
        // max-age=0 and a Last-Modified but no ETag: the revalidation uses If-Modified-Since. The server answers
        // 200 when it does not see the exact date, so the new body shows the header it got.
        let url = probe.url([
            ("Cache-Control", "max-age=0"), ("Last-Modified", "Tue, 15 Nov 1994 12:45:26 GMT"),
        ])
        _ = await session.request(url).serializingData().response
        let second = await session.request(url).serializingData().response
        #expect(second.cacheStatus == .revalidated)
        #expect(try await probe.count() == 2)
        // Without a Last-Modified the server answers 200, and shows what it got.
        let other = try await CacheProbe.make()
        let tagged = other.url([("Cache-Control", "max-age=0"), ("ETag", "W/\"weak\"")])
        _ = await session.request(tagged).serializingData().response
        let again = await session.request(tagged).serializingData().response
        #expect(again.cacheStatus == .revalidated)
    }

    @Test func aVaryingResponseKeepsOneVariantPerRequestValue() async throws {
        let probe = try await CacheProbe.make()
        let session = cachingSession()
        defer { Task { try await session.shutdown() } }
        let url = probe.url([("Cache-Control", "max-age=60"), ("Vary", "Accept")])
        func get(_ accept: String) async throws -> (CachedBody, ResponseCacheStatus?) {
            let response = await session.request(url, headers: [.accept: accept]).serializingData().response
            return (try decodeCached(response), response.cacheStatus)
        }
        let (json, jsonStatus) = try await get("application/json")
        let (text, textStatus) = try await get("text/plain")
        #expect(jsonStatus == .network)
        #expect(textStatus == .network, "another Accept is another variant")
        let (jsonAgain, jsonAgainStatus) = try await get("application/json")
        let (textAgain, textAgainStatus) = try await get("text/plain")
        #expect(jsonAgainStatus?.isFromCache == true)
        #expect(textAgainStatus?.isFromCache == true)
        #expect(jsonAgain == json)
        #expect(textAgain == text)
        #expect(json.count == 1)
        #expect(text.count == 2)
        #expect(try await probe.count() == 2)
    }

    @Test func varyStarIsNeverServedFromTheCache() async throws {
        let probe = try await CacheProbe.make()
        let session = cachingSession()
        defer { Task { try await session.shutdown() } }
        let url = probe.url([("Cache-Control", "max-age=60"), ("Vary", "*")])
        _ = await session.request(url).serializingData().response
        let second = await session.request(url).serializingData().response
        #expect(second.cacheStatus == .network)
        #expect(try await probe.count() == 2)
    }

    @Test func anUnsafeMethodInvalidatesTheStoredResponse() async throws {
        let probe = try await CacheProbe.make()
        let session = cachingSession()
        defer { Task { try await session.shutdown() } }
        let url = probe.url([("Cache-Control", "max-age=60")])
        _ = await session.request(url).serializingData().response
        #expect(await session.request(url).serializingData().response.cacheStatus?.isFromCache == true)
        let post = await session.request(url, method: .post).serializingData().response
        #expect(post.response?.status.code == 200)
        let after = await session.request(url).serializingData().response
        #expect(after.cacheStatus == .network, "the POST's success removed the stored GET")
        #expect(try decodeCached(after).count == 3)
        // A failed POST leaves it.
        let failing = try await CacheProbe.make()
        let stored = failing.url([("Cache-Control", "max-age=60"), ("_then", "500")])
        _ = await session.request(stored).serializingData().response
        _ = await session.request(stored, method: .delete).serializingData().response
        #expect(await session.request(stored).serializingData().response.cacheStatus?.isFromCache == true)
    }

    @Test func theRequestCachePoliciesMeanWhatURLRequestDocuments() async throws {
        let session = cachingSession()
        defer { Task { try await session.shutdown() } }
        let probe = try await CacheProbe.make()
        let fresh = probe.url([("Cache-Control", "max-age=60"), ("ETag", "\"p\"")])
        _ = await session.request(fresh).serializingData().response

        let reload = await session.request(fresh).cachePolicy(.reloadIgnoringLocalCacheData).serializingData().response
        #expect(reload.cacheStatus == .network)
        #expect(try decodeCached(reload).headers["if-none-match"] == nil, "not even a conditional request")

        let remote = await session.request(fresh).cachePolicy(.reloadIgnoringLocalAndRemoteCacheData)
            .serializingData().response
        #expect(try decodeCached(remote).headers["cache-control"] == "no-cache")
        #expect(try decodeCached(remote).headers["pragma"] == "no-cache")

        let revalidating = await session.request(fresh).cachePolicy(.reloadRevalidatingCacheData)
            .serializingData().response
        #expect(revalidating.cacheStatus == .revalidated, "fresh, but asked the server anyway")
        #expect(try await probe.count() == 4)

        // Stale and without a validator: returnCacheDataElseLoad still answers from the cache.
        let staleProbe = try await CacheProbe.make()
        let stale = staleProbe.url([("Cache-Control", "max-age=0")])
        _ = await session.request(stale).serializingData().response
        let offline = await session.request(stale).cachePolicy(.returnCacheDataElseLoad).serializingData().response
        guard case .stale(.offlinePolicy, _) = offline.cacheStatus else {
            Issue.record("expected a stale answer, got \(String(describing: offline.cacheStatus))")
            return
        }
        let dontLoad = await session.request(stale).cachePolicy(.returnCacheDataDontLoad).serializingData().response
        #expect(dontLoad.cacheStatus?.isFromCache == true)
        #expect(try await staleProbe.count() == 1)

        // Nothing stored: returnCacheDataDontLoad fails, returnCacheDataElseLoad loads.
        let emptyProbe = try await CacheProbe.make()
        let empty = emptyProbe.url([("Cache-Control", "max-age=60")])
        let missing = await session.request(empty).cachePolicy(.returnCacheDataDontLoad).serializingData().response
        #expect(missing.error?.code == .cacheMiss)
        #expect(missing.error?.message.contains("returnCacheDataDontLoad") == true)
        let loaded = await session.request(empty).cachePolicy(.returnCacheDataElseLoad).serializingData().response
        #expect(loaded.cacheStatus == .network)
        #expect(try await emptyProbe.count() == 1)
    }

    @Test func aURLRequestsCachePolicyAndTheSessionsDefaultApply() async throws {
        let probe = try await CacheProbe.make()
        let session = cachingSession(policy: .reloadIgnoringLocalCacheData)
        defer { Task { try await session.shutdown() } }
        let url = probe.url([("Cache-Control", "max-age=60")])
        _ = await session.request(url).serializingData().response
        #expect(await session.request(url).serializingData().response.cacheStatus == .network, "session default")
        var urlRequest = URLRequest(url: try #require(URL(string: url)))
        urlRequest.cachePolicy = .returnCacheDataDontLoad
        let fromURLRequest = await session.request(urlRequest).serializingData().response
        #expect(fromURLRequest.cacheStatus?.isFromCache == true)
        let own = await session.request(urlRequest).cachePolicy(.reloadIgnoringLocalCacheData).serializingData()
            .response
        #expect(own.cacheStatus == .network, "the request's own policy wins")
        #expect(try await probe.count() == 3)
    }

    @Test func onlyIfCachedWithNothingStoredIsA504() async throws {
        let probe = try await CacheProbe.make()
        let session = cachingSession()
        defer { Task { try await session.shutdown() } }
        let response = await session.request(
            probe.url([("Cache-Control", "max-age=60")]),
            headers: [.cacheControl: "only-if-cached"]
        ).serializingData().response
        #expect(response.response?.status.code == 504)
        #expect(response.data?.isEmpty == true)
        #expect(try await probe.count() == 0)
    }

    @Test func staleIfErrorServesTheStoredResponseWhenTheServerFails() async throws {
        let probe = try await CacheProbe.make()
        let session = cachingSession()
        defer { Task { try await session.shutdown() } }
        let url = probe.url([("Cache-Control", "max-age=0, stale-if-error=60"), ("_then", "503")])
        let first = await session.request(url).serializingData().response
        let second = await session.request(url).serializingData().response
        guard case .stale(.ifError, _) = second.cacheStatus else {
            Issue.record("expected stale-if-error, got \(String(describing: second.cacheStatus))")
            return
        }
        #expect(second.response?.status.code == 200)
        #expect(second.data == first.data)
        #expect(try await probe.count() == 2)
        // Without stale-if-error the 503 is passed on.
        let plain = try await CacheProbe.make()
        let plainURL = plain.url([("Cache-Control", "max-age=0"), ("_then", "503")])
        _ = await session.request(plainURL).serializingData().response
        #expect(await session.request(plainURL).serializingData().response.response?.status.code == 503)
    }

    @Test func staleWhileRevalidateAnswersAtOnceAndRevalidatesOnceInTheBackground() async throws {
        let probe = try await CacheProbe.make()
        let session = cachingSession()
        defer { Task { try await session.shutdown() } }
        let url = probe.url([("Cache-Control", "max-age=0, stale-while-revalidate=60")])
        _ = await session.request(url).serializingData().response
        let second = await session.request(url).serializingData().response
        guard case .stale(.whileRevalidating, _) = second.cacheStatus else {
            Issue.record("expected stale-while-revalidate, got \(String(describing: second.cacheStatus))")
            return
        }
        #expect(try decodeCached(second).count == 1)
        // The background request arrives; then the entry is the new response.
        var count = try await probe.count()
        for _ in 0..<200 where count < 2 {
            count = try await probe.count()
        }
        #expect(count == 2)
        var newest = 1
        for _ in 0..<200 where newest < 2 {
            let response = await session.request(url).cachePolicy(.returnCacheDataDontLoad).serializingData().response
            newest = try decodeCached(response).count
        }
        #expect(newest == 2, "the background revalidation stored the new response")
    }

    @Test func concurrentRequestsForOneResourceMakeOneFetch() async throws {
        let probe = try await CacheProbe.make()
        let session = cachingSession()
        defer { Task { try await session.shutdown() } }
        let url = probe.url([("Cache-Control", "max-age=60"), ("_size", "200000")])
        let bodies = await withTaskGroup(of: Data?.self) { group in
            for _ in 0..<12 {
                group.addTask { await session.request(url).serializingData().response.data }
            }
            var bodies: [Data?] = []
            for await body in group { bodies.append(body) }
            return bodies
        }
        #expect(bodies.count == 12)
        #expect(bodies.allSatisfy { $0?.count == 200_000 })
        #expect(try await probe.count() == 1, "one fetch; the others waited and read the cache")
    }

    @Test func theCachedResponseHandlerDecidesWhatIsStored() async throws {
        let session = cachingSession(handler: ResponseCacher.doNotCache)
        defer { Task { try await session.shutdown() } }
        let probe = try await CacheProbe.make()
        let url = probe.url([("Cache-Control", "max-age=60")])
        _ = await session.request(url).serializingData().response
        _ = await session.request(url).serializingData().response
        #expect(try await probe.count() == 2, "the session's handler stores nothing")

        // A request's own handler replaces the session's, and may change the stored head.
        let modified = try await CacheProbe.make()
        let short = modified.url([("Cache-Control", "max-age=0")])
        let longer = ResponseCacher.modify { _, response in
            var stored = response
            stored.response.headerFields[.cacheControl] = "max-age=600"
            return stored
        }
        _ = await session.request(short).cacheResponse(using: longer).serializingData().response
        let second = await session.request(short).serializingData().response
        #expect(second.cacheStatus?.isFromCache == true)
        #expect(second.response?.headerFields[.cacheControl] == "max-age=600")
        #expect(try await modified.count() == 1)
    }

    @Test func aCachedResponsesCookiesAreNotAppliedAgain() async throws {
        let probe = try await CacheProbe.make()
        let session = cachingSession()
        defer { Task { try await session.shutdown() } }
        let url = probe.url([("Cache-Control", "max-age=60"), ("Set-Cookie", "flavour=cached; Path=/")])
        _ = await session.request(url).serializingData().response
        let base = probe.base
        _ = await session.request("\(base)/cookies/set?flavour=fresh").serializingData().response
        let hit = await session.request(url).serializingData().response
        #expect(hit.cacheStatus?.isFromCache == true)
        let jar = try #require(session.cookieJar)
        let cookie = jar.cookieHeader(for: try #require(URL(string: base + "/")))
        #expect(cookie == "flavour=fresh", "the stored Set-Cookie was applied once, when it came from the server")
    }

    @Test func aCachedRedirectIsFollowedFromTheCache() async throws {
        let target = try await CacheProbe.make()
        let redirect = try await CacheProbe.make()
        let session = cachingSession()
        defer { Task { try await session.shutdown() } }
        let targetURL = target.url([("Cache-Control", "max-age=60")])
        let url = redirect.url([("_status", "301"), ("Location", targetURL), ("Cache-Control", "max-age=60")])
        let first = await session.request(url).serializingData().response
        let second = await session.request(url).serializingData().response
        #expect(first.response?.status.code == 200)
        #expect(second.response?.status.code == 200)
        #expect(second.metrics?.redirectCount == 1)
        #expect(second.cacheStatus?.isFromCache == true)
        #expect(try await redirect.count() == 1)
        #expect(try await target.count() == 1)
    }

    @Test func aResponseCutMidBodyIsNeverStored() async throws {
        let cache = ResponseCache(memoryCapacity: 4 << 20)
        let session = cachingSession(cache)
        defer { Task { try await session.shutdown() } }
        for query in ["bytes=1000&length=5000", "bytes=1000&length=5000&mode=rst", "bytes=9000&length=20000&chunked=1"]
        {
            let url = try await FaultServer.url("/close-after?\(query)")
            let response = await session.request(url).serializingData().response
            #expect(response.error != nil, "\(query)")
            #expect(await cache.cachedResponses(for: try #require(URL(string: url))).isEmpty, "\(query)")
        }
        // The same route answered whole is stored (200 with an ETag is storable).
        let whole = try await FaultServer.url("/close-after?bytes=5000&length=5000")
        let response = await session.request(whole).serializingData().response
        #expect(response.data?.count == 5000)
        #expect(await cache.cachedResponses(for: try #require(URL(string: whole))).count == 1)
    }

    @Test func aBodyLargerThanTheEntryLimitGoesToTheCallerButNotTheCache() async throws {
        let cache = ResponseCache(memoryCapacity: 4 << 20, maximumEntrySize: 10_000)
        let session = cachingSession(cache)
        defer { Task { try await session.shutdown() } }
        let probe = try await CacheProbe.make()
        let url = probe.url([("Cache-Control", "max-age=60"), ("_size", "10001")])
        let first = await session.request(url).serializingData().response
        #expect(first.data?.count == 10_001)
        #expect(await cache.cachedResponses(for: try #require(URL(string: url))).isEmpty)
        let small = probe.url([("Cache-Control", "max-age=60"), ("_size", "10000")])
        _ = await session.request(small).serializingData().response
        #expect(await cache.cachedResponses(for: try #require(URL(string: small))).count == 1)
    }

    @Test func theEventMonitorHearsWhereEachResponseCameFrom() async throws {
        let probe = try await CacheProbe.make()
        let monitor = ClosureEventMonitor()
        let statuses = LockedStatuses()
        monitor.requestDidUseCache = { _, status in statuses.append(status) }
        let finished = AsyncStream<Void>.makeStream()
        monitor.requestDidFinish = { _ in finished.continuation.yield() }
        let session = cachingSession(monitors: [monitor])
        defer { Task { try await session.shutdown() } }
        let url = probe.url([("Cache-Control", "max-age=60")])
        _ = await session.request(url).serializingData().response
        _ = await session.request(url).serializingData().response
        var iterator = finished.stream.makeAsyncIterator()
        _ = await iterator.next()
        _ = await iterator.next()
        let seen = statuses.values
        #expect(seen.count == 2)
        #expect(seen.first == .network)
        #expect(seen.last?.isFromCache == true)
    }

    @Test func aSessionWithoutACacheReportsTheNetwork() async throws {
        let probe = try await CacheProbe.make()
        let url = probe.url([("Cache-Control", "max-age=60")])
        _ = await Session.suite.request(url).serializingData().response
        let second = await Session.suite.request(url).serializingData().response
        #expect(second.cacheStatus == .network)
        #expect(try await probe.count() == 2)
    }
}

final class LockedStatuses: Sendable {
    private let box = NIOLockedValueBox<[ResponseCacheStatus]>([])
    func append(_ status: ResponseCacheStatus) { self.box.withLockedValue { $0.append(status) } }
    var values: [ResponseCacheStatus] { self.box.withLockedValue { $0 } }
}

/// Downloads and streams with a cache in the path.
@Suite struct ResponseCacheKindsTests {
    @Test func aDownloadIsStoredAndServedFromTheCache() async throws {
        let probe = try await CacheProbe.make()
        let session = cachingSession()
        defer { Task { try await session.shutdown() } }
        let url = probe.url([("Cache-Control", "max-age=60"), ("_size", "70000")])
        let first = await session.download(url).serializingDownloadedFileURL().response
        let second = await session.download(url).serializingDownloadedFileURL().response
        let firstFile = try #require(first.value)
        let secondFile = try #require(second.value)
        defer {
            try? FileManager.default.removeItem(at: firstFile)
            try? FileManager.default.removeItem(at: secondFile)
        }
        #expect(first.metrics?.cacheStatus == .network)
        #expect(second.metrics?.cacheStatus.isFromCache == true)
        #expect(try Data(contentsOf: secondFile) == Data(repeating: UInt8(ascii: "k"), count: 70000))
        #expect(try await probe.count() == 1)
    }

    @Test func aStreamBypassesTheCacheUnlessItAsks() async throws {
        let probe = try await CacheProbe.make()
        let session = cachingSession()
        defer { Task { try await session.shutdown() } }
        let url = probe.url([("Cache-Control", "max-age=60")])
        _ = await session.request(url).serializingData().response
        var streamed = Data()
        for try await chunk in session.streamRequest(url).streamingData() { streamed.append(chunk) }
        #expect(try JSONDecoder().decode(CachedBody.self, from: streamed).count == 2, "went to the server")
        var cached = Data()
        for try await chunk in session.streamRequest(url).cachePolicy(.returnCacheDataElseLoad).streamingData() {
            cached.append(chunk)
        }
        #expect(try JSONDecoder().decode(CachedBody.self, from: cached).count == 1, "asked for the cache")
        #expect(try await probe.count() == 2)
    }
}

/// The AFNetworking facade with a cache.
@Suite struct ResponseCacheSessionManagerTests {
    @Test func theRequestSerializersCachePolicyApplies() async throws {
        let probe = try await CacheProbe.make()
        var configuration = Session.Configuration.default
        configuration.cache = ResponseCache(memoryCapacity: 1 << 20)
        let manager = HTTPSessionManager(configuration: configuration)
        defer { manager.invalidateSessionCancelingTasks(true, resetSession: false) }
        let url = probe.url([("Cache-Control", "max-age=60")])
        _ = try await manager.get(url)
        let (_, cached) = try await manager.get(url)
        #expect((cached as? [String: Any])?["count"] as? Int == 1, "the second GET came from the cache")
        manager.requestSerializer.cachePolicy = .reloadIgnoringLocalCacheData
        let (_, reloaded) = try await manager.get(url)
        #expect((reloaded as? [String: Any])?["count"] as? Int == 2)
        #expect(try await probe.count() == 2)
    }
}

/// What the documentation's review found, pinned down.
@Suite struct ResponseCacheReviewTests {
    @Test func staleIfErrorIsForTheFourErrorStatusesOnly() async throws {
        let session = cachingSession()
        defer { Task { try await session.shutdown() } }
        for (status, stale) in [(500, true), (502, true), (504, true), (501, false), (505, false)] {
            let probe = try await CacheProbe.make()
            let url = probe.url([("Cache-Control", "max-age=0, stale-if-error=60"), ("_then", String(status))])
            _ = await session.request(url).serializingData().response
            let second = await session.request(url).serializingData().response
            #expect((second.response?.status.code == 200) == stale, "\(status)")
        }
    }

    @Test func reloadingIgnoringRemoteDataKeepsTheRequestsOwnDirectives() async throws {
        let probe = try await CacheProbe.make()
        let session = cachingSession()
        defer { Task { try await session.shutdown() } }
        let url = probe.url([("Cache-Control", "max-age=60")])
        let response = await session.request(url, headers: [.cacheControl: "max-stale=5"])
            .cachePolicy(.reloadIgnoringLocalAndRemoteCacheData).serializingData().response
        #expect(try decodeCached(response).headers["cache-control"] == "max-stale=5, no-cache")
    }

    @Test func anUnsafeStreamRequestStillInvalidates() async throws {
        let probe = try await CacheProbe.make()
        let session = cachingSession()
        defer { Task { try await session.shutdown() } }
        let url = probe.url([("Cache-Control", "max-age=60")])
        _ = await session.request(url).serializingData().response
        for try await _ in session.streamRequest(url, method: .post).streamingData() {}
        #expect(await session.request(url).serializingData().response.cacheStatus == .network)
    }

    @Test func theEntryLimitIsWhatATierCanKeep() {
        #expect(ResponseCache(memoryCapacity: 1 << 20, maximumEntrySize: 10 << 20).maximumEntrySize == 1 << 20)
        #expect(ResponseCache(memoryCapacity: 1 << 20).maximumEntrySize == (1 << 20) / 20)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kite-limit-\(UUID())")
        #expect(
            ResponseCache(memoryCapacity: 0, diskCapacity: 100 << 20, directory: directory).maximumEntrySize
                == (100 << 20) / 20
        )
    }
}

/// A response a tier cannot keep never costs the one it would have replaced.
@Suite struct ResponseCacheReplacementTests {
    @Test func aResponseTooLargeForTheMemoryTierLeavesTheStoredOne() async throws {
        let probe = try await CacheProbe.make()
        let cache = ResponseCache(memoryCapacity: 2500, maximumEntrySize: 2500)
        let session = cachingSession(cache)
        defer { Task { try await session.shutdown() } }
        let url = probe.url([("Cache-Control", "max-age=60")])
        _ = await session.request(url).serializingData().response
        // The route echoes request fields: this reload's body is about 2,100 bytes, under the entry limit, but with
        // its head it does not fit the tier.
        let padded = await session.request(
            url,
            headers: [HTTPField.Name("X-Pad")!: String(repeating: "p", count: 2000)]
        )
        .cachePolicy(.reloadIgnoringLocalCacheData).serializingData().response
        #expect((2000..<2500).contains(padded.data?.count ?? 0))
        let after = await session.request(url).serializingData().response
        #expect(after.cacheStatus?.isFromCache == true, "the first response is still stored")
        #expect(try decodeCached(after).count == 1)
    }
}
