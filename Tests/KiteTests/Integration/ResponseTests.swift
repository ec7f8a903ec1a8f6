import Dispatch
import Foundation
import Kite
import Testing

@Suite struct ResponseTests {
    @Test(arguments: Backend.available)
    func metricsFollowTheTimelineAndCountBytes(backend: Backend) async throws {
        let response = await Session.suite.request(try await backend.url("/bytes/1024?seed=1"))
            .serializingData()
            .response
        let metrics = try #require(response.metrics)
        let latency = try #require(metrics.latency)
        #expect(latency <= metrics.requestDuration)
        #expect(metrics.totalDuration == metrics.requestDuration + metrics.serializationDuration)
        #expect(metrics.bytesReceived == 1024)
        #expect(metrics.bytesSent == 0)
        #expect(metrics.redirectCount == 0)
        let initial = try #require(metrics.initialResponseTime)
        #expect(metrics.requestStartTime <= initial)
        #expect(initial <= metrics.requestCompletedTime)
        #expect(metrics.requestCompletedTime <= metrics.serializationCompletedTime)
    }

    @Test(arguments: Backend.available)
    func headAnd204AreEmptyForEveryBuiltInSerializer(backend: Backend) async throws {
        let noContent = try await backend.url("/status/204")
        #expect(try await Session.suite.request(noContent).serializingData().value == Data())
        #expect(try await Session.suite.request(noContent).serializingString().value == "")
        #expect(try await Session.suite.request(noContent).serializingJSON().value == .null)
        #expect(try await Session.suite.request(noContent).serializingDecodable(Empty.self).value == Empty.value)
        let head = try await Session.suite.request(try await backend.url("/get"), method: .head)
            .validate()
            .serializingString()
            .value
        #expect(head == "")
    }

    @Test(arguments: Backend.available)
    func anEmpty200IsASerializationErrorForContentSerializers(backend: Backend) async throws {
        let url = try await backend.url("/status/200")
        let error = try #require(await Session.suite.request(url).serializingDecodable(Echo.self).response.error)
        #expect(error.code == .responseSerializationFailed)
        #expect(
            error.description
                == "GET \(url) failed: the response body is empty (status 200), so it cannot be serialized as Echo"
        )
        #expect(error.response?.status.code == 200)
    }

    @Test(arguments: Backend.available)
    func decodingFailuresNameTheTypeAndPath(backend: Backend) async throws {
        struct Wrong: Decodable, Sendable { let slideshow: [String] }
        let error = try #require(
            await Session.suite.request(try await backend.url("/json")).serializingDecodable(Wrong.self).response
                .error
        )
        #expect(error.code == .responseSerializationFailed)
        #expect(error.message.hasPrefix("the body could not be decoded as Wrong: expected Array<Any> at slideshow"))
    }

    @Test(arguments: Backend.available)
    func utf8PagesDecodeAsText(backend: Backend) async throws {
        let text = try await Session.suite.request(try await backend.url("/encoding/utf8")).serializingString().value
        #expect(text.unicodeScalars.contains { !$0.isASCII })
        let latin1 = try await Session.suite.request(try await backend.url("/encoding/utf8"))
            .serializingString(encoding: .isoLatin1).value
        #expect(latin1 != text)
    }

    @Test(arguments: Backend.available)
    func jsonIsParsedIntoValues(backend: Backend) async throws {
        let json = try await Session.suite.request(try await backend.url("/json")).validate().serializingJSON().value
        #expect(json["slideshow"]?["title"] == .string("Sample Slide Show"))
        #expect(json["slideshow"]?["slides"]?[1]?["items"]?.arrayValue?.count == 2)
    }

    @Test(arguments: Backend.available)
    func closureAPIsDeliverTheSameValues(backend: Backend) async throws {
        let url = try await backend.url("/get?via=closure")
        let echo: DataResponse<Echo, KiteError> = await withCheckedContinuation { continuation in
            Session.suite.request(url).responseDecodable(of: Echo.self) { continuation.resume(returning: $0) }
        }
        #expect(echo.value?.args == ["via": "closure"])
        let raw: DataResponse<Data?, KiteError> = await withCheckedContinuation { continuation in
            Session.suite.request(url).response { continuation.resume(returning: $0) }
        }
        #expect(raw.value??.isEmpty == false)
        let json: DataResponse<JSONValue, KiteError> = await withCheckedContinuation { continuation in
            Session.suite.request(url).responseJSON { continuation.resume(returning: $0) }
        }
        #expect(json.value?["args"]?["via"] == .string("closure"))
        let data: DataResponse<Data, KiteError> = await withCheckedContinuation { continuation in
            Session.suite.request(url).responseData { continuation.resume(returning: $0) }
        }
        #expect(data.value == raw.data)
    }

    @Test(arguments: Backend.available)
    func handlersDefaultToTheSessionsOwnSerialQueue(backend: Backend) async throws {
        let session = Session()
        let key = DispatchSpecificKey<Int>()
        session.callbackQueue.setSpecific(key: key, value: 7)
        var components = try #require(URLComponents(string: try await backend.url("/get")))
        components.queryItems = [URLQueryItem(name: "from", value: "components")]
        let marker: Int? = await withCheckedContinuation { continuation in
            session.request(components).responseDecodable(of: Echo.self) { response in
                #expect(response.value?.args == ["from": "components"])
                continuation.resume(returning: DispatchQueue.getSpecific(key: key))
            }
        }
        #expect(marker == 7)
        try await session.shutdown()
    }

    @Test func responsesMapAndKeepTheirContext() throws {
        let base = DataResponse<Int, KiteError>(
            request: nil,
            response: HTTPResponse(status: .ok),
            data: Data("7".utf8),
            metrics: nil,
            result: .success(7)
        )
        #expect(base.map { $0 * 2 }.value == 14)
        #expect(base.map { $0 * 2 }.data == Data("7".utf8))
        let flat: DataResponse<String, KiteError> = base.flatMap { _ in
            .failure(KiteError(code: .cancelled, message: "x"))
        }
        #expect(flat.error?.code == .cancelled)
        struct Odd: Error {}
        #expect(
            base.tryMap { value -> Int in
                if value % 2 == 1 { throw Odd() }
                return value
            }.error is Odd
        )
        let failed = DataResponse<Int, KiteError>(
            request: nil,
            response: nil,
            data: nil,
            metrics: nil,
            result: .failure(KiteError(code: .timedOut, message: "slow"))
        )
        struct Wrapped: Error { let code: String }
        #expect(failed.mapError { Wrapped(code: "\($0.code)") }.error?.code == "timedOut")
        let rethrown = failed.tryMapError { _ -> Wrapped in throw Odd() }
        #expect(rethrown.error is Odd)
        #expect(failed.description == "FAILURE: Request failed: slow")
    }

    @Test func downloadResponsesMapAndKeepTheirFileAndResumeData() throws {
        let file = URL(fileURLWithPath: "/tmp/kite-map-test.bin")
        let token = Data("token".utf8)
        let base = DownloadResponse<URL, KiteError>(
            request: nil,
            response: HTTPResponse(status: .ok),
            fileURL: file,
            resumeData: token,
            metrics: nil,
            result: .success(file)
        )
        struct Missing: Error { let path: String }
        let tried = base.tryMap { url -> Int in throw Missing(path: url.path) }
        #expect((tried.error as? Missing)?.path == "/tmp/kite-map-test.bin")
        #expect(tried.fileURL == file)
        #expect(tried.resumeData == token)
        #expect(base.tryMap { $0.lastPathComponent }.value == "kite-map-test.bin")
        let flat: DownloadResponse<Int, KiteError> = base.flatMap { _ in
            .failure(KiteError(code: .downloadFailed, message: "x"))
        }
        #expect(flat.error?.code == .downloadFailed)
        #expect(flat.resumeData == token)

        let failed = DownloadResponse<URL, KiteError>(
            request: nil,
            response: nil,
            fileURL: nil,
            resumeData: token,
            metrics: nil,
            result: .failure(KiteError(code: .connectionLost, message: "cut"))
        )
        struct Wrapped: Error { let code: String }
        let mapped = failed.tryMapError { error -> Wrapped in Wrapped(code: "\(error.code)") }
        #expect((mapped.error as? Wrapped)?.code == "connectionLost")
        #expect(mapped.resumeData == token, "a mapped error keeps the resume data")
        #expect(failed.tryMapError { _ -> Wrapped in throw Missing(path: "p") }.error is Missing)
        #expect(base.tryMapError { _ -> Wrapped in throw Missing(path: "p") }.value == file, "values are kept")
    }
}
