import Foundation
import NIOConcurrencyHelpers
import Testing

@testable import Kite

/// A serializer that counts its calls and gives the body's length.
private struct CountingSerializer: DataResponseSerializerProtocol {
    let calls: NIOLockedValueBox<Int>

    func serialize(request: HTTPRequest?, response: HTTPResponse?, data: Data?, error: KiteError?) throws -> Int {
        self.calls.withLockedValue { $0 += 1 }
        if let error { throw error }
        return data?.count ?? 0
    }
}

/// A serializer that throws an error that is not a ``KiteError``.
private struct ThrowingSerializer: DataResponseSerializerProtocol {
    struct Boom: Error, CustomStringConvertible {
        var description: String { "boom" }
    }

    func serialize(request: HTTPRequest?, response: HTTPResponse?, data: Data?, error: KiteError?) throws -> Int {
        throw Boom()
    }
}

@Suite struct CompoundSerializerTests {
    private let get = HTTPRequest(method: .get, scheme: "http", authority: "example.com", path: "/")

    private static let jsonList = "application/json, text/javascript, text/json"
    private static let imageList =
        "image/bmp, image/gif, image/heic, image/ico, image/jpeg, image/png, image/tiff, image/webp, image/x-bmp, "
        + "image/x-icon, image/x-win-bitmap, image/x-xbitmap"

    private func response(_ code: Int = 200, contentType: String? = nil) -> HTTPResponse {
        var fields = HTTPFields()
        if let contentType { fields[.contentType] = contentType }
        return HTTPResponse(status: .init(code: code), headerFields: fields)
    }

    /// JSON, property list and image serializers with AFNetworking's acceptance, in two orders.
    private static let jsonFirst: [any DataResponseSerializerProtocol] = [
        JSONResponseSerializer.serializer(), PropertyListResponseSerializer(), ImageResponseSerializer(),
    ]
    private static let imageFirst: [any DataResponseSerializerProtocol] = [
        ImageResponseSerializer(), PropertyListResponseSerializer(), JSONResponseSerializer.serializer(),
    ]

    /// The pixel size of the PNG each backend sends at `/image/png`: the in-process server's 16x16 kite
    /// (`StaticContent.pngImage`) and httpbin 0.10.4's 100x100 pig.
    private static func pngSize(of backend: Backend) -> (width: Int, height: Int) {
        switch backend {
        case .inProcess: (16, 16)
        case .httpbin: (100, 100)
        }
    }

    // MARK: - The rules, directly

    @Test func theFirstSerializerThatSucceedsWinsSoOrderMatters() throws {
        let response = self.response(contentType: "application/json")
        let body = Data(#"{"a":1}"#.utf8)
        let dataFirst = CompoundResponseSerializer([
            DataResponseSerializer(acceptance: .http), JSONResponseSerializer.serializer(),
        ])
        #expect(try dataFirst.serialize(request: self.get, response: response, data: body, error: nil) as? Data == body)
        let jsonFirst = CompoundResponseSerializer([
            JSONResponseSerializer.serializer(), DataResponseSerializer(acceptance: .http),
        ])
        #expect(
            try jsonFirst.serialize(request: self.get, response: response, data: body, error: nil) as? JSONValue
                == .object(["a": .int(1)])
        )
    }

    @Test func serializersAfterTheWinnerAreNotCalledAndThoseBeforeAreTried() throws {
        let before = NIOLockedValueBox(0)
        let after = NIOLockedValueBox(0)
        let compound = CompoundResponseSerializer([
            CountingSerializer(calls: before).accepting(contentTypes: ["image/png"]),
            JSONResponseSerializer.serializer(),
            CountingSerializer(calls: after),
        ])
        let value = try compound.serialize(
            request: self.get,
            response: self.response(contentType: "application/json"),
            data: Data("[1]".utf8),
            error: nil
        )
        #expect(value as? JSONValue == .array([.int(1)]))
        #expect(before.withLockedValue { $0 } == 0, "refused by its acceptance before it was called")
        #expect(after.withLockedValue { $0 } == 0)
    }

    @Test func whenAllFailTheErrorKeepsEveryErrorInOrderAndTheBody() throws {
        let body = Data("<a/>".utf8)
        let response = self.response(contentType: "application/xml")
        let compound = CompoundResponseSerializer(Self.jsonFirst)
        let expected = [
            #"response Content-Type "application/xml" is not one of \#(Self.jsonList)"#,
            #"response Content-Type "application/xml" is not one of application/x-plist"#,
            #"response Content-Type "application/xml" is not one of \#(Self.imageList)"#,
        ]
        #expect {
            try compound.serialize(request: self.get, response: response, data: body, error: nil)
        } throws: { error in
            guard let error = error as? KiteError,
                let failure = error.underlyingError as? CompoundSerializationFailure
            else { return false }
            return error.code == .responseValidationFailed
                && error.message
                    == "no serializer accepted the response: 1) \(expected[0]); 2) \(expected[1]); 3) \(expected[2])"
                && failure.errors.map(\.message) == expected
                && failure.errors.allSatisfy { $0.code == .responseValidationFailed && $0.responseBody == body }
                && failure.description == expected.joined(separator: "; ")
                && error.responseBody == body
                && error.response?.headerFields[.contentType] == "application/xml"
        }
    }

    @Test func mixedCodesGiveResponseSerializationFailed() {
        let compound = CompoundResponseSerializer([
            JSONResponseSerializer.serializer(), ImageResponseSerializer(),
        ])
        #expect {
            try compound.serialize(
                request: self.get,
                response: self.response(contentType: "application/json"),
                data: Data("{".utf8),
                error: nil
            )
        } throws: { error in
            guard let error = error as? KiteError,
                let failure = error.underlyingError as? CompoundSerializationFailure
            else { return false }
            return error.code == .responseSerializationFailed
                && failure.errors.map(\.code) == [.responseSerializationFailed, .responseValidationFailed]
                && failure.errors[0].message.hasPrefix("the body is not valid JSON: ")
                && failure.errors[1].message
                    == #"response Content-Type "application/json" is not one of \#(Self.imageList)"#
                && error.responseBody == Data("{".utf8)
        }
    }

    @Test func aCommonCodeOtherThanValidationIsKept() {
        let compound = CompoundResponseSerializer([
            JSONResponseSerializer(), DecodableResponseSerializer<[String: Int]>(),
        ])
        #expect {
            try compound.serialize(request: self.get, response: self.response(), data: Data(), error: nil)
        } throws: { error in
            guard let error = error as? KiteError,
                let failure = error.underlyingError as? CompoundSerializationFailure
            else { return false }
            return error.code == .responseSerializationFailed
                && failure.errors.map(\.message) == [
                    "the response body is empty (status 200), so it cannot be serialized as JSON",
                    "the response body is empty (status 200), so it cannot be serialized as Dictionary<String, Int>",
                ]
                && error.responseBody == Data()
        }
    }

    @Test func anErrorThatIsNotAKiteErrorIsWrapped() {
        let compound = CompoundResponseSerializer([ThrowingSerializer()])
        #expect {
            try compound.serialize(request: self.get, response: self.response(), data: Data("x".utf8), error: nil)
        } throws: { error in
            guard let error = error as? KiteError,
                let failure = error.underlyingError as? CompoundSerializationFailure
            else { return false }
            return error.code == .responseSerializationFailed
                && error.message == "no serializer accepted the response: 1) ThrowingSerializer failed: boom"
                && failure.errors.count == 1
                && failure.errors[0].underlyingError is ThrowingSerializer.Boom
        }
    }

    @Test func theRequestsErrorIsPassedThroughWithoutTryingTheSerializers() {
        let calls = NIOLockedValueBox(0)
        let compound = CompoundResponseSerializer([CountingSerializer(calls: calls), CountingSerializer(calls: calls)])
        #expect {
            try compound.serialize(
                request: self.get,
                response: self.response(500, contentType: "text/html"),
                data: Data("x".utf8),
                error: KiteError(code: .connectionLost, message: "connection reset by peer")
            )
        } throws: { error in
            let error = error as? KiteError
            return error?.code == .connectionLost && error?.message == "connection reset by peer"
                && error?.underlyingError == nil && error?.responseBody == nil
        }
        #expect(calls.withLockedValue { $0 } == 0)
    }

    @Test func theCompoundsOwnAcceptanceIsCheckedFirst() throws {
        let calls = NIOLockedValueBox(0)
        var compound = CompoundResponseSerializer([CountingSerializer(calls: calls)], acceptance: .http)
        #expect {
            try compound.serialize(request: self.get, response: self.response(404), data: Data("x".utf8), error: nil)
        } throws: { error in
            let error = error as? KiteError
            return error?.code == .responseValidationFailed
                && error?.message == "response status 404 is not acceptable (200..<300)"
                && error?.underlyingError == nil
        }
        #expect(calls.withLockedValue { $0 } == 0)
        compound.acceptableStatusCodes?.insert(404)
        #expect(
            try compound.serialize(request: self.get, response: self.response(404), data: Data("xy".utf8), error: nil)
                as? Int == 2
        )
        #expect(calls.withLockedValue { $0 } == 1)
    }

    @Test func anEmptyCompoundSaysSo() {
        #expect {
            try CompoundResponseSerializer([]).serialize(
                request: self.get,
                response: self.response(),
                data: Data("x".utf8),
                error: nil
            )
        } throws: { error in
            let error = error as? KiteError
            return error?.code == .responseSerializationFailed
                && error?.message == "the compound serializer has no serializers"
                && (error?.underlyingError as? CompoundSerializationFailure)?.errors.isEmpty == true
                && error?.responseBody == Data("x".utf8)
        }
    }

    // MARK: - Against real servers

    @Test(arguments: Backend.available)
    func jsonIsReadByTheJSONSerializerInEitherOrder(backend: Backend) async throws {
        let url = try await backend.url("/json")
        let expected = try await Session.suite.request(url).serializingJSON().value
        #expect(expected["slideshow"]?["title"] == .string("Sample Slide Show"))
        for serializers in [Self.jsonFirst, Self.imageFirst] {
            let value = try await Session.suite.request(url)
                .serializingResponse(using: CompoundResponseSerializer(serializers))
                .value
            #expect(value as? JSONValue == expected)
            #expect(value as? ImageInfo == nil)
        }
    }

    @Test(arguments: Backend.available)
    func aPNGIsReadByTheImageSerializerInEitherOrder(backend: Backend) async throws {
        let url = try await backend.url("/image/png")
        let sent = try await Session.suite.request(url).serializingData().value
        let size = Self.pngSize(of: backend)
        for serializers in [Self.jsonFirst, Self.imageFirst] {
            let value = try await Session.suite.request(url)
                .serializingResponse(using: CompoundResponseSerializer(serializers))
                .value
            let info = try #require(value as? ImageInfo)
            #expect(info.format == .png)
            #expect(info.pixelWidth == size.width)
            #expect(info.pixelHeight == size.height)
            #expect(info.data == sent)
            #expect(value as? JSONValue == nil)
        }
    }

    @Test(arguments: Backend.available)
    func xmlIsRefusedByAllThreeWithTheirErrorsInOrder(backend: Backend) async throws {
        let url = try await backend.url("/xml")
        let sent = try await Session.suite.request(url).serializingData().value
        let error = try #require(
            await Session.suite.request(url)
                .serializingResponse(using: CompoundResponseSerializer(Self.imageFirst))
                .response
                .error
        )
        #expect(error.code == .responseValidationFailed)
        let failure = try #require(error.underlyingError as? CompoundSerializationFailure)
        #expect(
            failure.errors.map(\.message) == [
                #"response Content-Type "application/xml" is not one of \#(Self.imageList)"#,
                #"response Content-Type "application/xml" is not one of application/x-plist"#,
                #"response Content-Type "application/xml" is not one of \#(Self.jsonList)"#,
            ]
        )
        #expect(error.description.hasPrefix("GET \(url) failed: no serializer accepted the response: 1) "))
        #expect(error.responseBody == sent)
        #expect(error.response?.status.code == 200)
    }

    @Test(arguments: Backend.available)
    func aRawDataSerializerLastIsAFNetworkingsFallback(backend: Backend) async throws {
        let fallback = CompoundResponseSerializer(Self.jsonFirst + [DataResponseSerializer(acceptance: .http)])

        let xml = try await backend.url("/xml")
        let sent = try await Session.suite.request(xml).serializingData().value
        #expect(String(decoding: sent, as: UTF8.self).contains("<slideshow"))
        let value = try await Session.suite.request(xml).serializingResponse(using: fallback).value
        #expect(value as? Data == sent)

        // The fallback takes only acceptable statuses, like AFNetworking's.
        let missing = try await backend.url("/status/404")
        let error = try #require(
            await Session.suite.request(missing).serializingResponse(using: fallback).response.error
        )
        #expect(error.code == .responseValidationFailed)
        let failure = try #require(error.underlyingError as? CompoundSerializationFailure)
        #expect(failure.errors.count == 4)
        #expect(failure.errors.allSatisfy { $0.message == "response status 404 is not acceptable (200..<300)" })
        #expect(error.responseBody?.isEmpty ?? true)
    }

    @Test(arguments: Backend.available)
    func orderDecidesBetweenTwoSerializersThatBothAccept(backend: Backend) async throws {
        let url = try await backend.url("/xml")
        let sent = try await Session.suite.request(url).serializingData().value
        let stringFirst = try await Session.suite.request(url)
            .serializingResponse(
                using: CompoundResponseSerializer([
                    StringResponseSerializer(acceptance: .xml), DataResponseSerializer(acceptance: .http),
                ])
            )
            .value
        #expect(stringFirst as? String == String(decoding: sent, as: UTF8.self))
        let dataFirst = try await Session.suite.request(url)
            .serializingResponse(
                using: CompoundResponseSerializer([
                    DataResponseSerializer(acceptance: .http), StringResponseSerializer(acceptance: .xml),
                ])
            )
            .value
        #expect(dataFirst as? Data == sent)
    }

    @Test(arguments: Backend.available)
    func aFailedValidateIsPassedThroughByTheCompound(backend: Backend) async throws {
        let url = try await backend.url("/json")
        let calls = NIOLockedValueBox(0)
        let error = try #require(
            await Session.suite.request(url)
                .validate(contentType: ["image/png"])
                .serializingResponse(
                    using: CompoundResponseSerializer([
                        CountingSerializer(calls: calls), DataResponseSerializer(acceptance: .http),
                    ])
                )
                .response
                .error
        )
        #expect(error.code == .responseValidationFailed)
        #expect(error.message == #"response Content-Type "application/json" is not one of image/png"#)
        #expect(error.underlyingError == nil)
        #expect(calls.withLockedValue { $0 } == 0)
    }

    // MARK: - Images

    @Test(arguments: Backend.available)
    func serializingImageReadsThePNGsFormatAndPixelSize(backend: Backend) async throws {
        let url = try await backend.url("/image/png")
        let sent = try await Session.suite.request(url).serializingData().value
        let size = Self.pngSize(of: backend)
        let info = try await Session.suite.request(url).serializingImage().value
        #expect(info.format == .png)
        #expect(info.mimeType == "image/png")
        #expect(info.pixelWidth == size.width)
        #expect(info.pixelHeight == size.height)
        #expect(info.scale == 1)
        #expect(info.width == Double(size.width))
        #expect(info.data == sent)
    }

    @Test(arguments: Backend.available)
    func imageScaleSetsThePointSize(backend: Backend) async throws {
        // No route answers at a path ending in `@2x.png`, so the scale is set explicitly here; the URL rule is
        // tested directly below.
        let url = try await backend.url("/image/png")
        let size = Self.pngSize(of: backend)
        let info = try await Session.suite.request(url).serializingImage(imageScale: 2).value
        #expect(info.scale == 2)
        #expect(info.pixelWidth == size.width)
        #expect(info.width == Double(size.width) / 2)
        #expect(info.height == Double(size.height) / 2)
    }

    @Test(
        arguments: [
            // (path, imageScale, expected scale)
            ("/icons/kite@2x.png", nil, 2.0),
            ("/icons/kite@3x.png", nil, 3.0),
            ("/icons/kite@2x", nil, 2.0),
            ("/icons/kite.png", nil, 1.0),
            ("/icons/kite.png?name=kite@2x.png", nil, 1.0),
            ("/icons/kite@2x.png", 1.0, 1.0),
            ("/icons/kite.png", 3.0, 3.0),
        ] as [(String, Double?, Double)]
    )
    func theScaleComesFromAnAt2xSuffixUnlessSet(path: String, imageScale: Double?, expected: Double) throws {
        // The signature and IHDR of a 64x32 PNG.
        let png = Data([
            0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52,
            0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0x00, 0x20, 0x08, 0x02, 0x00, 0x00, 0x00, 0x2D, 0xFF, 0xE9, 0xD3,
        ])
        let request = HTTPRequest(method: .get, scheme: "http", authority: "example.com", path: path)
        let info = try ImageResponseSerializer(imageScale: imageScale).serialize(
            request: request,
            response: self.response(contentType: "image/png"),
            data: png,
            error: nil
        )
        #expect(info.pixelWidth == 64)
        #expect(info.pixelHeight == 32)
        #expect(info.scale == expected)
        #expect(info.width == 64 / expected)
    }

    @Test(arguments: Backend.available)
    func htmlIsRefusedByTheImageSerializerWithItsBody(backend: Backend) async throws {
        let url = try await backend.url("/html")
        let sent = try await Session.suite.request(url).serializingData().value
        let error = try #require(
            await Session.suite.request(url).serializingImage(acceptance: .image).response.error
        )
        #expect(error.code == .responseValidationFailed)
        #expect(
            error.description
                == #"GET \#(url) failed: response Content-Type "text/html; charset=utf-8" is not one of \#(Self.imageList)"#
        )
        #expect(error.response?.status.code == 200)
        #expect(error.responseBody == sent)

        // Accepting any type (serializingImage's default), the body is read and is not an image.
        let unread = try #require(await Session.suite.request(url).serializingImage().response.error)
        #expect(unread.code == .responseSerializationFailed)
        #expect(unread.response?.status.code == 200)
    }

    @Test func anEmptyBodyIsNeverAnImage() {
        for status in [200, 204] {
            #expect {
                try ImageResponseSerializer().serialize(
                    request: self.get,
                    response: self.response(status, contentType: "image/png"),
                    data: Data(),
                    error: nil
                )
            } throws: { error in
                let error = error as? KiteError
                return error?.code == .responseSerializationFailed
                    && error?.message == "the response body is empty, so it is not an image"
            }
        }
    }
}
