import NIOConcurrencyHelpers
import NIOSSL
import X509

/// A ``ServerTrustManager``'s decisions as the engine asks for them: the TLS configuration each host's evaluator
/// asks the handshake for (its ``HandshakeVerification``, made once per verification), and the evaluation of the
/// server on each new connection.
final class ManagedTrust: ServerTrustDecisions {
    let manager: ServerTrustManager
    let options: TLSOptions
    private let configurations = NIOLockedValueBox<[HandshakeVerification: TLSConfiguration]>([:])

    init(manager: ServerTrustManager, options: TLSOptions) {
        self.manager = manager
        self.options = options
    }

    /// The evaluator for `host`, with the error a refusal carries.
    func evaluator(forHost host: String) throws(KiteError) -> (any ServerTrustEvaluating)? {
        do {
            return try self.manager.serverTrustEvaluator(forHost: host)
        } catch let error as KiteError {
            throw error
        } catch {
            throw TrustChecks.failure(host, "its trust manager failed: \(error)")
        }
    }

    func tlsConfiguration(forHost host: String) throws(KiteError) -> TLSConfiguration? {
        guard let verification = try self.evaluator(forHost: host)?.handshakeVerification else { return nil }
        // The engine keeps connections apart by a hash of their TLS configuration, which swift-nio-ssl makes from
        // the key's encoding, trapping when the key has none.
        if let keyType = self.options.clientIdentity?.unencodableKeyType {
            throw KiteError(
                code: .invalidRequest,
                message: "the client certificate's \(keyType) key cannot be used with a ServerTrustManager (the TLS "
                    + "library encodes RSA and EC keys only, and a per-host TLS configuration needs the encoding); "
                    + "use an RSA or EC key, or no ServerTrustManager"
            )
        }
        if let made = self.configurations.withLockedValue({ $0[verification] }) { return made }
        let made = try self.options.makeConfiguration(verification: verification)
        self.configurations.withLockedValue { $0[verification] = made }
        return made
    }

    func evaluate(_ certificates: [Certificate], forHost host: String) throws(KiteError) {
        guard let evaluator = try self.evaluator(forHost: host) else { return }
        do {
            try evaluator.evaluate(ServerTrust(host: host, certificates: certificates), forHost: host)
        } catch let error as KiteError where error.code == .serverTrustEvaluationFailed {
            throw error
        } catch {
            throw KiteError(
                code: .serverTrustEvaluationFailed,
                message: "the server \(host) is not trusted: \(error)",
                underlyingError: error
            )
        }
    }
}
