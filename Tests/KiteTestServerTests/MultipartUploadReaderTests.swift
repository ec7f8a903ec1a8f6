import NIOCore
import Testing

@testable import KiteTestServer

@Suite("Multipart upload reader")
struct MultipartUploadReaderTests {
    /// A SplitMix64 generator, so that every run tests the same bodies.
    private struct SplitMix: RandomNumberGenerator {
        var state: UInt64

        mutating func next() -> UInt64 {
            self.state &+= 0x9E37_79B9_7F4A_7C15
            var mixed = self.state
            mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
            mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
            return mixed ^ (mixed >> 31)
        }
    }

    /// What a reader made of a body: each part's headers, length and hash, or the failure.
    private static func outcome(_ body: [UInt8], boundary: String, chunkSizes: [Int], skipsBodyRuns: Bool) -> String {
        let reader = MultipartUploadReader(boundary: boundary, skipsBodyRuns: skipsBodyRuns)
        var offset = 0
        var chunk = 0
        do {
            while offset < body.count {
                let size = min(chunkSizes[chunk % chunkSizes.count], body.count - offset)
                try reader.read(ByteBuffer(bytes: body[offset..<offset + size]))
                offset += size
                chunk += 1
            }
            return try reader.finish().map { part in
                let headers = part.headers.map { "\($0.name)=\($0.value)" }.joined(separator: "|")
                return "[\(headers)] \(part.digest.length) \(part.digest.hexDigest)"
            }.joined(separator: "\n")
        } catch {
            return "\(error)"
        }
    }

    /// A multipart body whose part bodies are full of CRs, LFs, dashes and near-delimiters.
    private static func trickyBody(boundary: String, using generator: inout SplitMix) -> [UInt8] {
        let pieces: [[UInt8]] = [
            [0x0D], [0x0A], Array("-".utf8), Array("ab".utf8), [0x00, 0xFF], Array("\r\n".utf8),
            Array("\r\n--".utf8), Array("\r\n--\(boundary.dropLast())".utf8), Array("--\(boundary)".utf8),
            Array("\r\r\n-".utf8),
        ]
        var body: [UInt8] = []
        for index in 0..<Int.random(in: 1...4, using: &generator) {
            body += Array("--\(boundary)\r\n".utf8)
            body += Array("Content-Disposition: form-data; name=\"f\(index)\"\r\n".utf8)
            if Bool.random(using: &generator) {
                body += Array("Content-Type: application/x-test-\(index)\r\n".utf8)
            }
            body += Array("\r\n".utf8)
            for _ in 0..<Int.random(in: 0...40, using: &generator) {
                body += pieces.randomElement(using: &generator) ?? []
            }
            body += Array("\r\n".utf8)
        }
        body += Array("--\(boundary)--\r\n".utf8)
        return body
    }

    @Test("hashing body runs outside the parser gives the same parts as feeding it every byte")
    func skippingBodyRunsMatchesTheParser() async {
        var generator = SplitMix(state: 2024)
        let boundary = "xq-7"
        var successes = 0
        for round in 0..<60 {
            // Let the other tests' servers run: some of them measure timing.
            await Task.yield()
            var body = Self.trickyBody(boundary: boundary, using: &generator)
            if round % 5 == 4 {
                body = Array(body.prefix(Int.random(in: 0..<body.count, using: &generator)))
            }
            let chunkSizes = (0..<3).map { _ in Int.random(in: 1...9, using: &generator) }
            for sizes in [[body.count + 1], chunkSizes] {
                let expected = Self.outcome(body, boundary: boundary, chunkSizes: sizes, skipsBodyRuns: false)
                let actual = Self.outcome(body, boundary: boundary, chunkSizes: sizes, skipsBodyRuns: true)
                #expect(actual == expected, "round \(round), chunks \(sizes)")
            }
            let whole = Self.outcome(body, boundary: boundary, chunkSizes: [body.count + 1], skipsBodyRuns: true)
            if whole.hasPrefix("[") {
                successes += 1
                // How the body is split does not change the parts.
                #expect(Self.outcome(body, boundary: boundary, chunkSizes: chunkSizes, skipsBodyRuns: true) == whole)
            }
        }
        #expect(successes > 20)
    }
}
