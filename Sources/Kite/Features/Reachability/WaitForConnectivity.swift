import Foundation
import HTTPTypes
import HTTPTypesFoundation

/// Makes requests wait for the network instead of failing at once while it is unreachable, like
/// URLSession's `waitsForConnectivity`: an adapter that, when the request's host is not reachable, waits
/// until it is (watching the kernel's tables, see ``NetworkReachabilityManager``), for at most `timeout`.
///
/// Per session, with the configuration (it then runs before the session's own interceptor):
///
/// ```swift
/// var configuration = Session.Configuration()
/// configuration.waitsForConnectivity = true
/// configuration.connectivityTimeout = .seconds(60)
/// let session = Session(configuration: configuration)
/// ```
///
/// Per request, as an interceptor:
///
/// ```swift
/// let response = try await session.request("https://api.example.com/items", interceptor: WaitForConnectivity())
///     .serializingData()
///     .value
/// ```
///
/// Reachable requests pay one read of the kernel's tables. A request still unreachable after `timeout` fails
/// with `requestAdaptationFailed` (as every adapter's error does; retriers are asked next), whose
/// ``KiteError/underlyingError`` is a `connectionFailed` ``KiteError`` naming the host and the time waited. A request's total timeout, when set, also
/// bounds the wait. Where reachability is not available (no manager, or the kernel's tables cannot be read) the
/// request goes ahead at once.
public struct WaitForConnectivity: RequestInterceptor {
    /// The longest a request waits.
    public let timeout: Duration
    private let makeManager: @Sendable (String) -> NetworkReachabilityManager?

    /// Creates the adapter.
    ///
    /// - Parameter timeout: The longest a request waits; 30 seconds by default.
    public init(timeout: Duration = .seconds(30)) {
        self.init(timeout: timeout) { NetworkReachabilityManager(host: $0) }
    }

    init(timeout: Duration, makeManager: @escaping @Sendable (String) -> NetworkReachabilityManager?) {
        self.timeout = timeout
        self.makeManager = makeManager
    }

    public func adapt(_ request: HTTPRequest, for session: Session) async throws -> HTTPRequest {
        guard let host = request.url?.host, let manager = self.makeManager(host) else { return request }
        switch manager.status {
        case .reachable, .unknown: return request  // unknown: the tables cannot be read, so do not hold it
        case .notReachable: break
        }
        // true: reachable (or reachability stopped being available); false: the timeout passed.
        let goAhead = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                for await status in manager.statusUpdates where status != .notReachable {
                    return true
                }
                return true  // the sequence ended: the network can no longer be watched
            }
            group.addTask { [timeout = self.timeout] in
                try? await Task.sleep(for: timeout)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
        try Task.checkCancellation()
        guard goAhead else {
            throw KiteError(
                code: .connectionFailed,
                message: "the network stayed unreachable for \(host) while waiting \(self.timeout) for connectivity"
            )
        }
        return request
    }
}
