import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL
import X509

/// The engine's side of the session's ``ServerTrustDecisions``: the check that has them accept the server on a
/// connection before any request byte is written.
///
/// AHC has no verification callback, so the evaluation runs in a handler added through its connection
/// initializers (after the handshake): the first request head written on a connection is held until the
/// server is accepted for that head's host; a refusal fails the write (nothing reaches the socket) and closes
/// the connection, so it is never reused.
final class TrustGate: Sendable {
    let decisions: any ServerTrustDecisions

    init(decisions: any ServerTrustDecisions) {
        self.decisions = decisions
    }

    /// Adds the check to a new HTTP/1.1 connection over TLS, in front of AHC's request encoder (plain HTTP
    /// connections have no server to evaluate).
    func installHTTP1(on channel: any Channel) {
        let operations = channel.pipeline.syncOperations
        guard (try? operations.handler(type: NIOSSLClientHandler.self)) != nil,
            let encoder = try? operations.handler(type: HTTPRequestEncoder.self)
        else { return }
        try? operations.addHandler(Check(gate: self, connection: channel), position: .after(encoder))
    }

    /// Adds the check to an HTTP/2 stream, in front of its HTTP/1-style codec; the certificate is its
    /// connection's.
    func installHTTP2Stream(on stream: any Channel) {
        let operations = stream.pipeline.syncOperations
        guard let parent = stream.parent,
            let codec = try? operations.handler(type: HTTP2FramePayloadToHTTP1ClientCodec.self)
        else { return }
        try? operations.addHandler(Check(gate: self, connection: parent), position: .after(codec))
    }

    /// The server's certificate on `connection` (its TLS handler is there once the handshake is over).
    static func certificates(on connection: any Channel) -> [Certificate] {
        guard let peer = try? connection.pipeline.syncOperations.nioSSL_peerCertificate(),
            let der = try? peer.toDERBytes(),
            let certificate = try? Certificate(derEncoded: der)
        else { return [] }
        return [certificate]
    }

    /// Why a request was refused before it was written.
    struct Refusal: Error {
        let error: KiteError
    }

    /// Holds each request head until the server is trusted for its host; fails every write once refused.
    ///
    /// The decisions run user code (a trust manager's `serverTrustEvaluator(forHost:)` and the evaluator) that may
    /// take its time (a pin store, OCSP, a log): they run on `NIOThreadPool.singleton`, never on the event loop, which serves
    /// every other connection on it meanwhile. What the pipeline writes and flushes on this connection while they
    /// run waits here, in order.
    final class Check: ChannelOutboundHandler, RemovableChannelHandler {
        typealias OutboundIn = HTTPClientRequestPart
        typealias OutboundOut = HTTPClientRequestPart

        private let gate: TrustGate
        private let connection: any Channel
        /// The hosts already accepted on this connection.
        private var trusted: Set<String> = []
        private var refusal: Refusal?
        /// The writes held while an evaluation runs (the head that started it first); `nil` when none runs.
        private var held: [(data: NIOAny, promise: EventLoopPromise<Void>?)]?
        private var flushHeld = false

        init(gate: TrustGate, connection: any Channel) {
            self.gate = gate
            self.connection = connection
        }

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            if let refusal = self.refusal {
                promise?.fail(refusal)
                return
            }
            if self.held != nil {
                self.held?.append((data, promise))
                return
            }
            if case .head(let head) = self.unwrapOutboundIn(data) {
                let host = Self.host(of: head)
                if !self.trusted.contains(host) {
                    self.held = [(data, promise)]
                    self.evaluate(host, context: context)
                    return
                }
            }
            context.write(data, promise: promise)
        }

        func flush(context: ChannelHandlerContext) {
            if self.held != nil {
                self.flushHeld = true
                return
            }
            context.flush()
        }

        func handlerRemoved(context: ChannelHandlerContext) {
            let held = self.held ?? []
            self.held = nil
            for write in held { write.promise?.fail(ChannelError.ioOnClosedChannel) }
        }

        /// Has the server evaluated for `host` off the event loop, then writes what was held, or refuses it.
        private func evaluate(_ host: String, context: ChannelHandlerContext) {
            let decisions = self.gate.decisions
            let certificates = TrustGate.certificates(on: self.connection)
            let evaluated = NIOThreadPool.singleton.runIfActive(eventLoop: context.eventLoop) { () throws -> Void in
                try decisions.evaluate(certificates, forHost: host)
            }
            evaluated.assumeIsolated().whenComplete { result in
                guard let held = self.held else { return }  // the handler was removed meanwhile
                self.held = nil
                switch result {
                case .success:
                    self.trusted.insert(host)
                    for write in held { self.write(context: context, data: write.data, promise: write.promise) }
                case .failure(let error):
                    let refusal = Refusal(
                        error: error as? KiteError
                            ?? KiteError(
                                code: .serverTrustEvaluationFailed,
                                message: "the server \(host) is not trusted: \(error)",
                                underlyingError: error
                            )
                    )
                    self.refuse(refusal, context: context, promise: held.first?.promise)
                    for write in held.dropFirst() { write.promise?.fail(refusal) }
                }
                if self.flushHeld, self.held == nil {
                    self.flushHeld = false
                    context.flush()
                }
            }
        }

        /// Fails the write, then the request through the pipeline (AHC fails it with this error and closes
        /// the HTTP/1 connection; closing first would race it with "connection closed"). An HTTP/2
        /// connection is closed on the next tick, once the stream's request has failed.
        private func refuse(_ refusal: Refusal, context: ChannelHandlerContext, promise: EventLoopPromise<Void>?) {
            self.refusal = refusal
            promise?.fail(refusal)
            context.fireErrorCaught(refusal)
            if self.connection !== context.channel {
                let connection = self.connection
                context.eventLoop.execute { connection.close(promise: nil) }
            }
        }

        /// The host a head is for, from its `Host` field, without the port.
        static func host(of head: HTTPRequestHead) -> String {
            self.host(ofAuthority: head.headers.first(name: "host") ?? "")
        }

        /// `host[:port]` or `[v6]:port` without the port, lowercased.
        static func host(ofAuthority value: String) -> String {
            self.hostAndPort(ofAuthority: value, defaultPort: 0).host.lowercased()
        }

        /// The host (without an IPv6 literal's brackets) and port of an authority (`host`, `host:port`, `[v6]`,
        /// `[v6]:port`), with `defaultPort` when it names none. The engine's one authority parser: trust
        /// evaluation, trust diagnosis and proxy selection use it.
        static func hostAndPort(ofAuthority value: String, defaultPort: Int) -> (host: String, port: Int) {
            if value.hasPrefix("["), let close = value.firstIndex(of: "]") {
                let after = value[value.index(after: close)...]
                let port = after.hasPrefix(":") ? Int(after.dropFirst()) : nil
                return (String(value[value.index(after: value.startIndex)..<close]), port ?? defaultPort)
            }
            guard let colon = value.firstIndex(of: ":") else { return (value, defaultPort) }
            return (String(value[..<colon]), Int(value[value.index(after: colon)...]) ?? defaultPort)
        }
    }
}
