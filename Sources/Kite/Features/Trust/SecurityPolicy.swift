import Foundation
import NIOConcurrencyHelpers
import X509

/// AFNetworking's `AFSecurityPolicy`: one policy for every host, in its terms, evaluated by Kite's trust
/// machinery.
///
/// ```swift
/// let policy = SecurityPolicy(pinningMode: .certificate, pinnedCertificates: try SecurityPolicy.certificates(in: .module))
/// policy.validatesDomainName = true
/// let session = Session(configuration: .default, serverTrustManager: ServerTrustManager(evaluatingEveryHostWith: policy))
/// ```
///
/// AFNetworking's rules, as its `evaluateServerTrust:forDomain:` applies them:
/// - `allowInvalidCertificates` with `validatesDomainName` needs pinned certificates: without pinning (mode
///   `.none` or no certificates) every server is refused, since there is nothing to check the name against.
/// - `.none`: the chain must be valid (and name the host when `validatesDomainName`), unless
///   `allowInvalidCertificates`.
/// - `.certificate`: the pinned certificates are the only anchors: the server's certificate must be one of
///   them or be signed by one, be within its validity dates (even with `allowInvalidCertificates`, as the
///   pinned anchors still have to validate it) and name the host when `validatesDomainName`.
/// - `.publicKey`: the chain must be valid unless `allowInvalidCertificates`, and the server's public key, or
///   its issuer's, must be one of the pinned certificates' keys.
///
/// As with the other evaluators, Linux shows Kite the server's leaf certificate only, so a pin must be the
/// leaf or the CA that signed it.
public final class SecurityPolicy: ServerTrustEvaluating {
    // AFNetworking's policy is a mutable object: its settings are kept under a lock.

    /// AFNetworking's `AFSSLPinningMode`.
    public enum PinningMode: Sendable, Hashable {
        /// No pinning: the default validation decides.
        case none
        /// The server's certificate (or its issuer) must be pinned.
        case certificate
        /// The server's public key (or its issuer's) must be a pinned certificate's.
        case publicKey
    }

    private struct Settings {
        var pinnedCertificates: [Certificate]
        var allowInvalidCertificates = false
        var validatesDomainName = true
    }

    /// How the server is pinned.
    public let pinningMode: PinningMode
    private let settings: NIOLockedValueBox<Settings>

    /// AFNetworking's `defaultPolicy`: no pinning, valid certificates only, the host checked.
    public static var `default`: SecurityPolicy { SecurityPolicy(pinningMode: .none) }

    /// AFNetworking's `policyWithPinningMode:withPinnedCertificates:`.
    ///
    /// - Parameters:
    ///   - pinningMode: How the server is pinned.
    ///   - pinnedCertificates: The pinned certificates (duplicates removed); none by default.
    public init(pinningMode: PinningMode, pinnedCertificates: [Certificate] = []) {
        self.pinningMode = pinningMode
        var unique: [Certificate] = []
        for certificate in pinnedCertificates where !unique.contains(certificate) { unique.append(certificate) }
        self.settings = NIOLockedValueBox(Settings(pinnedCertificates: unique))
    }

    /// The certificates of a bundle (AFNetworking's `certificatesInBundle:`; `.cer`, `.crt`, `.der`, `.pem`).
    public static func certificates(in bundle: Bundle) throws(KiteError) -> [Certificate] {
        try Certificates.inBundle(bundle)
    }

    /// The certificates of every certificate file in a folder.
    public static func certificates(inDirectory directory: URL) throws(KiteError) -> [Certificate] {
        try Certificates.inDirectory(directory)
    }

    /// The pinned certificates.
    public var pinnedCertificates: [Certificate] {
        get { self.settings.withLockedValue { $0.pinnedCertificates } }
        set { self.settings.withLockedValue { $0.pinnedCertificates = newValue } }
    }

    /// Whether invalid or expired certificates are accepted; `false` by default.
    public var allowInvalidCertificates: Bool {
        get { self.settings.withLockedValue { $0.allowInvalidCertificates } }
        set { self.settings.withLockedValue { $0.allowInvalidCertificates = newValue } }
    }

    /// Whether the certificate must name the host; `true` by default.
    public var validatesDomainName: Bool {
        get { self.settings.withLockedValue { $0.validatesDomainName } }
        set { self.settings.withLockedValue { $0.validatesDomainName = newValue } }
    }

    public var handshakeVerification: HandshakeVerification {
        let settings = self.settings.withLockedValue { $0 }
        if settings.allowInvalidCertificates || self.pinningMode == .certificate { return .none }
        return settings.validatesDomainName ? .full : .withoutHostname
    }

    public func evaluate(_ trust: ServerTrust, forHost host: String) throws {
        let settings = self.settings.withLockedValue { $0 }
        if settings.allowInvalidCertificates, settings.validatesDomainName,
            self.pinningMode == .none || settings.pinnedCertificates.isEmpty
        {
            throw TrustChecks.failure(
                host,
                "validating the domain name of an invalid certificate needs pinned certificates (AFNetworking's rule)"
            )
        }
        switch self.pinningMode {
        case .none:
            return
        case .certificate:
            let leaf = try TrustChecks.leaf(of: trust, host: host)
            if let problem = TrustDiagnosis.validityProblem(of: leaf, now: Date()) {
                throw TrustChecks.failure(host, problem)
            }
            if settings.validatesDomainName { try TrustChecks.requireName(host, in: leaf) }
            try PinnedCertificatesTrustEvaluator(
                certificates: settings.pinnedCertificates,
                performDefaultValidation: false,
                validateHost: false
            ).evaluate(trust, forHost: host)
        case .publicKey:
            try PublicKeysTrustEvaluator(
                keys: settings.pinnedCertificates.map(\.publicKey),
                performDefaultValidation: false,
                validateHost: false
            ).evaluate(trust, forHost: host)
        }
    }
}
