import Foundation
import HTTPTypes
import NIOConcurrencyHelpers
import NIOCore
import Testing

@testable import Kite

/// A redirect from https to http, through the pipeline over a scripted engine (no TLS server redirects).
@Suite struct InsecureRedirectTests {
    /// Answers `https://…` with a 302 to `http://…/landed` and everything else with 200; records the requests.
    final class ScriptedTransport: Transport {
        let sent = NIOLockedValueBox<[HTTPRequest]>([])

        func send(_ request: TransportRequest) async throws(KiteError) -> TransportResponse {
            self.sent.withLockedValue { $0.append(request.head) }
            if request.head.scheme == "https" {
                var fields = HTTPFields()
                fields[.location] = "http://plain.test/landed"
                fields[.contentLength] = "0"
                return TransportResponse(
                    head: HTTPResponse(status: .found, headerFields: fields),
                    body: ByteChunks(chunks: [])
                )
            }
            var fields = HTTPFields()
            fields[.contentLength] = "2"
            return TransportResponse(
                head: HTTPResponse(status: .ok, headerFields: fields),
                body: ByteChunks(chunks: [ByteBuffer(string: "ok")])
            )
        }

        func shutdown() async throws(KiteError) {}
        func shutdownInBackground() {}
    }

    @Test func httpsToHTTPIsRefusedByDefault() async throws {
        let transport = ScriptedTransport()
        let asked = NIOLockedValueBox(0)
        let handler = Redirector.modify { _, request, _ in
            asked.withLockedValue { $0 += 1 }
            return request
        }
        let session = Session(configuration: .default, transport: transport, redirectHandler: handler)
        let response = await session.request("https://secure.test/start").serializingData().response
        #expect(response.error?.code == .redirectRefused)
        #expect(response.error?.responseStatusCode == 302)
        #expect(transport.sent.withLockedValue { $0.count } == 1, "nothing was sent in clear text")
        #expect(asked.withLockedValue { $0 } == 0, "Kite's rules run before the handler")
    }

    @Test func httpsToHTTPIsFollowedWhenAllowed() async throws {
        let transport = ScriptedTransport()
        var configuration = Session.Configuration()
        configuration.allowsInsecureRedirects = true
        let session = Session(configuration: configuration, transport: transport)
        let response = await session.request("https://secure.test/start").serializingString().response
        #expect(response.value == "ok")
        #expect(
            transport.sent.withLockedValue { $0.map { "\($0.scheme ?? "")://\($0.authority ?? "")\($0.path ?? "")" } }
                == ["https://secure.test/start", "http://plain.test/landed"]
        )
    }
}
