import Testing

@Suite("Multipart upload")
struct MultipartUploadTests {
    static let boundary = "----KiteBoundary7d3f"
    static let contentType = "multipart/form-data; boundary=\(boundary)"

    /// A part as the test writes it: its header lines and its body.
    struct Part {
        var headers: [String]
        var body: [UInt8]
    }

    static let parts: [Part] = [
        Part(headers: ["Content-Disposition: form-data; name=\"greeting\""], body: Array("hello, world".utf8)),
        Part(
            headers: [
                "Content-Disposition: form-data; name=\"blob\"; filename=\"all-bytes.bin\"",
                "Content-Type: application/octet-stream",
            ],
            body: (0...255).map { UInt8($0) }
        ),
        Part(headers: ["Content-Disposition: form-data; name=\"empty\""], body: []),
        Part(
            headers: [
                "Content-Disposition: form-data; name=\"r\u{E9}sum\u{E9}\"; filename=\"r\u{E9}sum\u{E9} \u{2713}.txt\"",
                "Content-Type: text/plain; charset=utf-8",
                "X-Note:   padded value  ",
            ],
            // Almost-delimiters inside the body must stay body bytes.
            body: Array("na\u{EF}ve\r\n-- not a boundary\r\n------KiteBoundary7d3x\r\n------KiteBoundary7d3".utf8)
        ),
        Part(
            headers: [
                "content-disposition: form-data; name=\"quote\\\"d; semi\"; filename=\"fallback.txt\"; "
                    + "filename*=UTF-8''%E2%82%AC%20rates.txt"
            ],
            body: Array("\u{20AC}1 = $1.08".utf8)
        ),
    ]

    /// The exact bytes of a multipart body with a preamble and an epilogue.
    static func body(_ parts: [Part], closing: Bool = true) -> [UInt8] {
        var bytes = Array("This is the pre-amble; it is ignored.\r\n".utf8)
        for part in parts {
            bytes += Array("--\(boundary)\r\n".utf8)
            for header in part.headers {
                bytes += Array("\(header)\r\n".utf8)
            }
            bytes += Array("\r\n".utf8)
            bytes += part.body
            bytes += Array("\r\n".utf8)
        }
        if closing {
            bytes += Array("--\(boundary)--\r\nThis epilogue is ignored too.\r\n".utf8)
        }
        return bytes
    }

    static let expectedParts: JSON = [
        [
            "name": "greeting", "filename": nil, "contentType": nil,
            "headers": ["Content-Disposition": "form-data; name=\"greeting\""],
            "length": 12, "sha256": .string(sha256("hello, world".utf8)),
        ],
        [
            "name": "blob", "filename": "all-bytes.bin", "contentType": "application/octet-stream",
            "headers": [
                "Content-Disposition": "form-data; name=\"blob\"; filename=\"all-bytes.bin\"",
                "Content-Type": "application/octet-stream",
            ],
            "length": 256,
            "sha256": "40aff2e9d2d8922e47afd4648e6967497158785fbd1da870e7110266bf944880",
        ],
        [
            "name": "empty", "filename": nil, "contentType": nil,
            "headers": ["Content-Disposition": "form-data; name=\"empty\""],
            "length": 0,
            "sha256": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        ],
        [
            "name": "r\u{E9}sum\u{E9}", "filename": "r\u{E9}sum\u{E9} \u{2713}.txt",
            "contentType": "text/plain; charset=utf-8",
            "headers": [
                "Content-Disposition":
                    "form-data; name=\"r\u{E9}sum\u{E9}\"; filename=\"r\u{E9}sum\u{E9} \u{2713}.txt\"",
                "Content-Type": "text/plain; charset=utf-8",
                "X-Note": "padded value",
            ],
            "length": .number(Double(parts[3].body.count)),
            "sha256": .string(sha256(parts[3].body)),
        ],
        [
            "name": "quote\"d; semi", "filename": "\u{20AC} rates.txt", "contentType": nil,
            "headers": [
                "content-disposition": .string(
                    "form-data; name=\"quote\\\"d; semi\"; filename=\"fallback.txt\"; "
                        + "filename*=UTF-8''%E2%82%AC%20rates.txt"
                )
            ],
            "length": 12, "sha256": .string(sha256("\u{20AC}1 = $1.08".utf8)),
        ],
    ]

    @Test("each part is reported with its name, filename, content type, headers, length and SHA-256")
    func partsAreReported() async throws {
        let bytes = Self.body(Self.parts)
        let expected: JSON = [
            "kind": "multipart",
            "length": .number(Double(bytes.count)),
            "sha256": .string(sha256(bytes)),
            "contentLength": .number(Double(bytes.count)),
            "contentType": .string(Self.contentType),
            "boundary": .string(Self.boundary),
            "parts": Self.expectedParts,
        ]
        try await withHarness { harness in
            let whole = try await harness.fetch("/upload", method: "POST", contentType: Self.contentType, bytes: bytes)
            #expect(whole.status == 200)
            #expect(whole.header("Content-Type") == "application/json")
            #expect(try whole.json() == expected)

            // Tiny chunks split delimiters and headers everywhere; the answer is the same.
            let trickled = try await harness.upload(
                UploadBody(bytes: bytes, chunkSizes: [1, 2, 3, 5, 7, 11]),
                method: "PUT",
                contentType: "multipart/form-data; boundary=\"\(Self.boundary)\"",
                knownLength: false
            )
            #expect(trickled.status == 200)
            var chunkedExpected = try #require(expected.object)
            chunkedExpected["contentLength"] = JSON.null
            chunkedExpected["contentType"] = .string("multipart/form-data; boundary=\"\(Self.boundary)\"")
            #expect(try trickled.json() == .object(chunkedExpected), "\(trickled.text)")
        }
    }

    /// Malformed bodies: what is wrong, the Content-Type, the bytes and a phrase the error must contain.
    static let malformedBodies: [(name: String, contentType: String, bytes: [UInt8], message: String)] = [
        ("missing closing delimiter", contentType, body(parts, closing: false), "ends before the closing"),
        ("ends after a delimiter", contentType, Array("--\(boundary)\r\n".utf8), "ends before the closing"),
        (
            "ends inside a part body", contentType,
            Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nsome da".utf8),
            "ends before the closing"
        ),
        ("wrong boundary", "multipart/form-data; boundary=other", body(parts), "does not occur"),
        ("garbage", contentType, Array("this is not multipart at all".utf8), "does not occur"),
        ("empty body", contentType, [], "does not occur"),
        (
            "header line without a colon", contentType,
            Array("--\(boundary)\r\nNoColonHere\r\n\r\ndata\r\n--\(boundary)--\r\n".utf8), "invalid"
        ),
        (
            "junk after a delimiter", contentType,
            Array("--\(boundary)junk\r\n\r\ndata\r\n--\(boundary)--\r\n".utf8), "invalid"
        ),
        ("no boundary parameter", "multipart/form-data", body(parts), "no boundary parameter"),
    ]

    @Test("a malformed multipart body gets a 400 JSON error and the connection stays usable")
    func malformedBodyIsRejected() async throws {
        try await withHarness { harness in
            for (name, contentType, bytes, message) in Self.malformedBodies {
                let response = try await harness.fetch(
                    "/upload",
                    method: "POST",
                    contentType: contentType,
                    bytes: bytes
                )
                #expect(response.status == 400, "\(name)")
                #expect(response.header("Content-Type") == "application/json", "\(name)")
                let error = try #require(try response.json()["error"]?.string, "\(name)")
                #expect(error.contains(message), "\(name): \(error)")
                // The connection is still good for the next request.
                let next = try await harness.fetch("/upload", method: "POST", body: [1, 2, 3])
                #expect(try next.json()["length"] == 3, "\(name)")
            }
        }
    }

    @Test("a 64 MiB multipart body streams through with exact lengths and hashes")
    func largeMultipartBody() async throws {
        let block = pseudoRandomBytes(count: 1024 * 1024, seed: 64)
        let head = Array(
            ("--\(Self.boundary)\r\nContent-Disposition: form-data; name=\"meta\"\r\n\r\n{\"kind\": \"big\"}\r\n"
                + "--\(Self.boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"big.bin\"\r\n"
                + "Content-Type: application/octet-stream\r\n\r\n").utf8
        )
        let tail = Array("\r\n--\(Self.boundary)--\r\n".utf8)
        let blocks = Array(repeating: block, count: 64)
        let body = UploadBody(segments: [head] + blocks + [tail], chunkSizes: [262_147, 1, 131_071, 8191])
        // SHA-256 of the 64 blocks, computed once outside the test (hashing 64 MiB here would slow
        // down the tests that run alongside).
        let fileHash = "a9095ba083444157898d6d8c2f2a7910ae9ff4ddf321352efe65054dd3110e5a"
        try await withHarness { harness in
            let response = try await harness.upload(body, contentType: Self.contentType, timeout: .seconds(120))
            #expect(response.status == 200)
            let json = try response.json()
            #expect(json["length"] == .number(Double(body.count)))
            guard case .array(let parts) = json["parts"] else {
                Issue.record("no parts in \(json)")
                return
            }
            #expect(parts.count == 2)
            #expect(parts.first?["sha256"] == .string(sha256("{\"kind\": \"big\"}".utf8)))
            #expect(parts.last?["filename"] == "big.bin")
            #expect(parts.last?["length"] == .number(Double(64 * 1024 * 1024)))
            #expect(parts.last?["sha256"] == .string(fileHash))
        }
    }
}

extension Harness {
    /// Sends `bytes` in one piece with the given content type.
    func fetch(_ path: String, method: String, contentType: String, bytes: [UInt8]) async throws -> Fetched {
        try await self.fetch(path, method: method, headers: [("Content-Type", contentType)], body: bytes)
    }
}
