import AsyncHTTPClient
import Testing

@testable import Kite

/// Engine errors map to Kite codes by their cases, read from their structure, not their text.
@Suite struct EngineErrorCaseTests {
    @Test func clientErrorCasesAreReadWithAndWithoutPayloads() {
        #expect(EngineErrorCase.name(of: .invalidHeaderFieldNames(["Bad Name"])) == "invalidHeaderFieldNames")
        #expect(EngineErrorCase.name(of: .invalidHeaderFieldValues(["a\r\nb"])) == "invalidHeaderFieldValues")
        #expect(EngineErrorCase.name(of: .readTimeout) == "readTimeout")
        #expect(EngineErrorCase.name(of: .remoteConnectionClosed) == "remoteConnectionClosed")
    }

    @Test func headerCasesBecomeInvalidHeaderAndOthersDoNot() {
        let transport = AHCTransport(configuration: .default, canShutDown: true)
        defer { transport.shutdownInBackground() }
        let header = transport.kiteError(from: HTTPClientError.invalidHeaderFieldValues(["x"]), authority: nil)
        #expect(header.code == .invalidHeader)
        let proxy = transport.kiteError(from: HTTPClientError.invalidProxyResponse, authority: nil)
        #expect(proxy.code == .connectionLost, "no header in the case: not a header error")
    }

    @Test func certificateVerifyFailedIsBoringSSLsPackedCode() {
        // ERR_PACK(ERR_LIB_SSL, SSL_R_CERTIFICATE_VERIFY_FAILED) = 0x1000007d.
        #expect(EngineErrorCase.certificateVerifyFailed == 0x1000_007D)
    }
}
