import AsyncHTTPClient
import Testing

@Suite("Upload")
struct UploadTests {
    /// The JSON `/upload` answers for a raw body.
    private static func rawSummary(_ body: UploadBody, contentLength: Int?, contentType: String?) -> JSON {
        [
            "kind": "raw",
            "length": .number(Double(body.count)),
            "sha256": .string(body.sha256),
            "contentLength": contentLength.map { .number(Double($0)) } ?? .null,
            "contentType": contentType.map(JSON.string) ?? .null,
        ]
    }

    @Test("a raw upload reports its exact length, SHA-256, Content-Length and Content-Type")
    func rawUploadReportsLengthAndHash() async throws {
        try await withHarness { harness in
            let empty = try await harness.fetch("/upload", method: "POST", body: [])
            #expect(empty.status == 200)
            #expect(empty.header("Content-Type") == "application/json")
            #expect(try empty.json() == Self.rawSummary(UploadBody(bytes: []), contentLength: 0, contentType: nil))
            #expect(
                try empty.json()["sha256"] == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
            )

            let one = UploadBody(bytes: [0x42])
            let oneResponse = try await harness.upload(one, contentType: "text/plain")
            #expect(try oneResponse.json() == Self.rawSummary(one, contentLength: 1, contentType: "text/plain"))

            let large = UploadBody(
                bytes: pseudoRandomBytes(count: 1024 * 1024 + 3, seed: 1),
                chunkSizes: [1, 7, 4093, 65_537, 3, 100_003]
            )
            let largeResponse = try await harness.upload(large, method: "PUT")
            #expect(largeResponse.status == 200)
            #expect(
                try largeResponse.json()
                    == Self.rawSummary(large, contentLength: 1024 * 1024 + 3, contentType: "application/octet-stream")
            )
        }
    }

    @Test("a chunked upload of unknown length is read to the end")
    func chunkedUploadIsReadToTheEnd() async throws {
        try await withHarness { harness in
            let body = UploadBody(bytes: pseudoRandomBytes(count: 300_001, seed: 2), chunkSizes: [5, 65_536, 11])
            let response = try await harness.upload(body, contentType: "application/x-kite", knownLength: false)
            #expect(response.status == 200)
            #expect(try response.json() == Self.rawSummary(body, contentLength: nil, contentType: "application/x-kite"))
        }
    }

    @Test("/upload only accepts POST and PUT")
    func uploadMethods() async throws {
        try await withHarness { harness in
            let response = try await harness.fetch("/upload")
            #expect(response.status == 405)
            #expect(response.header("Allow") == "OPTIONS, POST, PUT")
        }
    }
}
