import Dispatch
import Foundation
import Kite
import NIOConcurrencyHelpers
import Testing

/// `ClosureEventMonitor`, and the progress and serialization events every monitor gets.
@Suite struct ClosureEventMonitorTests {
    /// A monitor whose closures record events and signal when the `until` event arrives.
    final class Recorded: Sendable {
        let monitor = ClosureEventMonitor()
        let events = NIOLockedValueBox<[String]>([])
        let uploads = NIOLockedValueBox<[TransferProgress]>([])
        let downloads = NIOLockedValueBox<[TransferProgress]>([])
        let done = AsyncStream<Void>.makeStream()

        init(until last: String) {
            let record: @Sendable (String) -> Void = { [events, done] event in
                events.withLockedValue { $0.append(event) }
                if event.hasPrefix(last) { done.continuation.yield() }
            }
            self.monitor.requestDidCreate = { _ in record("created") }
            self.monitor.requestDidResume = { _ in record("resumed") }
            self.monitor.requestDidReceiveResponse = { _, response in record("response \(response.status.code)") }
            self.monitor.requestWillFollowRedirect = { _, next, _ in record("redirect \(next.path ?? "")") }
            self.monitor.requestDidFinish = { request in record("finished \(request.response?.status.code ?? 0)") }
            self.monitor.requestDidUpdateUploadProgress = { [uploads] _, progress in
                uploads.withLockedValue { $0.append(progress) }
            }
            self.monitor.requestDidUpdateDownloadProgress = { [downloads] _, progress in
                downloads.withLockedValue { $0.append(progress) }
            }
            self.monitor.requestDidParseResponse = { _, response in
                record("parsed \(response.value.map { "\($0)" } ?? "failure")")
            }
            self.monitor.downloadRequestDidParseResponse = { _, response in
                let name = (response.value as? URL)?.lastPathComponent ?? "failure"
                record("parsed download \(name)")
            }
        }

        /// The events once the awaited one has arrived.
        func wait() async -> [String] {
            var iterator = self.done.stream.makeAsyncIterator()
            await iterator.next()
            return self.events.withLockedValue { $0 }
        }
    }

    @Test func eventsInOrderEndingWithOneParseEventPerHandler() async throws {
        let recorded = Recorded(until: "parsed")
        let session = Session(configuration: .default, eventMonitors: [recorded.monitor])
        defer { Task { try await session.shutdown() } }
        let base = try await SharedTestServer.shared.baseURL()
        let text = try await session.request(base + "/redirect-to?url=/robots.txt").serializingString().value
        #expect(
            await recorded.wait() == [
                "created", "resumed", "response 302", "redirect /robots.txt", "response 200", "finished 200",
                "parsed \(text)",
            ]
        )
    }

    @Test func uploadAndDownloadProgressReachTheMonitorInOrder() async throws {
        let recorded = Recorded(until: "parsed")
        let session = Session(configuration: .default, eventMonitors: [recorded.monitor])
        defer { Task { try await session.shutdown() } }
        let base = try await SharedTestServer.shared.baseURL()
        let body = Data(repeating: 7, count: 256 * 1024)
        _ = try await session.upload(body, to: base + "/anything").serializingData().value
        _ = await recorded.wait()
        let uploads = recorded.uploads.withLockedValue { $0 }
        #expect(uploads.last == TransferProgress(completedBytes: 262_144, totalBytes: 262_144))
        #expect(zip(uploads, uploads.dropFirst()).allSatisfy { $0.completedBytes < $1.completedBytes })

        let second = Recorded(until: "parsed")
        let downloading = Session(configuration: .default, eventMonitors: [second.monitor])
        defer { Task { try await downloading.shutdown() } }
        let data = try await downloading.request(base + "/bytes/100000").serializingData().value
        _ = await second.wait()
        let downloads = second.downloads.withLockedValue { $0 }
        #expect(data.count == 100_000)
        #expect(downloads.last == TransferProgress(completedBytes: 100_000, totalBytes: 100_000))
        #expect(zip(downloads, downloads.dropFirst()).allSatisfy { $0.completedBytes < $1.completedBytes })
        #expect(second.uploads.withLockedValue { $0 }.isEmpty)
    }

    @Test func aDownloadsParseEventCarriesItsFile() async throws {
        let recorded = Recorded(until: "parsed download")
        let session = Session(configuration: .default, eventMonitors: [recorded.monitor])
        defer { Task { try await session.shutdown() } }
        let base = try await SharedTestServer.shared.baseURL()
        let url = try await session.download(base + "/bytes/64").serializingDownloadedFileURL().value
        defer { try? FileManager.default.removeItem(at: url) }
        let events = await recorded.wait()
        #expect(events.last == "parsed download \(url.lastPathComponent)")
        #expect(recorded.downloads.withLockedValue { $0 }.last == TransferProgress(completedBytes: 64, totalBytes: 64))
    }

    @Test func aClosureSetAfterTheSessionIsMadeIsUsed() async throws {
        let monitor = ClosureEventMonitor()
        let session = Session(configuration: .default, eventMonitors: [monitor])
        defer { Task { try await session.shutdown() } }
        let finished = AsyncStream<Int>.makeStream()
        monitor.requestDidFinish = { request in finished.continuation.yield(Int(request.response?.status.code ?? 0)) }
        #expect(monitor.requestDidFinish != nil && monitor.requestDidResume == nil)
        _ = await session.request(try await SharedTestServer.shared.baseURL() + "/status/204").serializingData()
            .response
        var iterator = finished.stream.makeAsyncIterator()
        #expect(await iterator.next() == 204)
    }
}
