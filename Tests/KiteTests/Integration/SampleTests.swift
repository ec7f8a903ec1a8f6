import Dispatch
import Foundation
import Kite
import Testing

/// The issue's and README's sample, verbatim except for the server address, with its comments
/// turned into assertions.
@Suite struct SampleTests {
    struct Login: Encodable, Sendable {
        let email: String
        let password: String
    }

    @Test(arguments: Backend.available)
    func queryParametersAreEncodedValidatedAndDecoded(backend: Backend) async throws {
        let session = Session.default
        let echo = try await session.request(try await backend.url("/get"), parameters: ["q": "swift nio", "page": 2])
            .validate()
            .serializingDecodable(Echo.self)
            .value
        #expect(echo.args == ["page": "2", "q": "swift nio"])
        #expect(echo.url == (try await backend.url("/get?page=2&q=swift%20nio")))
    }

    @Test(arguments: Backend.available)
    func encodableBodyIsSentAsJSONAndTheWholeResponseComesBack(backend: Backend) async throws {
        let session = Session.default
        let response = await session.request(
            try await backend.url("/post"),
            method: .post,
            parameters: Login(email: "a@example.com", password: "secret"),
            encoder: JSONParameterEncoder.default,
            headers: [.accept: "application/json"]
        )
        .validate()
        .serializingDecodable(Echo.self)
        .response

        #expect(response.response?.status.code == 200)
        let echo = try #require(response.value)
        #expect(echo.json == ["email": "a@example.com", "password": "secret"])
        #expect(echo.headers.header("Content-Type") == "application/json")
        #expect(response.request?.method == .post)
        #expect(response.request?.headerFields[.accept] == "application/json")
        let metrics = try #require(response.metrics)
        let data = try #require(response.data)
        let body = String(decoding: data, as: UTF8.self)
        #expect(metrics.bytesReceived == Int64(response.data?.count ?? -1))
        #expect(metrics.bytesSent == Int64(#"{"email":"a@example.com","password":"secret"}"#.utf8.count))
        #expect(body.contains("a@example.com"))
    }

    @Test(arguments: Backend.available)
    func completionClosureRunsOnTheGivenQueueWithAReadableError(backend: Backend) async throws {
        let session = Session.default
        let url = try await backend.url("/status/418")
        let queue = DispatchQueue(label: "sample.callbacks")
        let key = DispatchSpecificKey<String>()
        queue.setSpecific(key: key, value: "sample")

        let (error, ranOnQueue) = await withCheckedContinuation { continuation in
            session.request(url)
                .validate(statusCode: 200..<300)
                .responseString(queue: queue) { response in
                    let onQueue = DispatchQueue.getSpecific(key: key) == "sample"
                    continuation.resume(returning: (response.error, onQueue))
                }
        }
        #expect(ranOnQueue)
        let failure = try #require(error)
        #expect(failure.code == .responseValidationFailed)
        #expect(failure.responseStatusCode == 418)
        #expect("\(failure)" == "GET \(url) failed: response status 418 is not in 200..<300")
    }
}
