import Foundation
import Kite
import NIOConcurrencyHelpers
import Testing

@testable import Kite

/// Retries after a body arrived, against servers that cut it: what crashes Alamofire on Linux.
@Suite struct RetryFaultTests {
    private func lostConnectionPolicy() -> ConnectionLostRetryPolicy {
        ConnectionLostRetryPolicy(retryLimit: 2, exponentialBackoffScale: 0.01, jitter: .none, retryBudget: nil)
    }

    @Test(arguments: ["fin", "rst"])
    func aDataRequestCutMidBodyIsRetriedToItsLimit(mode: String) async throws {
        let url = try await FaultServer.url("/close-after?bytes=10000&length=40000&mode=\(mode)")
        let request = Session.suite.request(url, interceptor: self.lostConnectionPolicy())
        let response = await request.serializingData().response
        #expect(response.error?.code == .connectionLost, "\(String(describing: response.error))")
        #expect(request.retryCount == 2)
        #expect(response.response?.status.code == 200, "the last attempt's head")
        #expect(response.data == nil || response.data?.isEmpty == true, "a cut body is never delivered as complete")
    }

    @Test func aDownloadRetriedAfterACutRemovesTheEarlierAttemptsFiles() async throws {
        let url = try await FaultServer.url("/close-after?bytes=30000&length=100000&mode=rst")
        let partials = NIOLockedValueBox<[URL]>([])
        let recorder = Retrier { request, _, error in
            if let download = request as? DownloadRequest,
                let partial = download.machine.withLockedValue({ $0.record.download.partialURL })
            {
                partials.withLockedValue { $0.append(partial) }
            }
            return error.code == .connectionLost && request.retryCount < 2 ? .retry : .doNotRetry
        }
        let request = Session.suite.download(url, interceptor: recorder)
        let response = await request.serializingDownloadedFileURL().response
        #expect(response.error?.code == .connectionLost)
        #expect(request.retryCount == 2)
        let files = partials.withLockedValue { $0 }
        #expect(files.count == 3, "asked after each of the three attempts")
        #expect(Set(files).count == 3, "each attempt wrote its own file")
        for earlier in files.dropLast() {
            #expect(!FileManager.default.fileExists(atPath: earlier.path), "an earlier attempt's file is removed")
        }
        let resumeData = try #require(response.resumeData, "the last attempt's bytes can still be resumed")
        let resumed = await Session.suite.download(resumingWith: resumeData).serializingData().response
        #expect(resumed.value == FaultInjectionTests.deterministicBody(100_000))
    }

    @Test func aStreamThatFailedOnItsHeadIsRetriedAndDeliversItsBytesOnce() async throws {
        let base = try await SharedTestServer.shared.baseURL()
        let key = UUID().uuidString
        let policy = RetryPolicy(exponentialBackoffScale: 0.01, jitter: .none, retryBudget: nil)
        let request = Session.suite.streamRequest(base + "/flaky/\(key)?failures=1", interceptor: policy).validate()
        var received = Data()
        for try await chunk in request.streamingData() {
            received.append(chunk)
        }
        let echo = try JSONDecoder().decode([String: JSONValue].self, from: received)
        #expect(echo["attempt"] == .int(2))
        #expect(request.retryCount == 1)
    }
}
