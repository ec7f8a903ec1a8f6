#if os(Linux)
import Foundation
import Testing

@testable import Kite

/// Reachability against real kernel state: each test makes a network namespace, changes its links and routes
/// with `ip`, and checks what the listener, the notification and the async sequence each saw.
@Suite(.enabled(if: NetworkNamespace.isAvailable, NetworkNamespace.skipReason))
struct ReachabilityNamespaceTests {
    typealias Status = NetworkReachabilityManager.NetworkReachabilityStatus

    /// The three ways a status is delivered, recorded separately.
    private final class Observers: @unchecked Sendable {
        // @unchecked: set up once, then only read; the recorders guard their own state.
        let listener = StatusRecorder()
        let notified = StatusRecorder()
        let streamed = StatusRecorder()
        private var token: (any NSObjectProtocol)?
        private var streaming: Task<Void, Never>?

        func start(_ manager: NetworkReachabilityManager) -> Bool {
            let notified = self.notified
            self.token = NotificationCenter.default.addObserver(
                forName: NetworkReachabilityManager.reachabilityDidChangeNotification,
                object: manager,
                queue: nil
            ) { note in
                if let status = note.userInfo?[NetworkReachabilityManager.statusUserInfoKey] as? Status {
                    notified.record(status)
                }
            }
            let listener = self.listener
            let started = manager.startListening { listener.record($0) }
            let streamed = self.streamed
            let updates = manager.statusUpdates
            self.streaming = Task {
                for await status in updates { streamed.record(status) }
            }
            return started
        }

        /// Waits until every source saw `count` statuses (bounded) and returns what each saw.
        func statuses(count: Int) async -> (listener: [Status], notified: [Status], streamed: [Status]) {
            (
                await self.listener.statuses(count: count),
                await self.notified.statuses(count: count),
                await self.streamed.statuses(count: count)
            )
        }

        func stop(_ manager: NetworkReachabilityManager) {
            manager.stopListening()
            self.streaming?.cancel()
            if let token { NotificationCenter.default.removeObserver(token) }
        }
    }

    private func expectAll(
        _ seen: (listener: [Status], notified: [Status], streamed: [Status]),
        _ expected: [Status],
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(seen.listener == expected, "listener", sourceLocation: sourceLocation)
        #expect(seen.notified == expected, "notification", sourceLocation: sourceLocation)
        #expect(seen.streamed == expected, "async sequence", sourceLocation: sourceLocation)
    }

    @Test func theDefaultRouteFollowsTheLinkAndTheRoute() async throws {
        try await NetworkNamespace.with { namespace in
            let manager = NetworkReachabilityManager(
                backend: NetlinkReachability(target: .defaultRoute, makeSocket: namespace.socketMaker)
            )
            #expect(manager.status == .reachable(.ethernetOrWiFi))
            let observers = Observers()
            #expect(observers.start(manager))
            defer { observers.stop(manager) }
            self.expectAll(await observers.statuses(count: 1), [.reachable(.ethernetOrWiFi)])

            // Down: the kernel drops the link's routes.
            try await namespace.ip("link", "set", "veth0", "down")
            self.expectAll(await observers.statuses(count: 2), [.reachable(.ethernetOrWiFi), .notReachable])
            #expect(!manager.isReachable)

            // Up again, but without a default route nothing is reachable (not delivered twice); then the route.
            try await namespace.ip("link", "set", "veth0", "up")
            try await namespace.ip("route", "add", "default", "via", "10.77.0.2", "dev", "veth0")
            self.expectAll(
                await observers.statuses(count: 3),
                [.reachable(.ethernetOrWiFi), .notReachable, .reachable(.ethernetOrWiFi)]
            )
            #expect(manager.isReachableOnEthernetOrWiFi)
        }
    }

    @Test func aHostIsUnreachableWhenItsRouteIsRemoved() async throws {
        try await NetworkNamespace.with { namespace in
            let manager = NetworkReachabilityManager(
                backend: NetlinkReachability(target: .host("10.99.0.5"), makeSocket: namespace.socketMaker)
            )
            let observers = Observers()
            #expect(observers.start(manager))
            defer { observers.stop(manager) }
            self.expectAll(await observers.statuses(count: 1), [.reachable(.ethernetOrWiFi)])

            try await namespace.ip("route", "del", "default")
            self.expectAll(await observers.statuses(count: 2), [.reachable(.ethernetOrWiFi), .notReachable])

            // A route for the host's network alone is enough.
            try await namespace.ip("route", "add", "10.99.0.0/16", "via", "10.77.0.2", "dev", "veth0")
            self.expectAll(
                await observers.statuses(count: 3),
                [.reachable(.ethernetOrWiFi), .notReachable, .reachable(.ethernetOrWiFi)]
            )
            // An address on the link is reachable without any gateway; a loopback address through lo.
            let onLink = NetworkReachabilityManager(
                backend: NetlinkReachability(target: .host("10.77.0.9"), makeSocket: namespace.socketMaker)
            )
            #expect(onLink.status == .reachable(.ethernetOrWiFi))
            let loopback = NetworkReachabilityManager(
                backend: NetlinkReachability(target: .host("127.0.0.1"), makeSocket: namespace.socketMaker)
            )
            #expect(loopback.status == .reachable(.ethernetOrWiFi))
            try await namespace.ip("link", "set", "lo", "down")
            #expect(loopback.status == .notReachable)
        }
    }

    @Test func anInterfaceNamedLikeAModemIsCellular() async throws {
        try await NetworkNamespace.with(peerName: "wwan0") { namespace in
            try await namespace.ip("addr", "add", "10.88.0.1/24", "dev", "wwan0")
            try await namespace.ip("route", "del", "default")
            try await namespace.ip("route", "add", "default", "dev", "wwan0", "metric", "100")
            let manager = NetworkReachabilityManager(
                backend: NetlinkReachability(target: .defaultRoute, makeSocket: namespace.socketMaker)
            )
            let observers = Observers()
            #expect(observers.start(manager))
            defer { observers.stop(manager) }
            self.expectAll(await observers.statuses(count: 1), [.reachable(.cellular)])
            #expect(manager.isReachableOnCellular)

            // A better (lower metric) default route through veth0 takes over.
            try await namespace.ip("route", "add", "default", "via", "10.77.0.2", "dev", "veth0", "metric", "50")
            let seen = await observers.statuses(count: 2)
            self.expectAll(seen, [.reachable(.cellular), .reachable(.ethernetOrWiFi)])
        }
    }

    @Test func aMultipathDefaultRouteCountsThroughTheKernelsLookup() async throws {
        try await NetworkNamespace.with { namespace in
            try await namespace.ip("route", "del", "default")
            try await namespace.ip(
                "route",
                "add",
                "default",
                "nexthop",
                "via",
                "10.77.0.2",
                "dev",
                "veth0",
                "nexthop",
                "via",
                "10.77.0.3",
                "dev",
                "veth0"
            )
            let manager = NetworkReachabilityManager(
                backend: NetlinkReachability(target: .defaultRoute, makeSocket: namespace.socketMaker)
            )
            #expect(manager.status == .reachable(.ethernetOrWiFi))
            try await namespace.ip("link", "set", "veth0", "down")
            #expect(manager.status == .notReachable)
        }
    }

    @Test func changesThatDoNotChangeTheStatusAreNotDelivered() async throws {
        try await NetworkNamespace.with { namespace in
            let manager = NetworkReachabilityManager(
                backend: NetlinkReachability(target: .defaultRoute, makeSocket: namespace.socketMaker)
            )
            let observers = Observers()
            #expect(observers.start(manager))
            defer { observers.stop(manager) }
            self.expectAll(await observers.statuses(count: 1), [.reachable(.ethernetOrWiFi)])
            // Several kernel events that leave the default route as it was.
            try await namespace.ip("addr", "add", "10.77.0.7/24", "dev", "veth0")
            try await namespace.ip("route", "add", "10.50.0.0/16", "via", "10.77.0.2")
            try await namespace.ip("link", "set", "peer0", "mtu", "1400")
            try await namespace.ip("route", "del", "default")
            // The next delivery is the real change, with nothing in between.
            self.expectAll(await observers.statuses(count: 2), [.reachable(.ethernetOrWiFi), .notReachable])
        }
    }

    @Test func aListenerAddedLaterGetsTheCurrentStatusAndStoppingEndsTheSequence() async throws {
        try await NetworkNamespace.with { namespace in
            let manager = NetworkReachabilityManager(
                backend: NetlinkReachability(target: .defaultRoute, makeSocket: namespace.socketMaker)
            )
            let first = StatusRecorder()
            #expect(manager.startListening { first.record($0) })
            #expect(await first.statuses(count: 1) == [.reachable(.ethernetOrWiFi)])
            let second = StatusRecorder()
            #expect(manager.startListening { second.record($0) })
            #expect(await second.statuses(count: 1) == [.reachable(.ethernetOrWiFi)])
            manager.stopListening()
            // Not listening: the status is read on demand.
            try await namespace.ip("route", "del", "default")
            #expect(manager.status == .notReachable)
            #expect(first.statuses == [.reachable(.ethernetOrWiFi)])
        }
    }
}
#endif
