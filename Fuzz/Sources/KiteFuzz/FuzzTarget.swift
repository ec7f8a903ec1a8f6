import Foundation

@testable import KiteUnderFuzz

/// The fuzz targets: one per parser Kite applies to what servers, proxies, the kernel and users hand it. Each
/// checks properties, not only that nothing traps: see each `run`.
enum FuzzTarget: String, CaseIterable, Sendable {
    case imageHeader
    case serverSentEvents
    case utf8Lines
    case jsonLines
    case setCookie
    case cookieDate
    case contentDisposition
    case authenticationChallenges
    case mediaType
    case proxyVariables
    case netlink
    case decompression
    case digestAuthorization
    case retryAfter
    case url
    case urlRequest
    case resumeData
    case charset
    case propertyList
    case xmlDocument
    case xmlParser
    case cacheControl
    case cacheFreshness
    case cacheEntry
    case client
    case clientHTTP2

    /// The target `KITE_FUZZ_TARGET` names.
    static let selected: FuzzTarget = {
        let name = ProcessInfo.processInfo.environment["KITE_FUZZ_TARGET"] ?? ""
        guard let target = FuzzTarget(rawValue: name) else {
            fatalError("KITE_FUZZ_TARGET=\(name) names no target; one of \(allCases.map(\.rawValue))")
        }
        return target
    }()

    /// The most CPU time one input may take (debug build with AddressSanitizer; inputs up to libFuzzer's `-max_len`).
    static let timeBound = Duration.milliseconds(100)

    /// This target's bound. The XML targets get more: libxml2 expands nested entities up to its own amplification
    /// limit, and a 242-byte document of them took 100 ms of CPU in this instrumented debug build (found by
    /// `xmlDocument`), ending with the limit's error as it should.
    var timeBound: Duration {
        switch self {
        case .xmlDocument, .xmlParser: .milliseconds(250)
        // A whole exchange on real sockets (a TLS handshake for HTTP/2), and up to 4 MiB sent: the wall-clock bound
        // is the harness's own (`ClientHarness.bound`).
        case .client, .clientHTTP2: .seconds(3)
        default: Self.timeBound
        }
    }

    func run(_ input: [UInt8]) {
        switch self {
        case .imageHeader: Self.fuzzImageHeader(input)
        case .serverSentEvents: Self.fuzzServerSentEvents(input)
        case .utf8Lines: Self.fuzzUtf8Lines(input)
        case .jsonLines: Self.fuzzJsonLines(input)
        case .setCookie: Self.fuzzSetCookie(input)
        case .cookieDate: Self.fuzzCookieDate(input)
        case .contentDisposition: Self.fuzzContentDisposition(input)
        case .authenticationChallenges: Self.fuzzAuthenticationChallenges(input)
        case .mediaType: Self.fuzzMediaType(input)
        case .proxyVariables: Self.fuzzProxyVariables(input)
        case .netlink: Self.fuzzNetlink(input)
        case .decompression: Self.fuzzDecompression(input)
        case .digestAuthorization: Self.fuzzDigestAuthorization(input)
        case .retryAfter: Self.fuzzRetryAfter(input)
        case .url: Self.fuzzURL(input)
        case .urlRequest: Self.fuzzURLRequest(input)
        case .resumeData: Self.fuzzResumeData(input)
        case .charset: Self.fuzzCharset(input)
        case .propertyList: Self.fuzzPropertyList(input)
        case .xmlDocument:
            #if canImport(FoundationXML)
            Self.fuzzXMLDocument(input)
            #endif
        case .xmlParser:
            #if canImport(FoundationXML)
            Self.fuzzXMLParser(input)
            #endif
        case .cacheControl: Self.fuzzCacheControl(input)
        case .cacheFreshness: Self.fuzzCacheFreshness(input)
        case .cacheEntry: Self.fuzzCacheEntry(input)
        case .client: Self.fuzzClient(input, http2: false)
        case .clientHTTP2: Self.fuzzClient(input, http2: true)
        }
    }
}

/// Fails the run with `message` when `condition` is false: a property the parser broke.
func require(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
    if !condition() { fatalError(message()) }
}
