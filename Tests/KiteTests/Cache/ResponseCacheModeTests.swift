import Foundation
import HTTPTypes
import Kite
import MetricsTestKit
import Testing

/// Private and shared caches, metrics and the `Cache-Status` field.
@Suite struct ResponseCacheModeTests {
    @Test func aSharedCacheNeverStoresPrivateAndHonoursSMaxage() async throws {
        let shared = cachingSession(ResponseCache(memoryCapacity: 1 << 20, mode: .shared))
        let own = cachingSession(ResponseCache(memoryCapacity: 1 << 20, mode: .private))
        defer {
            Task {
                try await shared.shutdown()
                try await own.shutdown()
            }
        }
        // private: the client's own cache stores it, a gateway's does not.
        for (session, expected) in [(own, 1), (shared, 2)] {
            let probe = try await CacheProbe.make()
            let url = probe.url([("Cache-Control", "private, max-age=60")])
            _ = await session.request(url).serializingData().response
            _ = await session.request(url).serializingData().response
            #expect(try await probe.count() == expected)
        }
        // s-maxage=0 overrides max-age in a shared cache only.
        for (session, expected) in [(own, 1), (shared, 2)] {
            let probe = try await CacheProbe.make()
            let url = probe.url([("Cache-Control", "max-age=60, s-maxage=0")])
            _ = await session.request(url).serializingData().response
            _ = await session.request(url).serializingData().response
            #expect(try await probe.count() == expected)
        }
        // An authenticated request's response: a shared cache stores it only when the response allows it.
        for (directive, expected) in [("max-age=60", 2), ("public, max-age=60", 1), ("s-maxage=60", 1)] {
            let probe = try await CacheProbe.make()
            let url = probe.url([("Cache-Control", directive)])
            let headers: HTTPFields = [.authorization: "Bearer t0k3n"]
            _ = await shared.request(url, headers: headers).serializingData().response
            _ = await shared.request(url, headers: headers).serializingData().response
            #expect(try await probe.count() == expected, "\(directive)")
        }
    }

    @Test func theCacheCountsLookupsByResultAndStores() async throws {
        let metrics = TestMetrics()
        var configuration = Session.Configuration.default
        configuration.cache = ResponseCache(memoryCapacity: 1 << 20)
        configuration.metrics = .enabled(factory: metrics)
        let session = Session(configuration: configuration)
        defer { Task { try await session.shutdown() } }
        let probe = try await CacheProbe.make()
        let url = probe.url([("Cache-Control", "max-age=60")])
        let tagged = probe.url([("Cache-Control", "no-cache"), ("ETag", "\"m\"")])
        _ = await session.request(url).serializingData().response
        _ = await session.request(url).serializingData().response
        _ = await session.request(url).serializingData().response
        _ = await session.request(tagged).serializingData().response
        _ = await session.request(tagged).serializingData().response
        func lookups(_ result: String) throws -> Int64 {
            try metrics.expectCounter(
                "kite.http.client.cache.lookups",
                [("http.request.method", "GET"), ("kite.cache.result", result)]
            ).totalValue
        }
        #expect(try lookups("miss") == 2)
        #expect(try lookups("hit") == 2)
        #expect(try lookups("revalidated") == 1)
        #expect(metrics.counterTotal(label: "kite.http.client.cache.stores") == 2)
    }

    @Test func theCacheStatusFieldSaysWhatTheCacheDid() async throws {
        let session = cachingSession(ResponseCache(memoryCapacity: 1 << 20, addsCacheStatusField: true))
        defer { Task { try await session.shutdown() } }
        let probe = try await CacheProbe.make()
        let url = probe.url([("Cache-Control", "max-age=60")])
        let start = ContinuousClock.now
        let miss = await session.request(url).serializingData().response
        let hit = await session.request(url).serializingData().response
        let elapsed = Int(start.duration(to: .now).components.seconds)
        let status = try #require(hit.response?.headerFields[HTTPField.Name("Cache-Status")!])
        // The ttl is 60 less the stored response's age, at most the time since it was requested plus up to a second
        // (the server's Date is whole seconds), rounded down.
        let ttl = status.hasPrefix("Kite; hit; ttl=") ? Int(status.dropFirst("Kite; hit; ttl=".count)) : nil
        #expect(ttl.map { (58 - elapsed...60).contains($0) } == true, "\(status) after \(elapsed) s")
        #expect(miss.response?.headerFields[HTTPField.Name("Cache-Status")!] == "Kite; fwd=miss; fwd-status=200")
        let reload = await session.request(url).cachePolicy(.reloadIgnoringLocalCacheData).serializingData().response
        #expect(reload.response?.headerFields[HTTPField.Name("Cache-Status")!] == "Kite; fwd=request; fwd-status=200")
        let post = await session.request(url, method: .post).serializingData().response
        #expect(post.response?.headerFields[HTTPField.Name("Cache-Status")!] == "Kite; fwd=method; fwd-status=200")
        let varying = probe.url([("Cache-Control", "max-age=60"), ("Vary", "Accept"), ("X-V", "1")])
        _ = await session.request(varying, headers: [.accept: "a/b"]).serializingData().response
        let otherVariant = await session.request(varying, headers: [.accept: "c/d"]).serializingData().response
        #expect(
            otherVariant.response?.headerFields[HTTPField.Name("Cache-Status")!]
                == "Kite; fwd=vary-miss; fwd-status=200"
        )
        let tagged = probe.url([("Cache-Control", "no-cache"), ("ETag", "\"s\"")])
        _ = await session.request(tagged).serializingData().response
        let revalidated = await session.request(tagged).serializingData().response
        #expect(
            revalidated.response?.headerFields[HTTPField.Name("Cache-Status")!] == "Kite; fwd=stale; fwd-status=304"
        )
        // Off by default.
        let plain = cachingSession()
        defer { Task { try await plain.shutdown() } }
        #expect(
            await plain.request(url).serializingData().response.response?.headerFields[
                HTTPField.Name("Cache-Status")!
            ] == nil
        )
    }
}

/// HEAD, credentials and hostile headers with the cache in the path.
@Suite struct ResponseCacheEdgeTests {
    @Test func aHeadResponseFreshensTheStoredGet() async throws {
        let probe = try await CacheProbe.make()
        let cache = ResponseCache(memoryCapacity: 1 << 20)
        let session = cachingSession(cache)
        defer { Task { try await session.shutdown() } }
        // A stale GET with an ETag; a HEAD whose same ETag comes with max-age=600 makes it fresh (RFC 9111 §4.3.5).
        let url = probe.url([("Cache-Control", "max-age=0"), ("ETag", "\"h\"")])
        _ = await session.request(url).serializingData().response
        let fresher = probe.url([("Cache-Control", "max-age=0"), ("ETag", "\"h\"")])
        #expect(fresher == url)
        let headURL = try #require(URL(string: url))
        let stored = try #require(await cache.cachedResponses(for: headURL).first)
        #expect(stored.response.headerFields[.cacheControl] == "max-age=0")
        let head = await session.request(url, method: .head).serializingData(
            emptyResponseCodes: [200]
        ).response
        #expect(head.response?.status.code == 200)
        let after = try #require(await cache.cachedResponses(for: headURL).first)
        #expect(after.id == stored.id)
        #expect(after.responseTime > stored.responseTime, "the HEAD refreshed the stored GET's head")
        // A HEAD whose Content-Length says the body changed (this route echoes request fields) removes it.
        _ = await session.request(url, method: .head, headers: [.accept: "text/plain"]).serializingData(
            emptyResponseCodes: [200]
        ).response
        #expect(await cache.cachedResponses(for: headURL).isEmpty)
    }

    @Test func aStoredChallengeNeverAnswersTheRequestThatBringsCredentials() async throws {
        let session = cachingSession()
        defer { Task { try await session.shutdown() } }
        let base = try await SharedTestServer.shared.baseURL()
        // A 401 the server lets caches keep for a minute, then the same URL answered with credentials.
        let probe = try await CacheProbe.make()
        let challenge = probe.url([
            ("_status", "401"), ("WWW-Authenticate", "Basic realm=\"kite\""), ("Cache-Control", "max-age=60"),
        ])
        let first = await session.request(challenge).serializingData().response
        #expect(first.response?.status.code == 401)
        let again = await session.request(challenge).serializingData().response
        #expect(again.cacheStatus?.isFromCache == true, "without credentials the stored 401 answers")
        let withCredentials = await session.request(challenge, headers: [.authorization: "Basic a2l0ZTpwdw=="])
            .serializingData().response
        #expect(withCredentials.cacheStatus == .network)
        // Basic authentication through the pipeline keeps working with a cache in the path.
        let authenticated = await session.request("\(base)/basic-auth/kite/pw").authenticate(
            username: "kite",
            password: "pw"
        )
        .validate().serializingData().response
        #expect(authenticated.response?.status.code == 200, "\(String(describing: authenticated.error))")
        let twice = await session.request("\(base)/basic-auth/kite/pw").authenticate(username: "kite", password: "pw")
            .validate().serializingData().response
        #expect(twice.response?.status.code == 200, "\(String(describing: twice.error))")
    }

    @Test func hostileCachingHeadersNeitherCrashNorServeWrongly() async throws {
        let session = cachingSession()
        defer { Task { try await session.shutdown() } }
        let manyNames = (0..<1000).map { "X-Field-\($0)" }.joined(separator: ", ")
        let cases: [([(String, String)], Int)] = [
            ([("Cache-Control", "max-age=-60")], 2),
            ([("Cache-Control", "max-age=99999999999999999999999")], 1),
            ([("Cache-Control", "max-age=sixty")], 2),
            ([("Cache-Control", "max-age=60, max-age=0")], 2),
            ([("Cache-Control", "max-age=60"), ("Cache-Control", "max-age=60")], 1),
            ([("Expires", "yesterday")], 2),
            ([("Expires", "0")], 2),
            ([("Cache-Control", "max-age=60"), ("Vary", manyNames)], 2),
            ([("Cache-Control", "max-age=60"), ("Age", "-5")], 1),
        ]
        for (headers, expected) in cases {
            let probe = try await CacheProbe.make()
            let url = probe.url(headers)
            let first = await session.request(url).serializingData().response
            let second = await session.request(url).serializingData().response
            #expect(first.response?.status.code == 200 && second.response?.status.code == 200, "\(headers)")
            #expect(try await probe.count() == expected, "\(headers.map(\.1).joined(separator: " | ").prefix(80))")
        }
    }
}

/// Sharing a cache, and retries with the cache in the path.
@Suite struct ResponseCacheSharingTests {
    @Test func twoSessionsShareOneCache() async throws {
        let cache = ResponseCache(memoryCapacity: 1 << 20)
        let one = cachingSession(cache)
        let two = cachingSession(cache)
        defer {
            Task {
                try await one.shutdown()
                try await two.shutdown()
            }
        }
        let probe = try await CacheProbe.make()
        let url = probe.url([("Cache-Control", "max-age=60")])
        _ = await one.request(url).serializingData().response
        let fromTwo = await two.request(url).serializingData().response
        #expect(fromTwo.cacheStatus?.isFromCache == true)
        #expect(try await probe.count() == 1)
    }

    @Test func aRetriedRequestGoesThroughTheCacheAgainAndIsStored() async throws {
        var configuration = Session.Configuration.default
        configuration.cache = ResponseCache(memoryCapacity: 1 << 20)
        let session = Session(
            configuration: configuration,
            interceptor: RetryPolicy(retryLimit: 2, exponentialBackoffScale: 0.01)
        )
        defer { Task { try await session.shutdown() } }
        let probe = try await CacheProbe.make()
        // A 503 with max-age (storable and fresh), then 200: the retry asks the server, not the stored 503, and its
        // answer is stored and answers the next request.
        let url = probe.url([("Cache-Control", "max-age=60"), ("_status", "503"), ("_then", "200")])
        let first = await session.request(url).validate().serializingData().response
        #expect(first.response?.status.code == 200, "\(String(describing: first.error))")
        #expect(try decodeCached(first).count == 2)
        let second = await session.request(url).validate().serializingData().response
        #expect(second.cacheStatus?.isFromCache == true)
        #expect(try await probe.count() == 2)
    }
}
