import Foundation
import HTTPTypes
import Kite
import Testing

/// The cache against nginx, a server no one here wrote, with its defaults: `ETag` and `Last-Modified` on static
/// files, `304` to conditional requests, no `Cache-Control`, so freshness is heuristic (RFC 9111 §4.2.2).
@Suite(.enabled(if: ProxyProcess.nginxAvailable)) struct ResponseCacheNginxTests {
    @Test func nginxsValidatorsRevalidateAndItsLastModifiedGivesHeuristicFreshness() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("kite-nginx-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: root.path)
        defer { try? FileManager.default.removeItem(at: root) }
        let new = root.appendingPathComponent("new.txt")
        let old = root.appendingPathComponent("old.txt")
        try Data("version one\n".utf8).write(to: new)
        try Data("an old file\n".utf8).write(to: old)
        // Modified "now" by its Last-Modified: a second boundary between the write and nginx's Date would give it a
        // tenth of a second of heuristic freshness, so it is dated a little ahead (a future date gives none).
        try FileManager.default.setAttributes(
            [.modificationDate: Date().addingTimeInterval(5)],
            ofItemAtPath: new.path
        )
        // Ten days old: a tenth of its age, capped at a day, is its heuristic freshness.
        try FileManager.default.setAttributes(
            [.modificationDate: Date().addingTimeInterval(-10 * 86_400)],
            ofItemAtPath: old.path
        )
        let nginx = try await ProxyProcess.start(.nginx(root: root))
        defer { nginx.stop() }
        let session = cachingSession()
        defer { Task { try await session.shutdown() } }
        let base = "http://127.0.0.1:\(nginx.port)"

        // No freshness, so the second GET is revalidated and nginx answers 304.
        let first = await session.request("\(base)/new.txt").serializingString().response
        #expect(first.value == "version one\n")
        #expect(first.response?.headerFields[.eTag]?.hasPrefix("\"") == true, "nginx sends a strong ETag")
        let second = await session.request("\(base)/new.txt").serializingString().response
        #expect(second.cacheStatus == .revalidated)
        #expect(second.value == "version one\n")
        // The file changes: the revalidation gets the new body, which replaces the stored one.
        try Data("version two, longer\n".utf8).write(to: new)
        try FileManager.default.setAttributes(
            [.modificationDate: Date().addingTimeInterval(60)],
            ofItemAtPath: new.path
        )
        let third = await session.request("\(base)/new.txt").serializingString().response
        #expect(third.cacheStatus == .network)
        #expect(third.value == "version two, longer\n")
        let fourth = await session.request("\(base)/new.txt").serializingString().response
        #expect(fourth.cacheStatus == .revalidated)
        #expect(fourth.value == "version two, longer\n")

        // Ten days old: fresh for a day by heuristic, so answered without asking nginx.
        _ = await session.request("\(base)/old.txt").serializingString().response
        let hit = await session.request("\(base)/old.txt").serializingString().response
        guard case .hit = hit.cacheStatus else {
            Issue.record("expected a heuristic hit, got \(String(describing: hit.cacheStatus))")
            return
        }
        #expect(hit.value == "an old file\n")
    }
}
