import Foundation
import NIOConcurrencyHelpers
import Testing

@testable import Kite

/// A preset and what its checks must say: AFNetworking's `acceptableStatusCodes` and `acceptableContentTypes`.
private struct Preset: Sendable, CustomTestStringConvertible {
    let name: String
    let acceptance: ResponseAcceptance
    /// A media type the preset accepts, spelled as it lists it; any type for presets without a type check.
    let mediaType: String
    /// How refusals list the acceptable types (sorted, lower-case); `nil` when types are not checked.
    let listed: String?
    /// Whether only `200..<300` is accepted.
    let checksStatus: Bool

    var testDescription: String { self.name }

    static let imageList =
        "image/bmp, image/gif, image/heic, image/ico, image/jpeg, image/png, image/tiff, image/webp, image/x-bmp, "
        + "image/x-icon, image/x-win-bitmap, image/x-xbitmap"

    static let all: [Preset] = [
        Preset(
            name: "json",
            acceptance: .json,
            mediaType: "application/json",
            listed: "application/json, text/javascript, text/json",
            checksStatus: true
        ),
        Preset(
            name: "xml",
            acceptance: .xml,
            mediaType: "text/xml",
            listed: "application/xml, text/xml",
            checksStatus: true
        ),
        Preset(
            name: "propertyList",
            acceptance: .propertyList,
            mediaType: "application/x-plist",
            listed: "application/x-plist",
            checksStatus: true
        ),
        Preset(name: "image", acceptance: .image, mediaType: "image/png", listed: Self.imageList, checksStatus: true),
        Preset(name: "http", acceptance: .http, mediaType: "application/json", listed: nil, checksStatus: true),
        Preset(name: "any", acceptance: .any, mediaType: "application/json", listed: nil, checksStatus: false),
    ]
}

/// How the response's `Content-Type` is spelled.
private enum ContentTypeVariant: String, Sendable, CaseIterable, CustomTestStringConvertible {
    case exact
    case withCharset
    case upperCase
    case wrong
    case missing

    var testDescription: String { self.rawValue }

    func header(for preset: Preset) -> String? {
        switch self {
        case .exact: preset.mediaType
        case .withCharset: preset.mediaType + "; charset=utf-8"
        case .upperCase: preset.mediaType.uppercased()
        case .wrong: "text/plain"
        case .missing: nil
        }
    }
}

/// A custom serializer that counts its calls and the lines of the body.
private struct LineCountSerializer: DataResponseSerializerProtocol {
    let calls: NIOLockedValueBox<Int>

    func serialize(request: HTTPRequest?, response: HTTPResponse?, data: Data?, error: KiteError?) throws -> Int {
        self.calls.withLockedValue { $0 += 1 }
        if let error { throw error }
        return (data ?? Data()).split(separator: UInt8(ascii: "\n")).count
    }
}

@Suite struct ResponseAcceptanceTests {
    private let get = HTTPRequest(method: .get, scheme: "http", authority: "example.com", path: "/")

    private func response(_ code: Int = 200, contentType: String? = nil) -> HTTPResponse {
        var fields = HTTPFields()
        if let contentType { fields[.contentType] = contentType }
        return HTTPResponse(status: .init(code: code), headerFields: fields)
    }

    /// `count` bytes that differ from their neighbours, so a wrong offset shows.
    private func patterned(_ count: Int) -> Data {
        Data((0..<count).map { UInt8($0 % 251) })
    }

    // MARK: - Presets

    @Test func presetsHoldAFNetworkingsStatusesAndTypes() {
        let success = IndexSet(integersIn: 200..<300)
        #expect(ResponseAcceptance.any.statusCodes == nil)
        #expect(ResponseAcceptance.any.contentTypes == nil)
        #expect(ResponseAcceptance.http.statusCodes == success)
        #expect(ResponseAcceptance.http.contentTypes == nil)
        #expect(ResponseAcceptance.json.statusCodes == success)
        #expect(ResponseAcceptance.json.contentTypes == ["application/json", "text/json", "text/javascript"])
        #expect(ResponseAcceptance.xml.statusCodes == success)
        #expect(ResponseAcceptance.xml.contentTypes == ["application/xml", "text/xml"])
        #expect(ResponseAcceptance.propertyList.statusCodes == success)
        #expect(ResponseAcceptance.propertyList.contentTypes == ["application/x-plist"])
        #expect(ResponseAcceptance.image.statusCodes == success)
        #expect(
            ResponseAcceptance.image.contentTypes == [
                "image/tiff", "image/jpeg", "image/gif", "image/png", "image/ico", "image/x-icon", "image/bmp",
                "image/x-bmp", "image/x-xbitmap", "image/x-win-bitmap", "image/webp", "image/heic",
            ]
        )
    }

    // MARK: - The matrix

    @Test(arguments: Preset.all, ContentTypeVariant.allCases)
    fileprivate func everyPresetAcceptsOrRefusesByStatusTypeAndBody(preset: Preset, variant: ContentTypeVariant) {
        let header = variant.header(for: preset)
        for status in [200, 299, 300, 404, 500] {
            for body in [Data(), Data("<a>1</a>".utf8)] {
                let context = "\(preset.name), Content-Type \(header ?? "none"), status \(status), \(body.count) bytes"
                var reasons: [String] = []
                if preset.checksStatus, !(200..<300).contains(status) {
                    reasons.append("response status \(status) is not acceptable (200..<300)")
                }
                if let listed = preset.listed, !body.isEmpty {
                    switch variant {
                    case .exact, .withCharset, .upperCase:
                        break
                    case .wrong:
                        reasons.append(#"response Content-Type "text/plain" is not one of \#(listed)"#)
                    case .missing:
                        reasons.append("the response has no Content-Type, but one of \(listed) was expected")
                    }
                }
                let response = self.response(status, contentType: header)
                let error = preset.acceptance.check(response: response, data: body)
                guard !reasons.isEmpty else {
                    #expect(error == nil, Comment(rawValue: context))
                    continue
                }
                #expect(error?.code == .responseValidationFailed, Comment(rawValue: context))
                #expect(error?.message == reasons.joined(separator: ", and "), Comment(rawValue: context))
                #expect(error?.response?.status.code == status, Comment(rawValue: context))
                #expect(error?.response?.headerFields[.contentType] == header, Comment(rawValue: context))
                #expect(error?.responseBody == body, Comment(rawValue: context))
            }
        }
    }

    @Test func aNilBodyIsEmptyAndPassesTheTypeCheckButNotTheStatusCheck() {
        #expect(ResponseAcceptance.json.check(response: self.response(204, contentType: "text/html"), data: nil) == nil)
        #expect(ResponseAcceptance.json.check(response: self.response(200), data: nil) == nil)
        let error = ResponseAcceptance.json.check(response: self.response(404, contentType: "text/html"), data: nil)
        #expect(error?.message == "response status 404 is not acceptable (200..<300)")
        #expect(error?.responseBody == nil)
    }

    @Test func withoutAResponseNothingIsChecked() {
        #expect(ResponseAcceptance.json.check(response: nil, data: Data("x".utf8)) == nil)
    }

    // MARK: - Messages

    @Test func aStatusRefusalNamesTheStatusAndTheRange() throws {
        let error = try #require(
            ResponseAcceptance.json.check(
                response: self.response(404, contentType: "application/json"),
                data: Data("{}".utf8)
            )
        )
        #expect(error.code == .responseValidationFailed)
        #expect(error.message == "response status 404 is not acceptable (200..<300)")
        #expect(error.description == "Request failed: response status 404 is not acceptable (200..<300)")
    }

    @Test func aTypeRefusalQuotesTheHeaderAsSentAndListsTheTypesSorted() throws {
        let error = try #require(
            ResponseAcceptance.xml.check(
                response: self.response(200, contentType: "Text/HTML; charset=UTF-8"),
                data: Data("<p>".utf8)
            )
        )
        #expect(error.code == .responseValidationFailed)
        #expect(
            error.message
                == #"response Content-Type "Text/HTML; charset=UTF-8" is not one of application/xml, text/xml"#
        )
    }

    @Test func whenBothFailOneErrorNamesTheStatusFirst() throws {
        let error = try #require(
            ResponseAcceptance.propertyList.check(
                response: self.response(500, contentType: "text/plain"),
                data: Data("oops".utf8)
            )
        )
        #expect(error.code == .responseValidationFailed)
        #expect(
            error.message
                == #"response status 500 is not acceptable (200..<300), and response Content-Type "text/plain" is not one of application/x-plist"#
        )
        #expect(error.underlyingError == nil)
        #expect(error.responseBody == Data("oops".utf8))
    }

    @Test func aMissingTypeWithABodyIsRefusedByName() throws {
        let error = try #require(ResponseAcceptance.image.check(response: self.response(), data: Data([0x89])))
        #expect(error.message == "the response has no Content-Type, but one of \(Preset.imageList) was expected")
    }

    @Test func statusSetsWithSeveralRangesAreListedByRange() throws {
        let acceptance = ResponseAcceptance(statusCodes: IndexSet([200, 204]).union(IndexSet(integersIn: 300..<400)))
        #expect(acceptance.check(response: self.response(204), data: Data("x".utf8)) == nil)
        #expect(acceptance.check(response: self.response(399), data: Data("x".utf8)) == nil)
        let error = try #require(acceptance.check(response: self.response(201), data: Data("x".utf8)))
        #expect(error.message == "response status 201 is not acceptable (200, 204, 300..<400)")
    }

    // MARK: - Wildcards and parameters

    @Test(
        arguments: [
            // (acceptable, Content-Type, accepted)
            (["image/*"], "image/svg+xml", true),
            (["image/*"], "IMAGE/X-Custom; q=1", true),
            (["image/*"], "text/plain", false),
            (["*/*"], "text/plain", true),
            (["*/*"], nil, true),
            (["application/*"], nil, false),
            (["application/json; charset=utf-8"], "application/json; charset=iso-8859-1", true),
            (["application/json"], "application/json-seq", false),
            (["application/json"], "application/problem+json", false),
            (["application/json"], "not a media type", false),
        ] as [(Set<String>, String?, Bool)]
    )
    func wildcardsMatchAndParametersAreIgnored(acceptable: Set<String>, contentType: String?, accepted: Bool) {
        let acceptance = ResponseAcceptance(contentTypes: acceptable)
        let error = acceptance.check(response: self.response(200, contentType: contentType), data: Data("x".utf8))
        #expect((error == nil) == accepted)
    }

    // MARK: - The body cap

    @Test(
        arguments: [
            // (body length, kept length)
            (10, 10),
            (65_535, 65_535),
            (65_536, 65_536),
            (65_537, 65_536),
            (102_400, 65_536),
        ]
    )
    func theResponseBodyKeepsTheFirst64KiB(length: Int, kept: Int) throws {
        let body = self.patterned(length)
        let error = try #require(
            ResponseAcceptance.json.check(response: self.response(200, contentType: "text/html"), data: body)
        )
        let carried = try #require(error.responseBody)
        #expect(KiteError.maximumResponseBodyLength == 65_536)
        #expect(carried.count == kept)
        #expect(carried == body.prefix(kept))
    }

    @Test func aSerializersRefusalCarriesTheCappedBodyToo() throws {
        let body = self.patterned(100 * 1024)
        #expect {
            try JSONResponseSerializer.serializer().serialize(
                request: self.get,
                response: self.response(200, contentType: "text/html"),
                data: body,
                error: nil
            )
        } throws: { error in
            let error = error as? KiteError
            return error?.code == .responseValidationFailed && error?.responseBody == body.prefix(65_536)
                && error?.responseBody?.count == 65_536
        }
    }

    // MARK: - Every serializer applies its acceptance

    @Test func everyBuiltInSerializerRefusesTheSameWayWithTheSameAcceptance() {
        let acceptance = ResponseAcceptance.json
        let response = self.response(404, contentType: "text/plain")
        let body = Data("not found".utf8)
        let expected =
            #"response status 404 is not acceptable (200..<300), and response Content-Type "text/plain" is not one of application/json, text/javascript, text/json"#
        let serializers: [any DataResponseSerializerProtocol] = [
            DataResponseSerializer(acceptance: acceptance),
            StringResponseSerializer(acceptance: acceptance),
            JSONResponseSerializer(acceptance: acceptance),
            DecodableResponseSerializer<[String: Int]>(acceptance: acceptance),
            PropertyListResponseSerializer(acceptance: acceptance),
            ImageResponseSerializer(acceptance: acceptance),
            CompoundResponseSerializer([DataResponseSerializer()], acceptance: acceptance),
            DataResponseSerializer().accepting(
                statusCodes: acceptance.statusCodes,
                contentTypes: acceptance.contentTypes
            ),
        ]
        for serializer in serializers {
            #expect {
                _ = try serializer.serialize(request: self.get, response: response, data: body, error: nil)
            } throws: { error in
                let error = error as? KiteError
                return error?.code == .responseValidationFailed && error?.message == expected
                    && error?.responseBody == body && error?.response?.status.code == 404
            }
        }
    }

    @Test func everySerializerPassesTheRequestsErrorThroughUntouched() {
        let incoming = KiteError(code: .connectionFailed, message: "connection refused")
        let calls = NIOLockedValueBox(0)
        let serializers: [any DataResponseSerializerProtocol] = [
            DataResponseSerializer(acceptance: .http),
            StringResponseSerializer(acceptance: .xml),
            JSONResponseSerializer.serializer(),
            DecodableResponseSerializer<[String: Int]>(acceptance: .json),
            PropertyListResponseSerializer(),
            ImageResponseSerializer(),
            CompoundResponseSerializer([JSONResponseSerializer.serializer(), DataResponseSerializer(acceptance: .http)]
            ),
            LineCountSerializer(calls: calls).accepting(statusCodes: IndexSet(integer: 200)),
        ]
        // The response would be refused by every acceptance above: only the incoming error may come out.
        let response = self.response(500, contentType: "text/html")
        for serializer in serializers {
            #expect {
                _ = try serializer.serialize(
                    request: self.get,
                    response: response,
                    data: Data("x".utf8),
                    error: incoming
                )
            } throws: { error in
                let error = error as? KiteError
                return error?.code == .connectionFailed && error?.message == "connection refused"
                    && error?.responseBody == nil && error?.response == nil
            }
        }
        #expect(calls.withLockedValue { $0 } == 0)
    }

    // MARK: - Setting acceptance through the protocol

    @Test func acceptableContentTypesCanBeExtendedThroughTheProtocol() throws {
        var serializer = JSONResponseSerializer.serializer()
        #expect(serializer.acceptableContentTypes == ["application/json", "text/json", "text/javascript"])
        #expect(serializer.acceptableStatusCodes == IndexSet(integersIn: 200..<300))
        let html = self.response(200, contentType: "text/html; charset=utf-8")
        let body = Data(#"{"a":1}"#.utf8)
        #expect(throws: KiteError(code: .responseValidationFailed, message: "")) {
            try serializer.serialize(request: self.get, response: html, data: body, error: nil)
        }

        serializer.acceptableContentTypes?.insert("text/html")
        #expect(
            serializer.acceptance.contentTypes == ["application/json", "text/json", "text/javascript", "text/html"]
        )
        #expect(
            try serializer.serialize(request: self.get, response: html, data: body, error: nil)
                == .object(["a": .int(1)])
        )

        serializer.acceptableStatusCodes?.insert(404)
        let notFound = self.response(404, contentType: "application/json")
        #expect(
            try serializer.serialize(request: self.get, response: notFound, data: body, error: nil)
                == .object(["a": .int(1)])
        )
        #expect {
            try serializer.serialize(
                request: self.get,
                response: self.response(500, contentType: "application/json"),
                data: body,
                error: nil
            )
        } throws: { error in
            (error as? KiteError)?.message == "response status 500 is not acceptable (200..<300, 404)"
        }

        serializer.acceptableContentTypes = nil
        let plain = self.response(200, contentType: "text/plain")
        #expect(
            try serializer.serialize(request: self.get, response: plain, data: body, error: nil)
                == .object(["a": .int(1)])
        )
    }

    @Test func genericCodeCanWidenAnyAcceptingSerializer() throws {
        func allowingSVG<Serializer: ResponseAcceptingSerializer>(_ serializer: Serializer) -> Serializer {
            var copy = serializer
            copy.acceptableContentTypes?.insert("image/svg+xml")
            return copy
        }
        let image = allowingSVG(ImageResponseSerializer())
        #expect(image.acceptance.contentTypes?.contains("image/svg+xml") == true)
        #expect(image.acceptance.contentTypes?.count == 13)
        let plist = allowingSVG(PropertyListResponseSerializer())
        #expect(plist.acceptableContentTypes == ["application/x-plist", "image/svg+xml"])
    }

    @Test func insertingIntoANilTypeSetDoesNothing() throws {
        // `.any` has no type set, so optional chaining inserts nothing: the serializer still accepts every type.
        var serializer = DataResponseSerializer()
        serializer.acceptableContentTypes?.insert("text/html")
        #expect(serializer.acceptableContentTypes == nil)
        let value = try serializer.serialize(
            request: self.get,
            response: self.response(200, contentType: "text/plain"),
            data: Data("x".utf8),
            error: nil
        )
        #expect(value == Data("x".utf8))
    }

    // MARK: - Wrapping any serializer

    @Test func acceptingWrapsACustomSerializerThatIsNotCalledWhenRefused() throws {
        let calls = NIOLockedValueBox(0)
        var wrapped = LineCountSerializer(calls: calls)
            .accepting(statusCodes: IndexSet(integersIn: 200..<300), contentTypes: ["text/plain"])
        let lines = Data("a\nb\nc\n".utf8)

        #expect(
            try wrapped.serialize(
                request: self.get,
                response: self.response(200, contentType: "text/plain; charset=utf-8"),
                data: lines,
                error: nil
            ) == 3
        )
        #expect(calls.withLockedValue { $0 } == 1)

        let refusals: [(HTTPResponse, String)] = [
            (self.response(404, contentType: "text/plain"), "response status 404 is not acceptable (200..<300)"),
            (
                self.response(200, contentType: "application/json"),
                #"response Content-Type "application/json" is not one of text/plain"#
            ),
            (self.response(200), "the response has no Content-Type, but one of text/plain was expected"),
        ]
        for (response, message) in refusals {
            #expect {
                try wrapped.serialize(request: self.get, response: response, data: lines, error: nil)
            } throws: { error in
                let error = error as? KiteError
                return error?.code == .responseValidationFailed && error?.message == message
                    && error?.responseBody == lines
            }
        }
        #expect(calls.withLockedValue { $0 } == 1, "a refused response never reaches the wrapped serializer")

        // An empty body passes the type check, and the wrapped serializer sees no error.
        #expect(try wrapped.serialize(request: self.get, response: self.response(200), data: Data(), error: nil) == 0)
        #expect(calls.withLockedValue { $0 } == 2)

        // The request's error is thrown before the wrapped serializer is asked.
        #expect(throws: KiteError(code: .timedOut, message: "")) {
            try wrapped.serialize(
                request: self.get,
                response: nil,
                data: nil,
                error: KiteError(code: .timedOut, message: "took too long")
            )
        }
        #expect(calls.withLockedValue { $0 } == 2)

        wrapped.acceptableContentTypes?.insert("application/json")
        #expect(
            try wrapped.serialize(
                request: self.get,
                response: self.response(200, contentType: "application/json"),
                data: lines,
                error: nil
            ) == 3
        )
        #expect(calls.withLockedValue { $0 } == 3)
    }

    @Test func acceptingWithoutLimitsAcceptsEverything() throws {
        let calls = NIOLockedValueBox(0)
        let wrapped = LineCountSerializer(calls: calls).accepting()
        #expect(wrapped.acceptance == .any)
        #expect(
            try wrapped.serialize(request: self.get, response: self.response(599), data: Data("x".utf8), error: nil)
                == 1
        )
        #expect(calls.withLockedValue { $0 } == 1)
    }

    // MARK: - Against real servers

    @Test(arguments: Backend.available)
    func aRefusedResponseOnTheWireIsNamedAndCarriesTheBody(backend: Backend) async throws {
        let url = try await backend.url("/html")
        let sent = try await Session.suite.request(url).serializingData().value
        let calls = NIOLockedValueBox(0)
        let response = await Session.suite.request(url)
            .serializingResponse(using: LineCountSerializer(calls: calls).accepting(contentTypes: ["application/json"]))
            .response
        let error = try #require(response.error)
        #expect(error.code == .responseValidationFailed)
        #expect(
            error.description
                == #"GET \#(url) failed: response Content-Type "text/html; charset=utf-8" is not one of application/json"#
        )
        #expect(error.response?.status.code == 200)
        #expect(error.responseBody == sent)
        #expect(calls.withLockedValue { $0 } == 0)
    }

    @Test(arguments: Backend.available)
    func validateFailureCarriesTheTeapotBody(backend: Backend) async throws {
        let url = try await backend.url("/status/418")
        let sent = try await Session.suite.request(url).serializingData().value
        #expect(String(decoding: sent, as: UTF8.self).contains("-=[ teapot ]=-"))
        let response = await Session.suite.request(url).validate().serializingData().response
        let error = try #require(response.error)
        #expect(error.code == .responseValidationFailed)
        #expect(error.message == "response status 418 is not in 200..<300")
        #expect(error.response?.status.code == 418)
        #expect(error.responseBody == sent)
        #expect(response.data == sent)
    }

    @Test(arguments: Backend.available)
    func validateFailureCarriesAResponseHeadersBody(backend: Backend) async throws {
        let url = try await backend.url("/response-headers?X-Kite-Test=carried")
        let sent = try await Session.suite.request(url).serializingData().value
        let error = try #require(
            await Session.suite.request(url).validate(statusCode: [201]).serializingJSON().response.error
        )
        #expect(error.code == .responseValidationFailed)
        #expect(error.message == "response status 200 is not in [201]")
        let body = try #require(error.responseBody)
        #expect(body == sent)
        #expect(try JSONDecoder().decode(JSONValue.self, from: body)["X-Kite-Test"] == .string("carried"))
    }

    @Test(arguments: Backend.available)
    func validateFailureKeepsOnlyTheFirst64KiBOfALongBody(backend: Backend) async throws {
        // One request: httpbin's seeded bytes share Python's global RNG across its threads, so two requests with
        // the same seed differ when other tests run at the same time.
        let url = try await backend.url("/bytes/102400?seed=7")
        let response = await Session.suite.request(url).validate(statusCode: [201]).serializingData().response
        let sent = try #require(response.data, "the response itself keeps the whole body")
        #expect(sent.count == 102_400)
        let error = try #require(response.error)
        #expect(error.code == .responseValidationFailed)
        #expect(error.responseBody?.count == 65_536)
        #expect(error.responseBody == sent.prefix(65_536))
    }

    @Test(arguments: Backend.available)
    func validateFailureIsPassedThroughBySerializersThatWouldAlsoRefuse(backend: Backend) async throws {
        let url = try await backend.url("/html")
        let sent = try await Session.suite.request(url).serializingData().value
        let error = try #require(
            await Session.suite.request(url)
                .validate(statusCode: [201])
                .serializingResponse(using: JSONResponseSerializer.serializer())
                .response
                .error
        )
        #expect(error.code == .responseValidationFailed)
        #expect(error.message == "response status 200 is not in [201]", "validate()'s error, not the serializer's")
        #expect(error.responseBody == sent)
    }

    @Test func aConnectionFailureIsPassedThroughByEverySerializer() async throws {
        let port = try Sockets.refusingPort()
        let url = "http://127.0.0.1:\(port)/json"
        let calls = NIOLockedValueBox(0)
        let serializers: [any DataResponseSerializerProtocol] = [
            JSONResponseSerializer.serializer(),
            PropertyListResponseSerializer(),
            ImageResponseSerializer(),
            CompoundResponseSerializer([JSONResponseSerializer.serializer(), DataResponseSerializer(acceptance: .http)]
            ),
            LineCountSerializer(calls: calls).accepting(statusCodes: IndexSet(integer: 200)),
        ]
        for serializer in serializers {
            let error = try #require(await Self.error(of: url, using: serializer))
            #expect(error.code == .connectionFailed)
            #expect(error.response == nil)
            #expect(error.responseBody == nil)
        }
        #expect(calls.withLockedValue { $0 } == 0)
    }

    private static func error<Serializer: DataResponseSerializerProtocol>(
        of url: String,
        using serializer: Serializer
    ) async -> KiteError? {
        await Session.suite.request(url).serializingResponse(using: serializer).response.error
    }

}
