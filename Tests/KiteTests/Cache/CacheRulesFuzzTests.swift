import Foundation
import HTTPTypes
import Testing

@testable import Kite

/// Deterministic pseudo-random mutations of real field values: the rules never trap and stay in range.
struct CacheRulesFuzzTests {
    /// SplitMix64: a small generator whose sequence is the same on every run and platform.
    struct SplitMix64: RandomNumberGenerator {
        var state: UInt64

        mutating func next() -> UInt64 {
            self.state &+= 0x9E37_79B9_7F4A_7C15
            var z = self.state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static let cacheControlSeeds = [
        "max-age=60, s-maxage=\"30\", no-cache=\"set-cookie, x\", private, stale-while-revalidate=10",
        "public, max-stale, min-fresh=5, immutable, must-understand, no-store, stale-if-error=20, must-revalidate",
        "max-age=99999999999999999999, proxy-revalidate, private=\"a,b\"",
    ]
    static let varySeeds = ["Accept-Encoding, User-Agent", "*", "accept, X-A, x-a"]
    static let dateSeeds = [CacheFixture.t0Text, "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994"]
    static let otherSeeds = ["10", "W/\"a\"", "\"b\"", "/items/7", "https://example.com/x#y"]
    /// Pieces that matter to the parsers: separators, quotes, escapes, digits, signs, non-ASCII.
    static let alphabet: [String] = [
        ",", "=", "\"", "\\", ";", "*", "-", "0", "9", "a", "Z", " ", "\t", "é", "🙂", "\u{0}", "\r\n", ":", "/",
        "max-age=", "no-cache", "99999999999999999999", "W/", "#", "%", "GMT", "Nov",
    ]

    static func mutate(_ text: String, using generator: inout SplitMix64) -> String {
        var characters = Array(text)
        for _ in 0..<Int.random(in: 1...4, using: &generator) {
            let position = Int.random(in: 0...characters.count, using: &generator)
            switch Int.random(in: 0..<4, using: &generator) {
            case 0:
                characters.insert(contentsOf: Self.alphabet.randomElement(using: &generator) ?? "", at: position)
            case 1 where position < characters.count:
                characters.remove(at: position)
            case 2 where position < characters.count:
                let piece = Self.alphabet.randomElement(using: &generator) ?? "x"
                characters.replaceSubrange(position...position, with: Array(piece))
            default:
                let end = min(characters.count, position + Int.random(in: 0...8, using: &generator))
                characters.insert(contentsOf: characters[position..<end], at: position)
            }
        }
        return String(characters)
    }

    static func pick(_ seeds: [String], _ generator: inout SplitMix64) -> String {
        Self.mutate(seeds.randomElement(using: &generator) ?? "", using: &generator)
    }

    // RFC 9111 throughout: whatever the fields say, nothing traps, lifetimes and ages are numbers at least 0.
    @Test func mutatedFieldsNeverTrapAndStayInRange() async throws {
        var generator = SplitMix64(state: 9111)
        let requestURL = try #require(URL(string: "https://example.com/items"))
        var outcomes: [String: Int] = [:]
        for iteration in 0..<2000 {
            await yieldNowAndThen(iteration)
            var fields: [(String, String)] = [
                ("Cache-Control", Self.pick(Self.cacheControlSeeds, &generator)),
                ("Vary", Self.pick(Self.varySeeds, &generator)),
                ("Date", Self.pick(Self.dateSeeds, &generator)),
                ("Expires", Self.pick(Self.dateSeeds, &generator)),
                ("Last-Modified", Self.pick(Self.dateSeeds, &generator)),
                ("Age", Self.pick(Self.otherSeeds, &generator)),
                ("ETag", Self.pick(Self.otherSeeds, &generator)),
                ("Location", Self.pick(Self.otherSeeds, &generator)),
                ("Connection", Self.pick(Self.varySeeds, &generator)),
            ]
            if Bool.random(using: &generator) {
                fields.append(("Cache-Control", Self.pick(Self.cacheControlSeeds, &generator)))
            }
            let status = [200, 201, 203, 206, 299, 304, 404, 500].randomElement(using: &generator) ?? 200
            let response = CacheFixture.response(status, fields)
            let request = CacheFixture.request(
                .get,
                [
                    ("Cache-Control", Self.pick(Self.cacheControlSeeds, &generator)),
                    ("Accept-Encoding", Self.pick(Self.varySeeds, &generator)),
                    ("Pragma", Self.pick(["no-cache"], &generator)),
                ]
            )
            let directives = CacheControl(response.headerFields)
            for value in [directives.maxAge, directives.sharedMaxAge, directives.minFresh, directives.staleIfError] {
                #expect((0...CacheControl.deltaSecondsLimit).contains(value ?? 0))
            }
            #expect((directives.maxStale ?? 0) >= 0)

            let shared = Bool.random(using: &generator)
            let stored = StoredResponseInfo(
                response: CacheRules.storedHead(response, shared: shared),
                requestTime: CacheFixture.at(Double.random(in: -1e6...1e6, using: &generator)),
                responseTime: CacheFixture.at(Double.random(in: -1e6...1e6, using: &generator)),
                requestMethod: .get,
                varyingRequestFields: CacheRules.varyingRequestFields(of: request, for: response)
            )
            #expect(stored.varyingRequestFields.count <= CacheRules.varyLimit)
            let now = CacheFixture.at(Double.random(in: -1e7...1e7, using: &generator))
            let lifetime = CacheRules.freshnessLifetime(of: stored, shared: shared)
            let age = CacheRules.currentAge(of: stored, now: now)
            #expect(lifetime >= 0 && !lifetime.isNaN)
            #expect(age >= 0 && !age.isNaN)
            _ = CacheRules.matchesVariant(stored, request: request)
            outcomes["\(CacheRules.reuse(of: stored, for: request, now: now, shared: shared))", default: 0] += 1
            if lifetime > 0 { outcomes["positive lifetime", default: 0] += 1 }
            if CacheRules.mayStore(response, for: request, shared: shared) { outcomes["stored", default: 0] += 1 }
            _ = CacheRules.staleIfErrorAllows(stored, request: request, now: now, shared: shared)
            let conditional = CacheRules.conditionalFields(for: [stored])
            if let since = conditional[.ifModifiedSince] {
                #expect(RetryAfter.date(from: since, now: now) != nil)
            }
            let notModified = CacheFixture.response(
                304,
                [
                    ("ETag", Self.pick(Self.otherSeeds, &generator)),
                    ("Last-Modified", Self.pick(Self.dateSeeds, &generator)),
                ]
            )
            _ = CacheRules.updatedHead(stored.response, with: notModified)
            let selected = CacheRules.selectForUpdate([stored, stored], notModified: notModified)
            #expect(selected.allSatisfy { (0..<2).contains($0) })
            let invalidated = CacheRules.invalidatedURLs(request: request, response: response, requestURL: requestURL)
            #expect(invalidated.isEmpty)
            let post = CacheFixture.request(.post)
            let unsafe = CacheRules.invalidatedURLs(request: post, response: response, requestURL: requestURL)
            #expect(unsafe.allSatisfy { $0.host == "example.com" })
        }
        // The mutations reach every decision, so the run is not 2,000 copies of one path.
        #expect(outcomes.count == 6, "\(outcomes)")
    }
}
