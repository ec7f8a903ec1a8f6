import Foundation
import HTTPTypes
import Kite
import NIOConcurrencyHelpers
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Alamofire's names that port unchanged: `HTTPHeader` helpers on `HTTPField`, `HTTPHeaders.add(name:value:)`,
/// a request that prints itself.
@Suite struct AlamofireNamesTests {
    @Test func theFieldHelpersMakeAlamofiresExactFields() {
        let expected: [(HTTPField, String, String)] = [
            (.accept("application/json"), "Accept", "application/json"),
            (.acceptCharset("utf-8"), "Accept-Charset", "utf-8"),
            (.acceptLanguage("fr-CH, fr;q=0.9"), "Accept-Language", "fr-CH, fr;q=0.9"),
            (.acceptEncoding("gzip"), "Accept-Encoding", "gzip"),
            (.authorization(username: "user", password: "pass"), "Authorization", "Basic dXNlcjpwYXNz"),
            (.authorization(username: "zoë", password: "p:w"), "Authorization", "Basic em/DqzpwOnc="),
            (.authorization(bearerToken: "t0k3n"), "Authorization", "Bearer t0k3n"),
            (.authorization("Token abc"), "Authorization", "Token abc"),
            (.contentDisposition("attachment"), "Content-Disposition", "attachment"),
            (.contentEncoding("gzip"), "Content-Encoding", "gzip"),
            (.contentType("text/plain"), "Content-Type", "text/plain"),
            (.userAgent("app/1.0"), "User-Agent", "app/1.0"),
            (.websocketProtocol("chat"), "Sec-WebSocket-Protocol", "chat"),
            (.defaultAcceptEncoding, "Accept-Encoding", "gzip;q=1.0, deflate;q=0.9"),
        ]
        for (field, name, value) in expected {
            #expect(field.name.rawName == name)
            #expect(field.value == value, "\(name)")
        }
        #expect(HTTPField.accept("a\r\nX-Injected: 1").value == "a  X-Injected: 1", "a CR LF cannot add a field")
    }

    @Test func theDefaultsAreWhatASessionSends() {
        #expect(HTTPField.defaultUserAgent.value == HTTPFields.kiteDefaults[.userAgent])
        #expect(HTTPField.defaultUserAgent.value.hasSuffix(" Kite/\(kiteVersion)"))
        let languages = HTTPFields.kiteDefaults[.acceptLanguage] ?? "*"
        #expect(HTTPField.defaultAcceptLanguage.value == languages)
        #expect(
            HTTPFields.default.map(\.name.rawName) == ["Accept-Encoding", "Accept-Language", "User-Agent"]
        )
    }

    @Test(arguments: Backend.available)
    func helperFieldsReachTheServer(backend: Backend) async throws {
        let basic = await Session.suite.request(
            try await backend.url("/basic-auth/kite/s3cret"),
            headers: HTTPFields([.authorization(username: "kite", password: "s3cret"), .accept("application/json")])
        )
        .validate()
        .serializingData()
        .response
        #expect(basic.response?.status.code == 200, "\(basic)")
        var headers = HTTPFields([.authorization(bearerToken: "t0k3n")])
        try headers.add(name: "X-Client-Trace", value: "42")  // not X-Request-ID: httpbin hides it
        let echo = try await Session.suite.request(try await backend.url("/headers"), headers: headers)
            .serializingDecodable(HeadersEcho.self)
            .value
        let received = Dictionary(uniqueKeysWithValues: echo.headers.map { ($0.key.lowercased(), $0.value) })
        #expect(received["authorization"] == "Bearer t0k3n")
        #expect(received["x-client-trace"] == "42")
    }

    struct HeadersEcho: Decodable {
        let headers: [String: String]
    }

    @Test func addKeepsEarlierFieldsAndUpdateReplacesThem() throws {
        var headers = HTTPFields()
        try headers.add(name: "X-Trace", value: "a")
        try headers.add(name: "x-trace", value: "b")
        #expect(headers[values: HTTPField.Name("X-Trace")!] == ["a", "b"])
        try headers.update(name: "X-Trace", value: "c")
        #expect(headers[values: HTTPField.Name("X-Trace")!] == ["c"])
        #expect(headers.count == 1)
    }

    @Test(arguments: [
        ("X Trace", "v", #""X Trace" is not a valid header field name"#),
        ("", "v", #""" is not a valid header field name"#),
        ("X-Trace", "a\r\nb", #"the value of header "X-Trace" contains CR, LF or NUL: "a\r\nb""#),
    ])
    func aBadNameOrValueIsAnErrorAndChangesNothing(name: String, value: String, message: String) {
        var headers = HTTPFields([.accept("*/*")])
        #expect {
            try headers.add(name: name, value: value)
        } throws: { error in
            (error as? KiteError)?.code == .invalidHeader && (error as? KiteError)?.message == message
        }
        #expect {
            try headers.update(name: name, value: value)
        } throws: { error in
            (error as? KiteError)?.code == .invalidHeader
        }
        #expect(headers == HTTPFields([.accept("*/*")]))
    }

    @Test func aRequestPrintsItsMethodURLAndStatus() async throws {
        let base = try await Backend.inProcess.url("/status/418")
        let authority = try #require(URL(string: base)?.port).description
        let request = Session.suite.request("http://user:secret@127.0.0.1:\(authority)/status/418")
        #expect("\(request)" == "GET http://127.0.0.1:\(authority)/status/418", "credentials are not printed")
        let response = await request.serializingData().response
        #expect("\(request)" == "GET http://127.0.0.1:\(authority)/status/418 (418)", "\(response)")
        let failed = Session.suite.request("http://127.0.0.1:1/x", method: .post)
        _ = await failed.serializingData().response
        #expect("\(failed)" == "POST http://127.0.0.1:1/x")
    }

    @Test func cURLDescriptionCallsOnceWhenSentAndAtOnceAfterwards() async throws {
        let url = try await Backend.inProcess.url("/get?q=1")
        let calls = NIOLockedValueBox<[String]>([])
        let request = Session.suite.request(url, headers: [.authorization: "Bearer secret"])
        let first: String = await withCheckedContinuation { continuation in
            request.cURLDescription { command in
                calls.withLockedValue { $0.append(command) }
                continuation.resume(returning: command)
            }
            request.responseData { _ in }
        }
        #expect(first.hasPrefix("$ curl"))
        #expect(first.contains("'\(url)'"))
        #expect(first.contains("Authorization: ***"), "credentials are hidden")
        _ = await request.serializingData().response
        let later: String = await withCheckedContinuation { continuation in
            request.cURLDescription(on: DispatchQueue(label: "kite.test.curl")) { continuation.resume(returning: $0) }
        }
        #expect(later == first)
        #expect(calls.withLockedValue { $0.count } == 1, "the first handler ran once")
    }

    @Test func cURLDescriptionIsCalledWhenTheAdapterFails() async throws {
        struct Refused: Error {}
        let url = try await Backend.inProcess.url("/get")
        let request = Session.suite.request(url, interceptor: Adapter { _, _ in throw Refused() })
        let command: String = await withCheckedContinuation { continuation in
            request.cURLDescription { continuation.resume(returning: $0) }
            request.responseData { _ in }
        }
        #expect(command.contains("'\(url)'"))
        #expect(await request.serializingData().response.error?.code == .requestAdaptationFailed)
    }

    @Test(arguments: Backend.available)
    func aDownloadReadsAsTextInAClosure(backend: Backend) async throws {
        // "héllo" in UTF-8, which httpbin's /base64 answers as text/html; charset=utf-8.
        let url = try await backend.url("/base64/aMOpbGxv")
        let response = await withCheckedContinuation { continuation in
            Session.suite.download(url).responseString { continuation.resume(returning: $0) }
        }
        #expect(response.value == "héllo", "\(response)")
        let latin1 = await withCheckedContinuation { continuation in
            Session.suite.download(url).responseString(encoding: .isoLatin1) { continuation.resume(returning: $0) }
        }
        #expect(latin1.value == "hÃ©llo", "the encoding given wins over the charset")
        if let file = response.fileURL { try? FileManager.default.removeItem(at: file) }
        if let file = latin1.fileURL { try? FileManager.default.removeItem(at: file) }
    }

    /// Alamofire's argument order compiles: interceptor, serverTrustManager, redirectHandler, eventMonitors.
    @Test func theSessionTakesAlamofiresArgumentOrder() async throws {
        let session = Session(
            configuration: .default,
            interceptor: RetryPolicy(),
            serverTrustManager: ServerTrustManager(allHostsMustBeEvaluated: false, evaluators: [:]),
            redirectHandler: Redirector.doNotFollow,
            eventMonitors: []
        )
        let response = await session.request(try await Backend.inProcess.url("/redirect/1")).serializingData().response
        #expect(response.response?.status.code == 302, "the redirect handler given is the one used")
        try await session.shutdown()
    }

    /// `upload(_:with:)` and `upload(multipartFormData:with:)` take the method and fields of a `URLRequest`.
    @Test(arguments: Backend.available)
    func uploadsTakeAWholeURLRequest(backend: Backend) async throws {
        let bytes = Data("file body \u{1}\u{2}".utf8)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("kite-with-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("body.bin")
        try bytes.write(to: file)
        var put = URLRequest(url: URL(string: try await backend.url("/put"))!)
        put.httpMethod = "PUT"
        put.setValue("application/octet-stream", forHTTPHeaderField: "Content-Type")
        put.setValue("with-file", forHTTPHeaderField: "X-Upload-Form")
        let echo = try await Session.suite.upload(file, with: put).validate().serializingDecodable(LooseEcho.self).value
        #expect(echo.data == String(decoding: bytes, as: UTF8.self))
        #expect(echo.headers.header("X-Upload-Form") == "with-file")
        #expect(echo.headers.header("Content-Length") == "\(bytes.count)")

        var form = MultipartFormData()
        form.append(Data("kite".utf8), withName: "name")
        put.setValue(nil, forHTTPHeaderField: "Content-Type")
        let formEcho = try await Session.suite.upload(multipartFormData: form, with: put)
            .validate()
            .serializingDecodable(LooseEcho.self)
            .value
        #expect(formEcho.form?["name"] == .string("kite"))
        #expect(formEcho.headers.header("Content-Type") == form.contentType)

        let built = try await Session.suite.upload(
            multipartFormData: { form in form.append(Data("built".utf8), withName: "name") },
            with: put
        )
        .validate()
        .serializingDecodable(LooseEcho.self)
        .value
        #expect(built.form?["name"] == .string("built"))
        #expect(built.headers.header("Content-Type")?.hasPrefix("multipart/form-data; boundary=") == true)

        // A GET route refuses the PUT: the URLRequest's method is the one sent.
        var get = put
        get.url = URL(string: try await backend.url("/get"))!
        let refused = await Session.suite.upload(file, with: get).serializingData().response
        #expect(refused.response?.status.code == 405, "\(refused)")
    }
}
