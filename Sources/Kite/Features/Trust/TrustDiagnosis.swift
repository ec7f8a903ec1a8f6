import Foundation
import SwiftASN1
import X509

/// Why a server's certificate failed the handshake's verification, in words a user can act on.
///
/// The TLS library reports only "certificate verify failed" (its verify result is not exposed, and
/// async-http-client closes the failed connection before any handler of Kite's sees it). So after such a failure
/// the engine opens one more connection to the server, along the request's route (``PresentedChain``), takes the
/// chain the server presents and refuses it; this reads what is wrong with that chain.
/// ``TLSOptions/diagnosesTrustFailures`` turns it off.
///
/// The reason is the first problem a user must fix: a chain that leads to no trusted root (self-signed, or an
/// unknown issuer), then the validity period, then the names; a further problem with the names is said too.
struct TrustDiagnosis: TrustFailureExplaining {
    /// The session's TLS options: the roots its handshakes trust.
    let options: TLSOptions
    /// The session's trust manager, whose evaluator for a host may add anchors or skip the name check.
    let manager: ServerTrustManager?

    func reason(for chain: [Certificate], host: String) async -> String {
        let evaluator = (try? self.manager?.serverTrustEvaluator(forHost: host)) ?? nil
        let verification = evaluator?.handshakeVerification ?? .full
        let trusted = self.options.trustedCertificates(anchoring: verification.anchors)
        let roots = trusted.certificates + (trusted.includesSystem ? SystemRoots.certificates : [])
        return await Self.reason(
            for: chain,
            host: host,
            roots: roots,
            checksName: verification.mode == .full,
            now: Date()
        )
    }

    /// What is wrong with `chain` (the leaf first) for `host` at `now`, given the trusted `roots`.
    static func reason(
        for chain: [Certificate],
        host: String,
        roots: [Certificate],
        checksName: Bool = true,
        now: Date
    ) async -> String {
        guard let leaf = chain.first else { return "its certificate failed verification" }
        var problems: [String] = []
        // Chain building and signatures only: the period and the names are told apart below.
        var verifier = Verifier(rootCertificates: CertificateStore(roots)) {}
        if case .couldNotValidate = await verifier.validate(
            leaf: leaf,
            intermediates: CertificateStore(chain.dropFirst())
        ) {
            problems.append(
                leaf.issuer == leaf.subject
                    ? "its certificate is self-signed (\(leaf.subject)) and not among the trusted roots"
                    : "its certificate (issued by \(leaf.issuer)) does not lead to a trusted root"
            )
        }
        if let problem = self.validityProblem(of: leaf, now: now) { problems.append(problem) }
        if checksName, !TrustChecks.names(host, leaf) {
            let names = Self.alternativeNames(of: leaf)
            // Verifiers match only subjectAltName, never the subject's common name (RFC 9525 §6.3, which dropped
            // RFC 6125's fallback to the CN), so a certificate without one names no host.
            problems.append(
                names.isEmpty
                    ? "its certificate has no subjectAltName, and its subject (\(leaf.subject)) does not name a host "
                        + "(RFC 9525): it needs a subjectAltName for \(host)"
                    : "its certificate is for another host (\(names.joined(separator: ", ")))"
            )
        }
        guard let first = problems.first else { return "its certificate failed verification" }
        return ([first] + problems.dropFirst().map { "also, \($0)" }).joined(separator: "; ")
    }

    /// Why `leaf` is not valid at `now`, or `nil` when it is.
    static func validityProblem(of leaf: Certificate, now: Date) -> String? {
        if leaf.notValidAfter < now { return "its certificate expired on \(Self.format(leaf.notValidAfter))" }
        if leaf.notValidBefore > now {
            return "its certificate is not valid before \(Self.format(leaf.notValidBefore))"
        }
        return nil
    }

    private static func format(_ date: Date) -> String {
        ISO8601DateFormatter().string(from: date)
    }

    /// The DNS names and IP addresses of the certificate's subjectAltName extension; empty when it has none.
    private static func alternativeNames(of certificate: Certificate) -> [String] {
        guard let names = try? certificate.extensions.subjectAlternativeNames else { return [] }
        return names.map { name -> String in
            switch name {
            case .dnsName(let dns): return dns
            case .ipAddress(let bytes): return Self.address(Array(bytes.bytes))
            default: return "\(name)"
            }
        }
    }

    private static func address(_ bytes: [UInt8]) -> String {
        if bytes.count == 4 { return bytes.map(String.init).joined(separator: ".") }
        return stride(from: 0, to: bytes.count, by: 2).map {
            String((UInt16(bytes[$0]) << 8) | UInt16(bytes[$0 + 1]), radix: 16)
        }.joined(separator: ":")
    }
}

/// The system's trust roots as certificates, read once from Debian's (or Red Hat's) bundle: what the TLS library
/// trusts for `TLSOptions.TrustRoots.system` on Linux.
enum SystemRoots {
    static let certificates: [Certificate] = {
        let bundles = ["/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt"]
        guard let text = bundles.lazy.compactMap({ try? String(contentsOfFile: $0, encoding: .utf8) }).first,
            let documents = try? PEMDocument.parseMultiple(pemString: text)
        else { return [] }
        return documents.compactMap { try? Certificate(pemDocument: $0) }
    }()
}
