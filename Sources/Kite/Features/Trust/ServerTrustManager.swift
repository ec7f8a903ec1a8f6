import Foundation

/// Which evaluator decides about each host: Alamofire 5's `ServerTrustManager`.
///
/// ```swift
/// let manager = ServerTrustManager(evaluators: [
///     "api.example.com": PinnedCertificatesTrustEvaluator(certificates: pinned),
///     "*.cdn.example.com": DefaultTrustEvaluator(),
///     "localhost": DisabledTrustEvaluator(),  // development only
/// ])
/// let session = Session(configuration: .default, serverTrustManager: manager)
/// ```
///
/// A key `*.example.com` matches hosts one label below it (`a.example.com`), as Alamofire's
/// `WildcardServerTrustPolicyManager` example does; an exact key wins over a wildcard. Subclass and override
/// ``serverTrustEvaluator(forHost:)`` for other rules.
open class ServerTrustManager: @unchecked Sendable {
    // @unchecked: its properties are constants of Sendable types; the class is open so that subclasses can
    // choose evaluators by their own rules, as Alamofire's can.

    /// Whether a request to a host without an evaluator fails (`true`) or uses the default evaluation.
    public let allHostsMustBeEvaluated: Bool
    /// The evaluators by host (or `*.` wildcard).
    public let evaluators: [String: any ServerTrustEvaluating]

    /// - Parameters:
    ///   - allHostsMustBeEvaluated: Whether hosts without an evaluator are refused; `true` by default, as in
    ///     Alamofire.
    ///   - evaluators: The evaluators by host; keys are compared case-insensitively.
    public init(allHostsMustBeEvaluated: Bool = true, evaluators: [String: any ServerTrustEvaluating]) {
        self.allHostsMustBeEvaluated = allHostsMustBeEvaluated
        self.evaluators = Dictionary(evaluators.map { ($0.key.lowercased(), $0.value) }) { first, _ in first }
        self.everyHost = nil
    }

    /// One evaluator for every host (an AFNetworking-style ``SecurityPolicy``, say).
    public init(evaluatingEveryHostWith evaluator: any ServerTrustEvaluating) {
        self.allHostsMustBeEvaluated = true
        self.evaluators = [:]
        self.everyHost = evaluator
    }

    /// The evaluator for every host, when the manager was made with one.
    private let everyHost: (any ServerTrustEvaluating)?

    /// The evaluator for `host`, or `nil` to use the default evaluation.
    ///
    /// - Throws: ``KiteError`` `serverTrustEvaluationFailed` when the host has none and all hosts must be
    ///   evaluated.
    open func serverTrustEvaluator(forHost host: String) throws -> (any ServerTrustEvaluating)? {
        if let everyHost = self.everyHost { return everyHost }
        let host = host.lowercased()
        if let evaluator = self.evaluators[host] { return evaluator }
        var labels = host.split(separator: ".", omittingEmptySubsequences: false)
        if labels.count > 2 {
            labels[0] = "*"
            if let evaluator = self.evaluators[labels.joined(separator: ".")] { return evaluator }
        }
        guard !self.allHostsMustBeEvaluated else {
            throw KiteError(
                code: .serverTrustEvaluationFailed,
                message: "no trust evaluator is configured for the host \(host), and all hosts must be evaluated"
            )
        }
        return nil
    }
}
