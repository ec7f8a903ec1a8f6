/// Every request pays into the budget of each ``RetryPolicy`` that may retry it, whatever role the policy was
/// given. A policy used as an interceptor pays in from ``RetryPolicy/adapt(_:using:)``; one given only as a
/// retrier (`Interceptor(adapter: tokens, retrier: RetryPolicy())`, at any depth of ``Interceptor``s) is never
/// asked to adapt, so the pipeline pays in for it when the request starts. Before, such a policy's budget never
/// grew and its retries were capped at the reserve (``RetryBudget/minimumRetriesPerSecond``).
extension RetryPolicy {
    /// The policies among the interceptors' retriers that none of their adapters is, each once.
    static func retryingOnly(in interceptors: (any RequestInterceptor)?...) -> [RetryPolicy] {
        var adapting = Set<ObjectIdentifier>()
        var retrying: [RetryPolicy] = []
        func visit(adapter: any RequestAdapter) {
            if let policy = adapter as? RetryPolicy {
                adapting.insert(ObjectIdentifier(policy))
            } else if let interceptor = adapter as? Interceptor {
                interceptor.adapters.forEach(visit(adapter:))
            }
        }
        func visit(retrier: any RequestRetrier) {
            if let policy = retrier as? RetryPolicy {
                if !retrying.contains(where: { $0 === policy }) { retrying.append(policy) }
            } else if let interceptor = retrier as? Interceptor {
                interceptor.retriers.forEach(visit(retrier:))
            }
        }
        for interceptor in interceptors {
            guard let interceptor else { continue }
            visit(adapter: interceptor)
            visit(retrier: interceptor)
        }
        return retrying.filter { !adapting.contains(ObjectIdentifier($0)) }
    }
}
