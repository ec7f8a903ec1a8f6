import Dispatch
import Foundation
import NIOConcurrencyHelpers

/// Whether the network, a host or an address can be reached, and notice when that changes: Alamofire's
/// `NetworkReachabilityManager` and AFNetworking's `AFNetworkReachabilityManager`, on Linux too.
///
/// ```swift
/// let manager = NetworkReachabilityManager(host: "api.example.com")
/// manager?.startListening { status in
///     print("api.example.com is \(status)")  // reachable(ethernetOrWiFi), notReachable, …
/// }
/// for await status in NetworkReachabilityManager.default!.statusUpdates {
///     if status == .notReachable { print("offline") }
/// }
/// ```
///
/// On Linux the status comes from the kernel's own tables, read and watched over a `NETLINK_ROUTE` socket;
/// nothing is sent on the network (a host name is resolved, which may ask DNS). A target is reachable when
/// the kernel has a route to it through an interface that is up, has a carrier and holds a usable address.
/// A route through the loopback interface counts only for loopback targets. Interfaces of modems (`wwan…`,
/// `wwp…`, `ppp…`, `rmnet…`, or a PPP or raw-IP link) make the status `reachable(.cellular)`.
///
/// Reachability says whether packets can leave towards the target, not whether the server answers: a
/// request can still fail, so use it to decide when to retry, not whether to try.
public final class NetworkReachabilityManager: Sendable {
    /// The reachability of the target.
    public enum NetworkReachabilityStatus: Hashable, Sendable, CustomStringConvertible {
        /// Not known yet, or the kernel's tables could not be read.
        case unknown
        /// No route leaves through a usable interface.
        case notReachable
        /// Reachable, through the given kind of interface.
        case reachable(ConnectionType)

        /// The kind of interface traffic leaves through.
        public enum ConnectionType: Hashable, Sendable {
            /// Ethernet, Wi-Fi or anything else that is not a modem.
            case ethernetOrWiFi
            /// A cellular modem.
            case cellular
        }

        public var description: String {
            switch self {
            case .unknown: "unknown"
            case .notReachable: "notReachable"
            case .reachable(.ethernetOrWiFi): "reachable(ethernetOrWiFi)"
            case .reachable(.cellular): "reachable(cellular)"
            }
        }
    }

    /// Called with each new status.
    public typealias Listener = @Sendable (NetworkReachabilityStatus) -> Void

    /// A manager for the default route (the internet in general), or `nil` where reachability is not available.
    public static let `default` = NetworkReachabilityManager()

    /// Posted on every change while the manager listens, with the status in `userInfo[statusUserInfoKey]`.
    ///
    /// ```swift
    /// NotificationCenter.default.addObserver(
    ///     forName: NetworkReachabilityManager.reachabilityDidChangeNotification, object: nil, queue: nil
    /// ) { note in print(note.userInfo?[NetworkReachabilityManager.statusUserInfoKey] as Any) }
    /// ```
    public static let reachabilityDidChangeNotification = Notification.Name("dev.kite.reachabilityDidChange")

    /// The `userInfo` key of the status in ``reachabilityDidChangeNotification``.
    public static let statusUserInfoKey = "status"

    private let backend: any Backend
    private let state = NIOLockedValueBox(State())

    private struct State {
        var status: NetworkReachabilityStatus = .unknown
        var hasStatus = false
        var listener: (queue: DispatchQueue, closure: Listener)?
        var streams: [UInt64: AsyncStream<NetworkReachabilityStatus>.Continuation] = [:]
        var nextStream: UInt64 = 0
        var running = false
    }

    /// A manager for the default route: reachable when traffic can leave for the internet in general.
    public convenience init?() {
        #if os(Linux)
        self.init(backend: NetlinkReachability(target: .defaultRoute))
        #else
        guard let backend = PathMonitorReachability.make(host: nil) else { return nil }
        self.init(backend: backend)
        #endif
    }

    /// A manager for a host name (resolved when the status is computed) or a numeric address.
    ///
    /// - Parameter host: The host, such as `api.example.com` or `10.0.0.1`.
    public convenience init?(host: String) {
        guard !host.isEmpty, !host.contains(where: { $0.isWhitespace || $0 == "/" }) else { return nil }
        #if os(Linux)
        self.init(backend: NetlinkReachability(target: .host(host)))
        #else
        guard let backend = PathMonitorReachability.make(host: host) else { return nil }
        self.init(backend: backend)
        #endif
    }

    /// A manager for a numeric IPv4 or IPv6 address; `nil` when `address` is not one.
    ///
    /// - Parameter address: The address, such as `192.0.2.1` or `2001:db8::1`.
    public convenience init?(address: String) {
        #if os(Linux)
        guard let bytes = NetlinkReachability.numericAddress(address) else { return nil }
        self.init(backend: NetlinkReachability(target: .addresses([bytes])))
        #else
        guard let backend = PathMonitorReachability.make(address: address) else { return nil }
        self.init(backend: backend)
        #endif
    }

    init(backend: any Backend) {
        self.backend = backend
    }

    deinit {
        self.backend.stop()
    }

    /// The current status: the last one seen while listening, else read now.
    public var status: NetworkReachabilityStatus {
        if let known = self.state.withLockedValue({ $0.running && $0.hasStatus ? $0.status : nil }) { return known }
        return self.backend.currentStatus()
    }

    /// Whether the target is reachable now.
    public var isReachable: Bool {
        if case .reachable = self.status { return true }
        return false
    }

    /// Whether the target is reachable now through a cellular modem.
    public var isReachableOnCellular: Bool { self.status == .reachable(.cellular) }

    /// Whether the target is reachable now through Ethernet or Wi-Fi.
    public var isReachableOnEthernetOrWiFi: Bool { self.status == .reachable(.ethernetOrWiFi) }

    /// Starts watching; `listener` gets the current status promptly, then each change (never the same status
    /// twice in a row), on `queue`. Replaces an earlier listener.
    ///
    /// Alamofire's default queue is the main queue; on Linux the main queue runs only when the main thread hands
    /// it control, so Kite's default is a serial queue of the manager's own.
    ///
    /// - Parameters:
    ///   - queue: Where `listener` runs.
    ///   - listener: Called with each status.
    /// - Returns: `false` when the network's state cannot be watched (the netlink socket cannot be opened).
    @discardableResult
    public func startListening(
        onQueue queue: DispatchQueue = DispatchQueue(label: "dev.kite.reachability.listener"),
        onUpdatePerforming listener: @escaping Listener
    ) -> Bool {
        let known = self.state.withLockedValue { state -> NetworkReachabilityStatus? in
            state.listener = (queue, listener)
            return state.hasStatus && state.running ? state.status : nil
        }
        guard self.ensureRunning() else {
            self.state.withLockedValue { $0.listener = nil }
            return false
        }
        if let known { queue.async { listener(known) } }
        return true
    }

    /// Stops the listener; the manager stops watching when no ``statusUpdates`` sequence is iterated either.
    public func stopListening() {
        let stop = self.state.withLockedValue { state -> Bool in
            state.listener = nil
            return self.shouldStop(&state)
        }
        if stop { self.backend.stop() }
    }

    /// The statuses as they change, starting with the current one; each access makes a new sequence, and the
    /// manager watches while any is iterated.
    ///
    /// ```swift
    /// for await status in manager.statusUpdates where status != .notReachable {
    ///     break  // online again
    /// }
    /// ```
    public var statusUpdates: AsyncStream<NetworkReachabilityStatus> {
        let (stream, continuation) = AsyncStream.makeStream(of: NetworkReachabilityStatus.self)
        let (id, known) = self.state.withLockedValue { state -> (UInt64, NetworkReachabilityStatus?) in
            let id = state.nextStream
            state.nextStream += 1
            state.streams[id] = continuation
            return (id, state.hasStatus && state.running ? state.status : nil)
        }
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            let stop = self.state.withLockedValue { state -> Bool in
                state.streams[id] = nil
                return self.shouldStop(&state)
            }
            if stop { self.backend.stop() }
        }
        if let known { continuation.yield(known) }
        if !self.ensureRunning() { continuation.finish() }
        return stream
    }

    /// Starts the backend unless it runs.
    private func ensureRunning() -> Bool {
        let start = self.state.withLockedValue { state -> Bool in
            guard !state.running else { return false }
            state.running = true
            state.hasStatus = false
            return true
        }
        guard start else { return true }
        let started = self.backend.start { [weak self] status in self?.receive(status) }
        if !started { self.state.withLockedValue { $0.running = false } }
        return started
    }

    /// Whether nothing watches any more; marks the backend stopped.
    private func shouldStop(_ state: inout State) -> Bool {
        guard state.running, state.listener == nil, state.streams.isEmpty else { return false }
        state.running = false
        return true
    }

    /// Delivers a status from the backend, unless it repeats the last one.
    private func receive(_ status: NetworkReachabilityStatus) {
        let delivery = self.state.withLockedValue {
            state -> (Listener?, DispatchQueue?, [AsyncStream<NetworkReachabilityStatus>.Continuation])? in
            guard state.running, !(state.hasStatus && state.status == status) else { return nil }
            state.status = status
            state.hasStatus = true
            return (state.listener?.closure, state.listener?.queue, Array(state.streams.values))
        }
        guard let (listener, queue, streams) = delivery else { return }
        if let listener, let queue { queue.async { listener(status) } }
        for stream in streams { stream.yield(status) }
        NotificationCenter.default.post(
            name: Self.reachabilityDidChangeNotification,
            object: self,
            userInfo: [Self.statusUserInfoKey: status]
        )
    }
}

extension NetworkReachabilityManager {
    /// Where statuses come from: netlink on Linux, `NWPathMonitor` on Apple platforms, a fake in tests.
    protocol Backend: Sendable {
        func currentStatus() -> NetworkReachabilityStatus
        func start(_ report: @escaping @Sendable (NetworkReachabilityStatus) -> Void) -> Bool
        func stop()
    }
}

#if os(Linux)
extension NetlinkReachability: NetworkReachabilityManager.Backend {}
#endif
