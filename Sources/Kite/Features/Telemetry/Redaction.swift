import Foundation
import HTTPTypes

/// What logs, traces and cURL descriptions hide: credentials in URLs, query values that look secret, and the
/// values of sensitive header fields. Hidden values read `REDACTED`, as the OpenTelemetry conventions write them.
enum Redaction {
    static let placeholder = "REDACTED"

    /// The header fields whose values are always hidden unless the configuration removes them.
    static let defaultHeaderNames: Set<HTTPField.Name> = [
        .authorization, .proxyAuthorization, .cookie, .setCookie, HTTPField.Name("X-Api-Key")!,
    ]

    /// Query parameter names (lowercased) whose values are hidden; a name also matches when it contains
    /// one of ``secretQueryFragments``.
    static let secretQueryNames: Set<String> = [
        "sig", "signature", "x-goog-signature", "x-amz-signature", "x-amz-credential", "x-amz-security-token",
        "awsaccesskeyid", "code", "key", "auth", "authorization", "authkey",
    ]
    static let secretQueryFragments = [
        "token", "secret", "password", "passwd", "pwd", "apikey", "api_key",
        "api-key", "credential", "session",
    ]

    /// Whether a query parameter's value looks secret, by its name.
    static func isSecretQueryName(_ name: String) -> Bool {
        let lowered = name.lowercased()
        if self.secretQueryNames.contains(lowered) { return true }
        return self.secretQueryFragments.contains { lowered.contains($0) }
    }

    /// `url` without user and password (as ``RequestSummary`` shows it) and with the values of secret-looking
    /// query parameters replaced. The rest is kept as written.
    static func url(_ url: String) -> String {
        let clean = RequestSummary.removingCredentials(from: url)
        guard let question = clean.firstIndex(of: "?") else { return clean }
        let queryStart = clean.index(after: question)
        let queryEnd = clean[queryStart...].firstIndex(of: "#") ?? clean.endIndex
        return String(clean[..<queryStart]) + self.query(String(clean[queryStart..<queryEnd]))
            + String(clean[queryEnd...])
    }

    /// A percent-encoded query with secret-looking values replaced; pairs keep their order and spelling.
    static func query(_ query: String) -> String {
        query.split(separator: "&", omittingEmptySubsequences: false).map { pair -> String in
            guard let equals = pair.firstIndex(of: "=") else { return String(pair) }
            let name = pair[..<equals]
            let decoded = String(name).removingPercentEncoding ?? String(name)
            return self.isSecretQueryName(decoded) ? "\(name)=\(self.placeholder)" : String(pair)
        }.joined(separator: "&")
    }

    /// The fields with the values of `names` replaced, one entry per field, in order.
    static func fields(_ fields: HTTPFields, hiding names: Set<HTTPField.Name>) -> [(name: String, value: String)] {
        fields.map { field in
            (field.name.canonicalName, names.contains(field.name) ? self.placeholder : field.value)
        }
    }
}
