import Dispatch
import Foundation
import Testing

@testable import Kite

/// The manager against the fault server: every hostile answer calls `failure` exactly once, with the task, and
/// leaves the task list empty and the completion group balanced.
@Suite struct HTTPSessionManagerFaultTests {
    private struct Calls: Sendable {
        var successes = 0
        var failures: [KiteError] = []
        var tasksAtFailure: [Int] = []
        var failedWithTask = true
    }

    /// Starts one request with `start`, waits for the group, and returns what the closures saw.
    private func calls(
        _ manager: HTTPSessionManager,
        _ start: (
            _ success: @escaping @Sendable (BaseRequest, Any?) -> Void,
            _ failure: @escaping @Sendable (BaseRequest?, KiteError) -> Void
        ) -> Void
    ) async -> Calls {
        let group = DispatchGroup()
        manager.completionGroup = group
        let calls = LockedBox(Calls())
        start(
            { _, _ in calls.update { $0.successes += 1 } },
            { task, error in
                calls.update {
                    $0.failures.append(error)
                    $0.tasksAtFailure.append(manager.tasks.count)
                    $0.failedWithTask = $0.failedWithTask && task != nil
                }
            }
        )
        await withCheckedContinuation { continuation in group.notify(queue: .global()) { continuation.resume() } }
        return calls.value
    }

    @Test(arguments: ["fin", "rst"])
    func aBodyCutShortFailsOnceWithALostConnection(mode: String) async throws {
        let manager = HTTPSessionManager(baseURL: URL(string: try await FaultServer.url("/")))
        let seen = await self.calls(manager) { success, failure in
            manager.get(
                "close-after?bytes=10000&length=40000&mode=\(mode)",
                parameters: nil,
                headers: nil,
                progress: nil,
                success: success,
                failure: failure
            )
        }
        #expect(seen.successes == 0)
        #expect(seen.failures.map(\.code) == [.connectionLost])
        #expect(seen.failedWithTask)
        #expect(seen.tasksAtFailure == [0])
        #expect(manager.tasks.isEmpty)
    }

    @Test func aSilentServerFailsOnceWhenTheSerializersTimeoutExpires() async throws {
        let manager = HTTPSessionManager(baseURL: URL(string: try await FaultServer.url("/")))
        manager.requestSerializer.timeoutInterval = 0.3
        let seen = await self.calls(manager) { success, failure in
            manager.get("silence", parameters: nil, headers: nil, progress: nil, success: success, failure: failure)
        }
        #expect(seen.successes == 0)
        #expect(seen.failures.map(\.code) == [.timedOut])
        #expect(seen.failures.first?.timeout == .total)
        #expect(manager.tasks.isEmpty)
    }

    @Test(arguments: ["drain", "close"])
    func aMultipartUploadAnsweredBeforeItIsReadFailsOnceWithTheStatusOrALostConnection(then: String) async throws {
        let manager = HTTPSessionManager(baseURL: URL(string: try await FaultServer.url("/")))
        let seen = await self.calls(manager) { success, failure in
            manager.post(
                "early-status?status=413&then=\(then)",
                parameters: ["name": "kite"],
                headers: nil,
                constructingBodyWith: { formData in
                    formData.append(
                        Data(count: 8 * 1024 * 1024),
                        withName: "big",
                        fileName: "big.bin",
                        mimeType: "application/octet-stream"
                    )
                },
                progress: nil,
                success: success,
                failure: failure
            )
        }
        #expect(seen.successes == 0)
        #expect(seen.failures.count == 1)
        let error = try #require(seen.failures.first)
        // The 413 when the engine reads the answer before the reset, else the reset; never both, never a crash.
        #expect(
            (error.code == .responseValidationFailed && error.responseStatusCode == 413)
                || error.code == .connectionLost,
            "\(error)"
        )
        #expect(seen.failedWithTask)
        #expect(manager.uploadTasks.isEmpty)
    }
}
