import Foundation
import Kite
import NIOConcurrencyHelpers
import Testing

@Suite struct ValidationTests {
    @Test(arguments: Backend.available)
    func statusValidationNamesTheStatusAndTheRange(backend: Backend) async throws {
        let url = try await backend.url("/status/404")
        let response = await Session.suite.request(url).validate().serializingData().response
        let error = try #require(response.error)
        #expect(error.code == .responseValidationFailed)
        #expect(error.description == "GET \(url) failed: response status 404 is not in 200..<300")
        #expect(error.response?.status.code == 404)

        let listed = await Session.suite.request(url).validate(statusCode: [200, 201]).serializingData().response
        #expect(listed.error?.message == "response status 404 is not in [200, 201]")
        let accepted = await Session.suite.request(url).validate(statusCode: [404])
            .serializingString(emptyResponseCodes: [404]).response
        #expect(accepted.error == nil)
    }

    @Test(arguments: Backend.available)
    func theBodyIsKeptWhenValidationFails(backend: Backend) async throws {
        let response = await Session.suite.request(try await backend.url("/get?keep=1"))
            .validate(statusCode: [201])
            .serializingDecodable(Echo.self)
            .response
        #expect(response.error?.code == .responseValidationFailed)
        let data = try #require(response.data)
        let echo = try JSONDecoder().decode(Echo.self, from: data)
        #expect(echo.args == ["keep": "1"])
    }

    @Test(arguments: Backend.available)
    func contentTypeIsCheckedAgainstTheAcceptHeader(backend: Backend) async throws {
        let html = try await backend.url("/html")
        let response = await Session.suite.request(html, headers: [.accept: "application/json"])
            .validate()
            .serializingString()
            .response
        let error = try #require(response.error)
        #expect(error.code == .responseValidationFailed)
        #expect(error.message == #"response Content-Type "text/html; charset=utf-8" is not one of application/json"#)

        let wildcard = await Session.suite.request(html, headers: [.accept: "application/json, text/*;q=0.5"])
            .validate()
            .serializingString()
            .response
        #expect(wildcard.error == nil)
        let any = await Session.suite.request(html, headers: [.accept: "*/*"]).validate().serializingString().response
        #expect(any.error == nil)
        let none = await Session.suite.request(html).validate().serializingString().response
        #expect(none.error == nil, "without Accept only the status is checked")
    }

    @Test(arguments: Backend.available)
    func explicitContentTypesAndWildcards(backend: Backend) async throws {
        let json = try await backend.url("/json")
        #expect(
            await Session.suite.request(json).validate(contentType: ["application/*"]).serializingJSON().response
                .error
                == nil
        )
        let failure = await Session.suite.request(json).validate(contentType: ["text/xml", "image/png"])
            .serializingJSON().response
        #expect(
            failure.error?.message == #"response Content-Type "application/json" is not one of text/xml, image/png"#
        )
    }

    @Test(arguments: Backend.available)
    func validatorsRunInOrderAndTheFirstFailureWins(backend: Backend) async throws {
        let ran = NIOLockedValueBox([String]())
        struct Custom: Error, CustomStringConvertible { var description: String { "too small" } }
        let response = await Session.suite.request(try await backend.url("/get"))
            .validate { _, _, _ in
                ran.withLockedValue { $0.append("first") }
                return .success(())
            }
            .validate { _, _, data in
                ran.withLockedValue { $0.append("second") }
                return (data?.count ?? 0) > 1_000_000 ? .success(()) : .failure(Custom())
            }
            .validate { _, _, _ in
                ran.withLockedValue { $0.append("third") }
                return .success(())
            }
            .serializingData()
            .response
        #expect(ran.withLockedValue { $0 } == ["first", "second"])
        let error = try #require(response.error)
        #expect(error.code == .responseValidationFailed)
        #expect(error.message == "custom validation failed: too small")
        #expect(error.underlyingError is Custom)
    }

    @Test(arguments: Backend.available)
    func aValidatorAddedAfterTheResponseStillApplies(backend: Backend) async throws {
        let request = Session.suite.request(try await backend.url("/status/500"))
        _ = await request.serializingData().response
        #expect(request.error == nil)
        request.validate()
        let late = await request.serializingData().response
        #expect(late.error?.code == .responseValidationFailed)
    }

    @Test func validatorsDoNotRunWithoutAResponse() async throws {
        let ran = NIOLockedValueBox(false)
        let port = try Sockets.refusingPort()
        let response = await Session.suite.request("http://127.0.0.1:\(port)/")
            .validate { _, _, _ in
                ran.withLockedValue { $0 = true }
                return .success(())
            }
            .serializingData()
            .response
        #expect(response.error?.code == .connectionFailed)
        #expect(!ran.withLockedValue { $0 })
    }
}
