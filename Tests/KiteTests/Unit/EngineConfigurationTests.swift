import Foundation
import HTTPTypes
import NIOConcurrencyHelpers
import NIOSSL
import Testing
import X509

@testable import Kite

/// The engine is configured by a value, not by the session: these drive `AHCTransport` with an
/// `EngineConfiguration` made here, whose proxy selection and trust decisions are test doubles, against real servers.
@Suite(.timeLimit(.minutes(1))) struct EngineConfigurationTests {
    /// Records what the engine asks, and answers with `answer`.
    final class Selection: ProxySelecting {
        let asked = NIOLockedValueBox<[String]>([])
        let answer: @Sendable () throws(KiteError) -> ProxyServer?

        init(_ answer: @escaping @Sendable () throws(KiteError) -> ProxyServer?) {
            self.answer = answer
        }

        func proxy(scheme: String, host: String, port: Int) throws(KiteError) -> ProxyServer? {
            self.asked.withLockedValue { $0.append("\(scheme) \(host) \(port)") }
            return try self.answer()
        }
    }

    /// Trusts the test root for every host, records each evaluation, and refuses `refused`.
    final class Decisions: ServerTrustDecisions {
        let configuration: TLSConfiguration
        let refused: String?
        let evaluated = NIOLockedValueBox<[String]>([])

        init(root: Certificate, refusing refused: String? = nil) throws {
            var configuration = TLSConfiguration.makeClientConfiguration()
            configuration.trustRoots = .certificates([try TLSOptions.nioCertificate(root)])
            self.configuration = configuration
            self.refused = refused
        }

        func tlsConfiguration(forHost host: String) throws(KiteError) -> TLSConfiguration? {
            self.configuration
        }

        func evaluate(_ certificates: [Certificate], forHost host: String) throws(KiteError) {
            let subjects = certificates.map { "\($0.subject)" }.joined(separator: " | ")
            self.evaluated.withLockedValue { $0.append("\(host): \(subjects)") }
            if host == self.refused {
                throw KiteError(code: .serverTrustEvaluationFailed, message: "the test refuses \(host)")
            }
        }
    }

    /// Records the chain it is asked about and gives a reason of its own.
    final class Explainer: TrustFailureExplaining {
        let asked = NIOLockedValueBox<[String]>([])

        func reason(for chain: [Certificate], host: String) async -> String {
            let subjects = chain.map { "\($0.subject)" }.joined(separator: " | ")
            self.asked.withLockedValue { $0.append("\(host): \(subjects)") }
            return "the test's reason"
        }
    }

    /// The status and body of one GET of `url` on `transport`, or its error.
    private func get(_ url: String, on transport: AHCTransport) async -> Result<(Int, String), KiteError> {
        let parts = URLComponents(string: url)!
        let authority = "\(parts.host!):\(parts.port!)"
        let head = HTTPRequest(method: .get, scheme: parts.scheme, authority: authority, path: parts.path)
        do {
            let response = try await transport.send(TransportRequest(head: head, body: nil))
            var body = ""
            for try await chunk in response.body { body += String(buffer: chunk) }
            return .success((response.head.status.code, body))
        } catch {
            return .failure(error as! KiteError)
        }
    }

    @Test func eachRequestsProxyIsTheSelectionsChoice() async throws {
        let base = try await SharedTestServer.shared.baseURL()
        let port = try #require(URL(string: base)?.port)
        let direct = Selection { nil }
        var configuration = EngineConfiguration()
        configuration.proxies = direct
        let transport = AHCTransport(configuration: configuration, canShutDown: true)
        defer { Task { try? await transport.shutdown() } }
        let answer = try await self.get(base + "/get", on: transport).get()
        #expect(answer.0 == 200)
        #expect(direct.asked.withLockedValue { $0 } == ["http 127.0.0.1 \(port)"])

        // A proxy that refuses connections: the request goes to it, and the error names it.
        let proxyPort = try Sockets.refusingPort()
        configuration.proxies = Selection { ProxyServer(kind: .http, host: "127.0.0.1", port: proxyPort) }
        let proxied = AHCTransport(configuration: configuration, canShutDown: true)
        defer { Task { try? await proxied.shutdown() } }
        let refused = await self.get(base + "/get", on: proxied)
        guard case .failure(let error) = refused else {
            Issue.record("a request through a refusing proxy succeeded: \(refused)")
            return
        }
        #expect(error.code == .connectionFailed)
        #expect(error.message.hasPrefix("through the proxy http://127.0.0.1:\(proxyPort): "), "\(error.message)")

        // A selection that fails fails the request with its own error.
        configuration.proxies = Selection { () throws(KiteError) in
            throw KiteError(code: .proxyFailed, message: "the test's proxy variable cannot be used")
        }
        let failing = AHCTransport(configuration: configuration, canShutDown: true)
        defer { Task { try? await failing.shutdown() } }
        let failed = await self.get(base + "/get", on: failing)
        #expect(failed.failure?.code == .proxyFailed)
        #expect(failed.failure?.message == "the test's proxy variable cannot be used")
    }

    @Test func theTrustDecisionsChooseTheHandshakeAndAcceptTheServer() async throws {
        let (authority, base) = try await TrustServers.shared.server(.leaf)
        let decisions = try Decisions(root: authority.root.certificate)
        var configuration = EngineConfiguration()
        configuration.trust = decisions
        let transport = AHCTransport(configuration: configuration, canShutDown: true)
        defer { Task { try? await transport.shutdown() } }
        // The engine's own configuration trusts only the system's roots: the decisions' configuration is used.
        let answer = try await self.get(base + "/get", on: transport).get()
        #expect(answer.0 == 200)
        #expect(decisions.evaluated.withLockedValue { $0 } == ["127.0.0.1: \(authority.leaf.certificate.subject)"])

        let refusing = try Decisions(root: authority.root.certificate, refusing: "127.0.0.1")
        configuration.trust = refusing
        let refusingTransport = AHCTransport(configuration: configuration, canShutDown: true)
        defer { Task { try? await refusingTransport.shutdown() } }
        let refused = await self.get(base + "/get", on: refusingTransport)
        #expect(refused.failure?.code == .serverTrustEvaluationFailed)
        #expect(refused.failure?.message == "the test refuses 127.0.0.1")
    }

    @Test func aFailedVerificationIsExplainedByTheSessionsExplainerOrNotAtAll() async throws {
        let (authority, base) = try await TrustServers.shared.server(.leaf)
        let explainer = Explainer()
        var configuration = EngineConfiguration()
        configuration.trustFailureDiagnosis = explainer
        let transport = AHCTransport(configuration: configuration, canShutDown: true)
        defer { Task { try? await transport.shutdown() } }
        // The system's roots do not include the test root.
        let explained = await self.get(base + "/get", on: transport)
        #expect(explained.failure?.code == .serverTrustEvaluationFailed)
        #expect(explained.failure?.message == "the server 127.0.0.1 is not trusted: the test's reason")
        let chain = "\(authority.leaf.certificate.subject) | \(authority.intermediate.certificate.subject)"
        #expect(explainer.asked.withLockedValue { $0 } == ["127.0.0.1: \(chain)"])

        configuration.trustFailureDiagnosis = nil
        let silent = AHCTransport(configuration: configuration, canShutDown: true)
        defer { Task { try? await silent.shutdown() } }
        let unexplained = await self.get(base + "/get", on: silent)
        let unexplainedMessage = unexplained.failure?.message
        #expect(unexplainedMessage == "the server 127.0.0.1 is not trusted: its certificate failed verification")
        #expect(explainer.asked.withLockedValue { $0 }.count == 1)
    }

    /// DESIGN.md: files reach down the layers, never up. No engine file's code names a type declared at the top
    /// level of `Session/`, `Requests/`, `Pipeline/` or `Features/` (comments and string literals may).
    @Test func noEngineFileNamesATypeOfTheLayersAbove() async throws {
        let sources = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("../../../Sources/Kite").standardizedFileURL
        func files(in folder: String) -> [URL] {
            let root = sources.appendingPathComponent(folder)
            let found = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)?.allObjects ?? []
            return found.compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }
        }
        let declaration = try Regex(
            #"^(?:public |open |package |internal |fileprivate |private )*(?:final )?(?:struct|class|enum|protocol|actor|typealias) ([A-Z]\w*)"#
        ).anchorsMatchLineEndings()
        var upper: Set<String> = []
        for folder in ["Session", "Requests", "Pipeline", "Features"] {
            for (index, file) in files(in: folder).enumerated() {
                await yieldNowAndThen(index, every: 4)
                let text = try String(contentsOf: file, encoding: .utf8)
                for match in text.matches(of: declaration) { upper.insert(String(match.output[1].substring!)) }
            }
        }
        #expect(upper.contains("Session") && upper.contains("ProxyRoute") && upper.contains("TLSOptions"))
        let engine = files(in: "Engine")
        #expect(engine.count >= 10)
        let names = try Regex("\\b(?:" + upper.sorted().joined(separator: "|") + ")\\b")
        let literal = try Regex(#""[^"\n]*""#)
        var named: [String] = []
        for (index, file) in engine.enumerated() {
            await yieldNowAndThen(index, every: 4)
            let code = try String(contentsOf: file, encoding: .utf8).split(separator: "\n")
                .filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//") }
                .joined(separator: "\n")
                .replacing(literal, with: "\"\"")
            for match in code.matches(of: names) { named.append("\(file.lastPathComponent): \(code[match.range])") }
        }
        #expect(named.isEmpty, "\(named.sorted())")
    }
}

extension Result {
    fileprivate var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
