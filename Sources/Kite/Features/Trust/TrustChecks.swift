import Crypto
import Foundation
import SwiftASN1
import X509

/// The checks evaluators share.
enum TrustChecks {
    /// A `serverTrustEvaluationFailed` error naming `host` and the reason.
    static func failure(_ host: String, _ reason: String) -> KiteError {
        KiteError(code: .serverTrustEvaluationFailed, message: "the server \(host) is not trusted: \(reason)")
    }

    static func leaf(of trust: ServerTrust, host: String) throws(KiteError) -> Certificate {
        guard let leaf = trust.leaf else { throw self.failure(host, "it presented no certificate") }
        return leaf
    }

    /// The base64 SHA-256 digest of a certificate's DER SubjectPublicKeyInfo.
    static func publicKeySHA256(of certificate: Certificate) -> String? {
        var serializer = DER.Serializer()
        guard (try? serializer.serialize(certificate.publicKey)) != nil else { return nil }
        return Data(SHA256.hash(data: serializer.serializedBytes)).base64EncodedString()
    }

    /// Whether `key` (of the certificate named `subject`) signed `certificate`.
    static func isIssuer(_ key: Certificate.PublicKey, subject: DistinguishedName, of certificate: Certificate) -> Bool
    {
        certificate.issuer == subject && key.isValidSignature(certificate.signature, for: certificate)
    }

    /// Throws unless `certificate` names `host` in its subject alternative names (RFC 6125: DNS names with a
    /// wildcard in the leftmost label only, IP addresses byte for byte).
    static func requireName(_ host: String, in certificate: Certificate) throws(KiteError) {
        guard self.names(host, certificate) else {
            throw self.failure(host, "its certificate (\(certificate.subject)) is not for this host")
        }
    }

    static func names(_ host: String, _ certificate: Certificate) -> Bool {
        guard let names = try? certificate.extensions.subjectAlternativeNames else { return false }
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        if let address = self.addressBytes(bare) {
            return names.contains { name in
                if case .ipAddress(let bytes) = name { return Array(bytes.bytes) == address }
                return false
            }
        }
        guard !bare.isEmpty else { return false }
        let wanted = bare.lowercased().split(separator: ".", omittingEmptySubsequences: false)
        return names.contains { name in
            guard case .dnsName(let dns) = name else { return false }
            let pattern = dns.lowercased().split(separator: ".", omittingEmptySubsequences: false)
            guard pattern.count == wanted.count else { return false }
            // A wildcard stands for one whole label, leftmost, under at least two more (`*.example.com`, never
            // `*.com`); any other name matches exactly, a single label such as `localhost` too.
            if pattern[0] == "*" { return pattern.count >= 3 && pattern.dropFirst().elementsEqual(wanted.dropFirst()) }
            return pattern == wanted
        }
    }

    /// The bytes of an IPv4 or IPv6 address written as text, or `nil` for a host name.
    static func addressBytes(_ text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            return withUnsafeBytes(of: &v4) { Array($0) }
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 {
            return withUnsafeBytes(of: &v6) { Array($0) }
        }
        return nil
    }
}
