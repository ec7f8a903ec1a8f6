import NIOSSL

extension Session.Configuration {
    /// What this session tells its engine: its timeouts, limits and TLS configuration, its proxy route, and its
    /// trust decisions.
    ///
    /// - Parameters:
    ///   - serverTrustManager: Chooses each host's evaluator; `nil` leaves trust to the handshake's verification.
    ///   - tlsConfiguration: The engine's TLS configuration instead of the one ``tls`` makes (tests use it to trust
    ///     a test CA).
    func engineConfiguration(
        serverTrustManager: ServerTrustManager? = nil,
        tlsConfiguration: TLSConfiguration? = nil
    ) -> EngineConfiguration {
        var engine = EngineConfiguration()
        engine.connectTimeout = self.timeouts.connect
        engine.idleReadTimeout = self.timeouts.idleRead
        engine.idleWriteTimeout = self.timeouts.idleWrite
        engine.maximumConnectionsPerHost = self.maximumConnectionsPerHost
        engine.connectionIdleTimeout = self.connectionIdleTimeout
        engine.http1Only = self.httpVersion == .http1Only
        engine.collectsConnectionMetrics = self.collectsConnectionMetrics
        // The session's TLS options, when not the defaults; a bad client key or certificate fails each request.
        if let tlsConfiguration {
            engine.tls = tlsConfiguration
        } else if !self.tls.isDefault {
            do {
                engine.tls = try self.tls.makeConfiguration(verification: .full)
            } catch {
                engine.setupError = error
            }
        }
        engine.defaultHeaderFields = Session.sentDefaultHeaders(for: self)
        let route = ProxyRoute(self.proxy)
        engine.proxies = route.isDirect ? nil : route
        engine.trust = serverTrustManager.map { ManagedTrust(manager: $0, options: self.tls) }
        if self.tls.diagnosesTrustFailures {
            engine.trustFailureDiagnosis = TrustDiagnosis(options: self.tls, manager: serverTrustManager)
        }
        return engine
    }
}

extension AHCTransport {
    /// The engine of `Session.default`: created once, never shut down.
    static let shared = AHCTransport(configuration: Session.Configuration(), canShutDown: false)

    /// The engine of a session with `configuration`.
    ///
    /// - Parameter tlsConfiguration: The engine's TLS settings instead of the session's ``TLSOptions``. Internal
    ///   (tests use it to trust a test CA).
    convenience init(
        configuration: Session.Configuration,
        canShutDown: Bool,
        tlsConfiguration: TLSConfiguration? = nil,
        serverTrustManager: ServerTrustManager? = nil
    ) {
        self.init(
            configuration: configuration.engineConfiguration(
                serverTrustManager: serverTrustManager,
                tlsConfiguration: tlsConfiguration
            ),
            canShutDown: canShutDown
        )
    }
}
