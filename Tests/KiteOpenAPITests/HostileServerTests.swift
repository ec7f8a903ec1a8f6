import Foundation
import HTTPTypes
import Kite
import KiteOpenAPI
import OpenAPIRuntime
import Testing

/// The transport against the fault server: bodies cut by FIN and RST, silence, an early answer to an upload,
/// a status line that is not HTTP. Each ends with a response or a named `KiteError`, never a crash or a hang.
@Suite struct HostileServerTests {
    private func send(
        _ path: String,
        method: HTTPRequest.Method = .get,
        body: HTTPBody? = nil,
        session: Session = .openAPISuite
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let base = try #require(URL(string: try await FaultServer.shared.baseURL()))
        let head = HTTPRequest(method: method, scheme: nil, authority: nil, path: path)
        return try await KiteClientTransport(session: session).send(
            head,
            body: body,
            baseURL: base,
            operationID: "fault"
        )
    }

    @Test(arguments: ["fin", "rst"])
    func aBodyCutMidwayFailsTheReaderWithConnectionLost(mode: String) async throws {
        let (response, body) = try await self.send("/close-after?bytes=20000&length=100000&mode=\(mode)")
        #expect(response.status == .ok)
        #expect(response.headerFields[.contentLength] == "100000")
        let error = await #expect(throws: (any Error).self) {
            _ = try await [UInt8](collecting: try #require(body), upTo: 1 << 20)
        }
        #expect(error.flatMap(kiteError)?.code == .connectionLost)
    }

    @Test func aChunkedBodyCutMidChunkFailsTheReader() async throws {
        let (_, body) = try await self.send("/close-after?bytes=20000&length=100000&chunked=1")
        let error = await #expect(throws: (any Error).self) {
            _ = try await [UInt8](collecting: try #require(body), upTo: 1 << 20)
        }
        #expect(error.flatMap(kiteError)?.code == .connectionLost)
    }

    @Test func aSilentServerEndsAtTheIdleReadTimeout() async throws {
        var configuration = Session.Configuration()
        configuration.timeouts.idleRead = .milliseconds(300)
        let session = Session(configuration: configuration)
        defer { Task { try await session.shutdown() } }
        let error = await #expect(throws: (any Error).self) {
            _ = try await within(.seconds(10)) { try await self.send("/silence?max_s=20", session: session) }
        }
        let kite = error.flatMap(kiteError)
        #expect(kite?.code == .timedOut)
        #expect(kite?.timeout == .idleRead)
    }

    @Test func anAnswerBeforeTheUploadWasReadIsTheResponseOrANamedError() async throws {
        // The server answers 413 after the head and closes: the caller gets the 413, or, when the close wins the
        // race with the answer, the error that says the connection went.
        let upload = HTTPBody([UInt8](repeating: 7, count: 4 << 20))
        do {
            let (response, _) = try await self.send("/early-status?status=413&then=close", method: .post, body: upload)
            #expect(response.status.code == 413)
        } catch {
            let code = try #require(kiteError(of: error)?.code)
            #expect([.connectionLost, .uploadFailed].contains(code))
        }
    }

    @Test func aStatusLineThatIsNotHTTPIsAKiteError() async throws {
        let error = await #expect(throws: (any Error).self) {
            _ = try await self.send("/garbage-status?kind=notHTTP")
        }
        #expect(error.flatMap(kiteError) != nil)
    }
}
