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
        let miss = await session.request(url).serializingData().response
        let hit = await session.request(url).serializingData().response
        #expect(miss.response?.headerFields[HTTPField.Name("Cache-Status")!] == "Kite; fwd=miss")
        let status = try #require(hit.response?.headerFields[HTTPField.Name("Cache-Status")!])
        #expect(status == "Kite; hit; ttl=60" || status == "Kite; hit; ttl=59", "\(status)")
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
