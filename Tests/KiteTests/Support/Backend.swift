import Foundation
import Kite
import Testing

/// Where integration tests send requests: the in-process Hummingbird test server, and a real
/// python httpbin when `KITE_HTTPBIN_URL` is set (as `.ci/run` does).
enum Backend: String, Sendable, CaseIterable, CustomTestStringConvertible {
    case inProcess
    case httpbin

    /// The backends this run can reach.
    /// `KITE_TEST_BACKENDS=httpbin` (comma-separated names) narrows the list.
    static var available: [Backend] {
        let reachable: [Backend] = Self.httpbinURL == nil ? [.inProcess] : [.inProcess, .httpbin]
        guard let only = ProcessInfo.processInfo.environment["KITE_TEST_BACKENDS"], !only.isEmpty else {
            return reachable
        }
        let names = Set(only.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
        return reachable.filter { names.contains($0.rawValue) }
    }

    static var httpbinURL: String? {
        guard let value = ProcessInfo.processInfo.environment["KITE_HTTPBIN_URL"], !value.isEmpty else { return nil }
        return value.hasSuffix("/") ? String(value.dropLast()) : value
    }

    var testDescription: String { self.rawValue }

    /// The base URL without a trailing slash, such as `http://127.0.0.1:54321`.
    func baseURL() async throws -> String {
        switch self {
        case .inProcess:
            return try await SharedTestServer.shared.baseURL()
        case .httpbin:
            return try #require(Self.httpbinURL, "KITE_HTTPBIN_URL is not set")
        }
    }

    /// `base + path`.
    func url(_ path: String) async throws -> String {
        try await self.baseURL() + path
    }
}

/// httpbin's echo of a request, as the README sample decodes it.
struct Echo: Decodable, Sendable {
    let args: [String: String]
    let headers: [String: String]
    let json: [String: String]?
    let form: [String: String]?
    let url: String
}

/// httpbin's echo with values that may be arrays (`args`, `form`).
struct LooseEcho: Decodable, Sendable {
    let args: [String: JSONValue]
    let headers: [String: String]
    let form: [String: JSONValue]?
    let files: [String: JSONValue]?
    let data: String?
    let json: JSONValue?
    let url: String
}

extension Dictionary where Key == String, Value == String {
    /// A header value by case-insensitive name.
    func header(_ name: String) -> String? {
        self.first { $0.key.lowercased() == name.lowercased() }?.value
    }
}
