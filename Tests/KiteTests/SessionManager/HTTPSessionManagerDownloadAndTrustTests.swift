import Dispatch
import Foundation
import HTTPTypes
import KiteTestServer
import Testing

@testable import Kite

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite struct HTTPSessionManagerDownloadAndTrustTests {
    private struct Downloaded: Sendable {
        let status: Int?
        let filePath: URL?
        let error: KiteError?
        let onQueue: Bool
        let listedDuringDownload: Bool
    }

    @Test(arguments: Backend.available)
    func downloadTaskMovesTheFileToItsDestinationAndIsListedUntilDone(backend: Backend) async throws {
        let manager = HTTPSessionManager()
        manager.completionQueue = ManagerProbe.taggedQueue("manager.download")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kite-manager-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let target = directory.appendingPathComponent("bytes.bin")
        let url = try #require(URL(string: try await backend.url("/range/4096")))
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz".utf8)
        let expected = Data((0..<4096).map { alphabet[$0 % 26] })
        let listed = LockedBox(false)
        let downloaded: Downloaded = await withCheckedContinuation { continuation in
            let task = manager.downloadTask(
                with: URLRequest(url: url),
                progress: nil,
                destination: { _, _ in target },
                completionHandler: { response, filePath, error in
                    continuation.resume(
                        returning: Downloaded(
                            status: response?.status.code,
                            filePath: filePath,
                            error: error,
                            onQueue: DispatchQueue.getSpecific(key: ManagerProbe.queueKey) == "manager.download",
                            listedDuringDownload: listed.value
                        )
                    )
                }
            )
            listed.set(manager.downloadTasks.first === task && manager.dataTasks.isEmpty)
        }
        #expect(downloaded.error == nil)
        #expect(downloaded.status == 200)
        #expect(downloaded.onQueue)
        #expect(downloaded.listedDuringDownload)
        #expect(downloaded.filePath == target)
        #expect(try Data(contentsOf: target) == expected)
        #expect(manager.downloadTasks.isEmpty)
    }

    @Test func aDownloadOnAnInvalidatedManagerFailsWithoutATask() async throws {
        let manager = HTTPSessionManager()
        manager.invalidateSessionCancelingTasks(true, resetSession: false)
        let request = URLRequest(url: try #require(URL(string: "http://127.0.0.1:9/x")))
        let error: KiteError? = await withCheckedContinuation { continuation in
            let task = manager.downloadTask(with: request, progress: nil, destination: nil) { _, _, error in
                continuation.resume(returning: error)
            }
            #expect(task == nil)
        }
        #expect(error?.code == .sessionShutDown)
    }

    @Test func theSecurityPolicyDecidesWhichServersAreTrusted() async throws {
        let (authority, base) = try await TrustServers.shared.server(.leaf)
        let manager = HTTPSessionManager(baseURL: URL(string: base))
        // The default policy trusts the system's roots only: the private CA is refused by name.
        do {
            _ = try await manager.get("get")
            Issue.record("a server from a private CA was trusted by the default policy")
        } catch {
            #expect(error.code == .serverTrustEvaluationFailed)
            #expect(error.message.contains("does not lead to a trusted root"), "\(error.message)")
        }
        // AFNetworking's certificate pinning makes the pins the anchors: the private CA's intermediate is enough.
        manager.securityPolicy = SecurityPolicy(
            pinningMode: .certificate,
            pinnedCertificates: [authority.intermediate.certificate]
        )
        let (task, object) = try await manager.get("get", parameters: ["pinned": "yes"])
        #expect(task.response?.status.code == 200)
        #expect(((object as? [String: Any])?["args"] as? [String: Any])?["pinned"] as? String == "yes")
        #expect(manager.securityPolicy.pinningMode == .certificate)
    }
}
