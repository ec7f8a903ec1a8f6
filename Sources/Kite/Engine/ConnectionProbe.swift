import Foundation
import HTTPTypes
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOSSL

/// Tells each request which connection served it. AHC's async API says nothing about connections, so when a
/// session collects connection metrics the send stage tags the head it hands the engine with a header that a
/// handler on every connection (added through AHC's connection initializers) reads and removes before the
/// head is encoded: the tag never reaches the server. Each exchange gets a record of its own; the request
/// keeps its latest and forgets the others.
///
/// Everything AHC does before its initializers run (DNS, TCP connect, TLS handshake) happens inside
/// NIO's bootstrap with no hook, so those phases cannot be timed separately; see ``ConnectionMetrics``.
final class ConnectionProbe: Sendable {
    /// The header that carries a request's tag from the engine to the connection's handler.
    static let tagName = "X-Kite-Connection-Probe"
    static let tagField = HTTPField.Name(tagName)!

    /// The records of requests in flight, by tag.
    private let records = TagRegistry<Record>()
    private let connections = NIOLockedValueBox(0)

    /// What one request learns about its connection; written on the connection's event loop, read after the
    /// response head arrives (the lock orders the two).
    final class Record: Sendable {
        /// The value of the tag header that ties the exchange to this record.
        let tag: String
        /// When the request was handed to the engine.
        let sentAt: ContinuousClock.Instant = .now
        private let metrics = NIOLockedValueBox<ConnectionMetrics?>(nil)

        fileprivate init(tag: String) {
            self.tag = tag
        }

        var value: ConnectionMetrics? {
            get { self.metrics.withLockedValue { $0 } }
            set { self.metrics.withLockedValue { $0 = newValue } }
        }
    }

    /// A registered record for an exchange about to be sent, with its tag.
    func makeRecord() -> Record {
        self.records.register { Record(tag: $0) }
    }

    /// Forgets a record once a later exchange replaced it or the request is over.
    func unregister(_ record: Record) {
        self.records.remove(record.tag)
    }

    /// How many records are registered (for tests: none once requests are over).
    var registeredCount: Int { self.records.count }

    fileprivate func record(for tag: String) -> Record? {
        self.records.value(for: tag)
    }

    fileprivate func nextConnectionID() -> Int {
        self.connections.withLockedValue {
            $0 += 1
            return $0
        }
    }

    // MARK: Connection initializers

    /// Adds the probe to a new HTTP/1.1 connection, in front of AHC's request encoder. Never fails: a probe
    /// that cannot be added leaves the connection as it is.
    func installHTTP1(on channel: any Channel) {
        let facts = Facts(channel: channel, id: self.nextConnectionID(), httpVersion: "http/1.1")
        let operations = channel.pipeline.syncOperations
        guard let encoder = try? operations.handler(type: HTTPRequestEncoder.self) else { return }
        try? operations.addHandler(Handler(probe: self, facts: facts), position: .after(encoder))
    }

    /// Keeps the facts of a new HTTP/2 connection in its pipeline, for its streams.
    func installHTTP2Connection(on channel: any Channel) {
        let facts = Facts(channel: channel, id: self.nextConnectionID(), httpVersion: "h2")
        try? channel.pipeline.syncOperations.addHandler(FactsHandler(facts: facts))
    }

    /// Adds the probe to an HTTP/2 stream (one request), in front of its HTTP/1-style codec.
    func installHTTP2Stream(on stream: any Channel) {
        let operations = stream.pipeline.syncOperations
        guard let parent = stream.parent,
            let facts = try? parent.pipeline.syncOperations.handler(type: FactsHandler.self).facts,
            let codec = try? operations.handler(type: HTTP2FramePayloadToHTTP1ClientCodec.self)
        else { return }
        try? operations.addHandler(Handler(probe: self, facts: facts), position: .after(codec))
    }

    /// One connection's facts, kept on its event loop.
    final class Facts {
        let id: Int
        let readyAt: ContinuousClock.Instant = .now
        let httpVersion: String
        let tlsVersion: String?
        let localAddress: String?
        let remoteAddress: String?
        var served = 0

        init(channel: any Channel, id: Int, httpVersion: String) {
            self.id = id
            self.httpVersion = httpVersion
            let tls = try? channel.pipeline.syncOperations.nioSSL_tlsVersion()
            self.tlsVersion = tls.flatMap { $0 }.map(Self.name)
            self.localAddress = channel.localAddress.flatMap(Self.text)
            self.remoteAddress = channel.remoteAddress.flatMap(Self.text)
        }

        static func name(_ version: TLSVersion) -> String {
            switch version {
            case .tlsv1: "TLSv1.0"
            case .tlsv11: "TLSv1.1"
            case .tlsv12: "TLSv1.2"
            case .tlsv13: "TLSv1.3"
            }
        }

        static func text(_ address: SocketAddress) -> String? {
            guard let ip = address.ipAddress, let port = address.port else { return nil }
            return ip.contains(":") ? "[\(ip)]:\(port)" : "\(ip):\(port)"
        }
    }

    /// Holds an HTTP/2 connection's facts where its streams find them.
    final class FactsHandler: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = NIOAny
        let facts: Facts
        init(facts: Facts) { self.facts = facts }
    }

    /// Reads and removes the tag of each request head written on the connection (or stream).
    final class Handler: ChannelOutboundHandler, RemovableChannelHandler {
        typealias OutboundIn = HTTPClientRequestPart
        typealias OutboundOut = HTTPClientRequestPart

        private let probe: ConnectionProbe
        private let facts: Facts

        init(probe: ConnectionProbe, facts: Facts) {
            self.probe = probe
            self.facts = facts
        }

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            guard case .head(var head) = self.unwrapOutboundIn(data) else {
                context.write(data, promise: promise)
                return
            }
            let tag = head.headers.first(name: ConnectionProbe.tagName)
            head.headers.remove(name: ConnectionProbe.tagName)
            let reused = self.facts.served > 0
            self.facts.served += 1
            if let tag, let record = self.probe.record(for: tag) {
                let waited = record.sentAt.duration(to: self.facts.readyAt)
                record.value = ConnectionMetrics(
                    id: self.facts.id,
                    isReused: reused,
                    httpVersion: self.facts.httpVersion,
                    tlsVersion: self.facts.tlsVersion,
                    localAddress: self.facts.localAddress,
                    remoteAddress: self.facts.remoteAddress,
                    establishmentDuration: !reused && waited > .zero ? waited : nil
                )
            }
            context.write(self.wrapOutboundOut(.head(head)), promise: promise)
        }
    }
}
