import Foundation
import HTTPTypes
import Kite
import KiteOpenAPI
import NIOConcurrencyHelpers
import OpenAPIRuntime
import Testing

/// The generated client (Generated/, from Scripts/openapi/openapi.yaml) on `KiteClientTransport`, against the
/// in-process server and python httpbin: typed responses and errors, bodies both ways, cookies and auth.
@Suite struct GeneratedClientTests {
    @Test(arguments: Backend.available)
    func aTypedJSONResponse(backend: Backend) async throws {
        let client = try await backend.client()
        let document = try await client.getJSON().ok.body.json
        #expect(document.slideshow.title == "Sample Slide Show")
        #expect(document.slideshow.slides.count == 2)
    }

    @Test(arguments: Backend.available)
    func formAndJSONRequestBodies(backend: Backend) async throws {
        let client = try await backend.client()
        let form = try await client.postForm(body: .urlEncodedForm(.init(name: "kite & co", language: "swift")))
            .ok.body.json
        #expect(form.form.additionalProperties == ["name": "kite & co", "language": "swift"])
        let echo = try await client.postJSON(body: .json(.init(name: "kite", count: 3))).ok.body.json
        #expect(echo.json == .init(name: "kite", count: 3))
        #expect(echo.method == "POST")
    }

    @Test(arguments: Backend.available)
    func theSessionsAdapterAndTheClientsHeadersReachTheServer(backend: Backend) async throws {
        let session = Session(
            interceptor: Adapter { request, _ in
                var request = request
                request.headerFields[HTTPField.Name("X-Adapted")!] = "yes"
                return request
            }
        )
        defer { Task { try await session.shutdown() } }
        let client = try await backend.client(session: session)
        let headers = try await client.getHeaders().ok.body.json.headers.additionalProperties
        #expect(headers.header("X-Adapted") == "yes")
        #expect(headers.header("Accept") == "application/json")
    }

    @Test(arguments: Backend.available)
    func statusCodesAreTypedResponsesNotErrors(backend: Backend) async throws {
        let client = try await backend.client()
        guard case .notFound = try await client.getStatus(path: .init(code: 404)) else {
            Issue.record("404 is not .notFound")
            return
        }
        guard case .code418 = try await client.getStatus(path: .init(code: 418)) else {
            Issue.record("418 is not .code418")
            return
        }
        guard case .default(let statusCode, _) = try await client.getStatus(path: .init(code: 500)) else {
            Issue.record("500 is not .default")
            return
        }
        #expect(statusCode == 500)
    }

    @Test(arguments: Backend.available)
    func redirectsAreFollowedByTheSession(backend: Backend) async throws {
        let client = try await backend.client()
        let landed = try await client.redirect(path: .init(n: 2)).ok.body.json
        #expect(landed.url.hasSuffix("/get"))
    }

    @Test(arguments: Backend.available)
    func jsonLinesStreamAndDecode(backend: Backend) async throws {
        let client = try await backend.client()
        let body = try await client.streamJSON(path: .init(n: 5)).ok.body.any
        var ids: [Int] = []
        for try await line in body.asDecodedJSONLines(of: Components.Schemas.StreamLine.self) {
            ids.append(line.id)
        }
        #expect(ids == [0, 1, 2, 3, 4])
    }

    @Test func serverSentEventsDecode() async throws {
        let client = try await Backend.inProcess.client()
        let body = try await client.serverSentEvents(query: .init(count: 2)).ok.body.textEventStream
        var events: [OpenAPIRuntime.ServerSentEvent] = []
        for try await event in body.asDecodedServerSentEvents() where event.data != nil {
            events.append(event)
        }
        #expect(events.map(\.id) == ["0", "1", nil])
        #expect(events.map(\.event) == ["tick", "tock", nil])
        #expect(events.first?.data == "{\"index\": 0}\nline two of 0")
        #expect(events.last?.data == "done")
    }

    @Test(arguments: Backend.available)
    func bytesArriveWhole(backend: Backend) async throws {
        let client = try await backend.client()
        let body = try await client.getBytes(path: .init(n: 100_000)).ok.body.binary
        let bytes = try await [UInt8](collecting: body, upTo: 1 << 20)
        #expect(bytes.count == 100_000)
        let streamed = try await client.streamBytes(path: .init(n: 70_000)).ok.body.binary
        #expect(try await [UInt8](collecting: streamed, upTo: 1 << 20).count == 70_000)
    }

    @Test(arguments: Backend.available)
    func aStreamedRequestBodyOfKnownLengthIsSentWithContentLength(backend: Backend) async throws {
        let client = try await backend.client()
        let chunks = CountingBody(["hello", " ", "world"])
        let body = HTTPBody(chunks, length: .known(Int64(chunks.byteCount)), iterationBehavior: .single)
        let echo = try await client.uploadBytes(body: .binary(body)).ok.body.json
        #expect(echo.data == "hello world")
        #expect(echo.headers.additionalProperties.header("Content-Length") == "11")
        #expect(chunks.iterations == 1)
    }

    @Test func aStreamedRequestBodyOfUnknownLengthIsSentChunked() async throws {
        let client = try await Backend.inProcess.client()
        let chunks = CountingBody(["one,", "two,", "three"])
        let body = HTTPBody(chunks, length: .unknown, iterationBehavior: .single)
        let echo = try await client.uploadBytes(body: .binary(body)).ok.body.json
        #expect(echo.data == "one,two,three")
        #expect(echo.headers.additionalProperties.header("Transfer-Encoding") == "chunked")
        #expect(echo.headers.additionalProperties.header("Content-Length") == nil)
    }

    @Test(arguments: Backend.available)
    func theCookieJarKeepsWhatARedirectSet(backend: Backend) async throws {
        let session = Session()
        defer { Task { try await session.shutdown() } }
        let client = try await backend.client(session: session)
        let set = try await client.setCookies(query: .init(a: "1", b: "2")).ok.body.json
        #expect(set.cookies.additionalProperties == ["a": "1", "b": "2"])
        let later = try await client.getCookies().ok.body.json
        #expect(later.cookies.additionalProperties == ["a": "1", "b": "2"])
    }

    @Test(arguments: Backend.available)
    func repeatedSetCookieFieldsAreAllKept(backend: Backend) async throws {
        let recorder = ResponseRecorder()
        let client = try await backend.client(middlewares: [recorder])
        _ = try await client.responseHeaders(query: .init(setCookie: ["a=1; Path=/", "b=2; Path=/"])).ok.body.json
        let response = try #require(recorder.responses.last)
        #expect(response.headerFields[values: .setCookie] == ["a=1; Path=/", "b=2; Path=/"])
    }

    @Test(arguments: Backend.available)
    func theTransportsCredentialAnswersBasicChallenges(backend: Backend) async throws {
        let anonymous = try await backend.client()
        guard case .unauthorized = try await anonymous.basicAuth(path: .init(user: "kite", passwd: "s3cret")) else {
            Issue.record("without a credential the answer is not 401")
            return
        }
        let client = try await backend.client(credential: Credential(user: "kite", password: "s3cret"))
        let answer = try await client.basicAuth(path: .init(user: "kite", passwd: "s3cret")).ok.body.json
        #expect(answer.authenticated)
        #expect(answer.user == "kite")
    }

    @Test func errorsReachTheClientAsKiteErrorsInsideClientError() async throws {
        let client = Client(
            serverURL: try #require(URL(string: "http://127.0.0.1:1")),
            transport: KiteClientTransport(session: .openAPISuite)
        )
        do {
            _ = try await client.getJSON()
            Issue.record("a refused connection did not throw")
        } catch {
            #expect(error is ClientError)
            #expect(kiteError(of: error)?.code == .connectionFailed)
            #expect((error as? ClientError)?.operationID == "getJSON")
        }
    }
}

/// Keeps every response head that passes through it.
final class ResponseRecorder: ClientMiddleware, Sendable {
    private let recorded = NIOLockedValueBox<[HTTPResponse]>([])

    var responses: [HTTPResponse] { self.recorded.withLockedValue { $0 } }

    func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        baseURL: URL,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let (response, responseBody) = try await next(request, body, baseURL)
        self.recorded.withLockedValue { $0.append(response) }
        return (response, responseBody)
    }
}
