import AsyncHTTPClient
import Testing

@Suite("Byte ranges")
struct RangeTests {
    /// The first `count` bytes of the alphabet repeated, starting at offset `from`.
    private func alphabet(from start: Int, count: Int) -> [UInt8] {
        (start..<start + count).map { UInt8(ascii: "a") + UInt8($0 % 26) }
    }

    @Test("/range/n without Range sends the whole body")
    func wholeBody() async throws {
        try await withHarness { harness in
            let response = try await harness.fetch("/range/30")
            #expect(response.status == 200)
            #expect(response.text == "abcdefghijklmnopqrstuvwxyzabcd")
            #expect(response.header("ETag") == "range30")
            #expect(response.header("Accept-Ranges") == "bytes")
            #expect(response.header("Content-Length") == "30")
            #expect(response.header("Content-Range") == "bytes 0-29/30")
            #expect(response.header("Content-Type") == "application/octet-stream")
        }
    }

    @Test(
        "single ranges give 206 with the right slice",
        arguments: [
            ("bytes=10-19", 10, 19),
            ("bytes=95-", 95, 99),
            ("bytes=-5", 95, 99),
            ("bytes=0-0", 0, 0),
            ("bytes=90-500", 90, 99),
        ]
    )
    func partial(header: String, first: Int, last: Int) async throws {
        try await withHarness { harness in
            let response = try await harness.fetch("/range/100", headers: [("Range", header)])
            #expect(response.status == 206)
            #expect(response.header("Content-Range") == "bytes \(first)-\(last)/100")
            #expect(response.header("Content-Length") == String(last - first + 1))
            #expect(response.body == alphabet(from: first, count: last - first + 1))
        }
    }

    @Test("a range covering everything is a 200")
    func fullRange() async throws {
        try await withHarness { harness in
            let response = try await harness.fetch("/range/26", headers: [("Range", "bytes=-100")])
            #expect(response.status == 200)
            #expect(response.text == "abcdefghijklmnopqrstuvwxyz")
        }
    }

    @Test(
        "unsatisfiable ranges give 416 with Content-Range */n",
        arguments: ["bytes=100-", "bytes=150-200", "bytes=-0"]
    )
    func unsatisfiable(header: String) async throws {
        try await withHarness { harness in
            let response = try await harness.fetch("/range/100", headers: [("Range", header)])
            #expect(response.status == 416)
            #expect(response.header("Content-Range") == "bytes */100")
            #expect(response.header("ETag") == "range100")
            #expect(response.body.isEmpty)
        }
    }

    @Test("unsupported Range headers are ignored")
    func ignored() async throws {
        try await withHarness { harness in
            for header in ["items=0-1", "bytes=0-1,5-6", "bytes=5-2", "bytes=x-y"] {
                let response = try await harness.fetch("/range/10", headers: [("Range", header)])
                #expect(response.status == 200, "\(header)")
                #expect(response.text == "abcdefghij")
            }
        }
    }

    @Test("If-Range with another tag sends the whole body")
    func ifRange() async throws {
        try await withHarness { harness in
            let stale = try await harness.fetch(
                "/range/50",
                headers: [("Range", "bytes=10-"), ("If-Range", "\"other\"")]
            )
            #expect(stale.status == 200)
            #expect(stale.body.count == 50)
            for tag in ["range50", "\"range50\""] {
                let current = try await harness.fetch(
                    "/range/50",
                    headers: [("Range", "bytes=10-"), ("If-Range", tag)]
                )
                #expect(current.status == 206)
                #expect(current.body == alphabet(from: 10, count: 40))
            }
        }
    }

    @Test("a large range body streams correctly")
    func largeRange() async throws {
        try await withHarness { harness in
            let total = 5 * 1024 * 1024
            let whole = try await harness.fetch("/range/\(total)")
            #expect(whole.body.count == total)
            #expect(whole.body == alphabet(from: 0, count: total))
            let tail = try await harness.fetch(
                "/range/\(total)?chunk_size=65536",
                headers: [("Range", "bytes=3000000-")]
            )
            #expect(tail.status == 206)
            #expect(tail.body == alphabet(from: 3_000_000, count: total - 3_000_000))
        }
    }

    @Test("duration spreads the body out")
    func duration() async throws {
        try await withHarness { harness in
            let clock = ContinuousClock()
            let start = clock.now
            let response = try await harness.fetch("/range/40?duration=0.5&chunk_size=10")
            #expect(response.body == alphabet(from: 0, count: 40))
            #expect(start.duration(to: clock.now) >= .milliseconds(450))
        }
    }

    @Test("sizes out of range are 404 and bad parameters 400")
    func invalid() async throws {
        try await withHarness { harness in
            let zero = try await harness.fetch("/range/0")
            #expect(zero.status == 404)
            #expect(zero.header("ETag") == "range0")
            #expect(try await harness.fetch("/range/\(2 << 30)").status == 404)
            #expect(try await harness.fetch("/range/abc").status == 400)
            #expect(try await harness.fetch("/range/10?chunk_size=z").status == 400)
        }
    }
}
