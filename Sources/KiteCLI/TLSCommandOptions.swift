import ArgumentParser
import Foundation
import Kite

/// The TLS options of `kite`, in httpie's and curl's terms.
struct TLSCommandOptions: ParsableArguments {
    @Option(
        name: .customLong("verify"),
        help:
            "Verify the server's certificate: yes (default), no (development only), or a CA bundle file to trust instead."
    )
    var verify = "yes"

    @Option(name: .customLong("cert"), help: "A client certificate (PEM) for mutual TLS; may also hold the key.")
    var certificate: String?

    @Option(name: .customLong("cert-key"), help: "The client certificate's private key (PEM).")
    var certificateKey: String?

    @Option(
        name: .customLong("pin-sha256"),
        help: "A base64 SHA-256 pin of the server's public key (curl's --pinnedpubkey sha256//…); repeatable."
    )
    var pins: [String] = []

    /// Whether any option differs from the defaults (the shared session is used otherwise).
    var isDefault: Bool {
        ["yes", "true"].contains(self.verify.lowercased()) && self.certificate == nil && self.certificateKey == nil
            && self.pins.isEmpty
    }

    /// A session with these options; it must be shut down.
    func makeSession(cache: ResponseCache? = nil) throws -> Session {
        var configuration = Session.Configuration()
        configuration.cache = cache
        var evaluator: (any ServerTrustEvaluating)?
        switch self.verify.lowercased() {
        case "yes", "true":
            break
        case "no", "false":
            evaluator = DisabledTrustEvaluator()
        default:
            do {
                configuration.tls.trustRoots = .certificates(
                    try Certificates.load(from: URL(fileURLWithPath: self.verify))
                )
            } catch {
                throw ValidationError(error.message)
            }
        }
        if let certificate {
            let keyFile = self.certificateKey.map { URL(fileURLWithPath: $0) }
            do {
                configuration.tls.clientIdentity = try ClientIdentity(
                    certificateFile: URL(fileURLWithPath: certificate),
                    privateKeyFile: keyFile
                )
            } catch {
                throw ValidationError(error.message)
            }
        } else if self.certificateKey != nil {
            throw ValidationError("--cert-key needs --cert")
        }
        if !self.pins.isEmpty {
            let pinned = PublicKeysTrustEvaluator(sha256Pins: self.pins)
            evaluator = evaluator.map { CompositeTrustEvaluator(evaluators: [$0, pinned]) } ?? pinned
        }
        return Session(
            configuration: configuration,
            serverTrustManager: evaluator.map { ServerTrustManager(evaluatingEveryHostWith: $0) }
        )
    }
}
