import Foundation
import X509

/// What a TLS connection presents for trust evaluation: the host the request is for and the server's
/// certificate.
///
/// On Linux the engine (async-http-client over SwiftNIO SSL) exposes the server's leaf certificate after the
/// handshake, not the intermediates it sent, so ``certificates`` holds the leaf only. Evaluators that pin a
/// CA therefore check that the leaf was signed by the pinned certificate's key (its direct issuer); to trust
/// a root several levels up, make it the only trust root instead (``TLSOptions/trustRoots``), which the
/// handshake checks along the whole chain.
public struct ServerTrust: Sendable {
    /// The host the request is for.
    public let host: String
    /// The server's certificates, leaf first (on Linux the leaf only).
    public let certificates: [Certificate]

    /// Creates a server trust value (for testing evaluators).
    public init(host: String, certificates: [Certificate]) {
        self.host = host
        self.certificates = certificates
    }

    /// The server's own certificate.
    public var leaf: Certificate? { self.certificates.first }
}

/// How the TLS handshake verifies the server before an evaluator sees it: the part of Alamofire's default
/// evaluation that the TLS library itself performs.
public struct HandshakeVerification: Sendable, Hashable {
    enum Mode: Int, Hashable, Comparable {
        case none = 0
        case withoutHostname = 1
        case full = 2

        static func < (lhs: Mode, rhs: Mode) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    let mode: Mode
    /// Certificates trusted as anchors in addition to the session's trust roots.
    let anchors: [Certificate]

    /// The chain must lead to a trusted root and name the host (the default).
    public static let full = HandshakeVerification(mode: .full, anchors: [])
    /// The chain must lead to a trusted root; the host is not checked.
    public static let withoutHostname = HandshakeVerification(mode: .withoutHostname, anchors: [])
    /// Nothing is verified during the handshake: the evaluator decides alone.
    public static let none = HandshakeVerification(mode: .none, anchors: [])

    /// This verification, also trusting `certificates` as anchors (self-signed certificates, private CAs).
    public func anchoring(_ certificates: [Certificate]) -> HandshakeVerification {
        HandshakeVerification(mode: self.mode, anchors: self.anchors + certificates)
    }

    /// Full or host-less verification, as an evaluator's `performDefaultValidation` and `validateHost` ask.
    static func defaultValidation(_ perform: Bool, validateHost: Bool) -> HandshakeVerification {
        guard perform else { return .none }
        return validateHost ? .full : .withoutHostname
    }
}

/// Decides whether a server is trusted for a host: Alamofire 5's `ServerTrustEvaluating`.
///
/// ``handshakeVerification`` says what the TLS handshake checks first (by default, everything); then
/// ``evaluate(_:forHost:)`` runs on the connection before any byte of the request is written. A throwing
/// evaluation fails the request with `serverTrustEvaluationFailed` and closes the connection.
public protocol ServerTrustEvaluating: Sendable {
    /// What the handshake verifies before ``evaluate(_:forHost:)`` runs; ``HandshakeVerification/full`` unless
    /// the evaluator replaces the default validation.
    var handshakeVerification: HandshakeVerification { get }

    /// Throws when the server must not be trusted for `host`.
    func evaluate(_ trust: ServerTrust, forHost host: String) throws
}

extension ServerTrustEvaluating {
    public var handshakeVerification: HandshakeVerification { .full }
}

/// The handshake's own evaluation, nothing more: Alamofire's `DefaultTrustEvaluator`.
public struct DefaultTrustEvaluator: ServerTrustEvaluating {
    let validateHost: Bool

    /// - Parameter validateHost: Whether the certificate must name the host.
    public init(validateHost: Bool = true) {
        self.validateHost = validateHost
    }

    public var handshakeVerification: HandshakeVerification {
        self.validateHost ? .full : .withoutHostname
    }

    public func evaluate(_ trust: ServerTrust, forHost host: String) throws {}
}

/// Trusts the server only when its certificate is one of `certificates` or was issued by one of them:
/// Alamofire's `PinnedCertificatesTrustEvaluator`.
public struct PinnedCertificatesTrustEvaluator: ServerTrustEvaluating {
    let certificates: [Certificate]
    let acceptSelfSignedCertificates: Bool
    let performDefaultValidation: Bool
    let validateHost: Bool

    /// - Parameters:
    ///   - certificates: The pinned certificates: the server's own, or the CA that issued it.
    ///   - acceptSelfSignedCertificates: Whether the pinned certificates are also trusted as anchors, so a
    ///     self-signed pinned certificate passes the default validation.
    ///   - performDefaultValidation: Whether the handshake also validates the chain.
    ///   - validateHost: Whether the certificate must name the host.
    public init(
        certificates: [Certificate],
        acceptSelfSignedCertificates: Bool = false,
        performDefaultValidation: Bool = true,
        validateHost: Bool = true
    ) {
        self.certificates = certificates
        self.acceptSelfSignedCertificates = acceptSelfSignedCertificates
        self.performDefaultValidation = performDefaultValidation
        self.validateHost = validateHost
    }

    public var handshakeVerification: HandshakeVerification {
        let verification = HandshakeVerification.defaultValidation(
            self.performDefaultValidation,
            validateHost: self.validateHost
        )
        return self.acceptSelfSignedCertificates ? verification.anchoring(self.certificates) : verification
    }

    public func evaluate(_ trust: ServerTrust, forHost host: String) throws {
        let leaf = try TrustChecks.leaf(of: trust, host: host)
        if !self.performDefaultValidation, self.validateHost { try TrustChecks.requireName(host, in: leaf) }
        if self.certificates.contains(leaf) { return }
        if self.certificates.contains(where: { TrustChecks.isIssuer($0.publicKey, subject: $0.subject, of: leaf) }) {
            return
        }
        throw TrustChecks.failure(
            host,
            "no pinned certificate matches the server's certificate (\(leaf.subject)) or its issuer (\(leaf.issuer))"
        )
    }
}

/// Trusts the server only when its certificate's public key, or its issuer's, is one of `keys`: Alamofire's
/// `PublicKeysTrustEvaluator`.
public struct PublicKeysTrustEvaluator: ServerTrustEvaluating {
    let keys: [Certificate.PublicKey]
    /// Base64 SHA-256 digests of DER SubjectPublicKeyInfo (curl's `--pinnedpubkey sha256//…`).
    let sha256Pins: Set<String>
    let performDefaultValidation: Bool
    let validateHost: Bool

    /// - Parameters:
    ///   - keys: The pinned public keys: the server's own, or its issuing CA's.
    ///   - performDefaultValidation: Whether the handshake also validates the chain.
    ///   - validateHost: Whether the certificate must name the host.
    public init(keys: [Certificate.PublicKey], performDefaultValidation: Bool = true, validateHost: Bool = true) {
        self.keys = keys
        self.sha256Pins = []
        self.performDefaultValidation = performDefaultValidation
        self.validateHost = validateHost
    }

    /// Pins given as base64 SHA-256 digests of the server certificate's DER SubjectPublicKeyInfo, as curl's
    /// `--pinnedpubkey sha256//…` and HPKP write them (a `sha256//` prefix is accepted). A digest cannot check
    /// a signature, so these pins match the server's own key only.
    ///
    /// - Parameters:
    ///   - sha256Pins: The digests, base64.
    ///   - performDefaultValidation: Whether the handshake also validates the chain.
    ///   - validateHost: Whether the certificate must name the host.
    public init(sha256Pins: [String], performDefaultValidation: Bool = true, validateHost: Bool = true) {
        self.keys = []
        self.sha256Pins = Set(sha256Pins.map { $0.hasPrefix("sha256//") ? String($0.dropFirst(8)) : $0 })
        self.performDefaultValidation = performDefaultValidation
        self.validateHost = validateHost
    }

    public var handshakeVerification: HandshakeVerification {
        .defaultValidation(self.performDefaultValidation, validateHost: self.validateHost)
    }

    public func evaluate(_ trust: ServerTrust, forHost host: String) throws {
        let leaf = try TrustChecks.leaf(of: trust, host: host)
        if !self.performDefaultValidation, self.validateHost { try TrustChecks.requireName(host, in: leaf) }
        if self.keys.contains(leaf.publicKey) { return }
        if self.keys.contains(where: { $0.isValidSignature(leaf.signature, for: leaf) }) { return }
        if !self.sha256Pins.isEmpty, let digest = TrustChecks.publicKeySHA256(of: leaf),
            self.sha256Pins.contains(digest)
        {
            return
        }
        throw TrustChecks.failure(
            host,
            "no pinned public key matches the server's certificate (\(leaf.subject)) or its issuer (\(leaf.issuer))"
        )
    }
}

/// Several evaluators, all of which must pass, in order: Alamofire's `CompositeTrustEvaluator`. The
/// handshake verifies as the strictest of them asks, with the anchors of all.
public struct CompositeTrustEvaluator: ServerTrustEvaluating {
    let evaluators: [any ServerTrustEvaluating]

    /// - Parameter evaluators: The evaluators, run in order.
    public init(evaluators: [any ServerTrustEvaluating]) {
        self.evaluators = evaluators
    }

    public var handshakeVerification: HandshakeVerification {
        let verifications = self.evaluators.map(\.handshakeVerification)
        let mode = verifications.map(\.mode).max() ?? .full
        return HandshakeVerification(mode: mode, anchors: verifications.flatMap(\.anchors))
    }

    public func evaluate(_ trust: ServerTrust, forHost host: String) throws {
        for evaluator in self.evaluators {
            try evaluator.evaluate(trust, forHost: host)
        }
    }
}

/// Trusts every server, verifying nothing: Alamofire's `DisabledTrustEvaluator`.
///
/// For development only (a local server with a throwaway certificate): a connection that trusts anything can
/// be intercepted by anyone on the path. Never ship it.
public struct DisabledTrustEvaluator: ServerTrustEvaluating {
    /// Creates the evaluator.
    public init() {}

    public var handshakeVerification: HandshakeVerification { .none }

    public func evaluate(_ trust: ServerTrust, forHost host: String) throws {}
}

/// An evaluator made of a closure, after the handshake verified what `handshakeVerification` asks.
///
/// ```swift
/// let evaluator = ClosureTrustEvaluator { trust, host in
///     guard trust.leaf?.subject.description.contains("O=Example") == true else {
///         throw KiteError(code: .serverTrustEvaluationFailed, message: "unexpected organisation for \(host)")
///     }
/// }
/// ```
public struct ClosureTrustEvaluator: ServerTrustEvaluating {
    public let handshakeVerification: HandshakeVerification
    let closure: @Sendable (ServerTrust, String) throws -> Void

    /// - Parameters:
    ///   - handshakeVerification: What the handshake verifies first; everything by default.
    ///   - evaluate: Throws when the server must not be trusted for the host.
    public init(
        handshakeVerification: HandshakeVerification = .full,
        _ evaluate: @escaping @Sendable (ServerTrust, String) throws -> Void
    ) {
        self.handshakeVerification = handshakeVerification
        self.closure = evaluate
    }

    public func evaluate(_ trust: ServerTrust, forHost host: String) throws {
        try self.closure(trust, host)
    }
}
