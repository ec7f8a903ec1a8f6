import Foundation
import KiteTestServer
import Testing
import X509

@testable import Kite

/// AFNetworking's `AFSecurityPolicy` rules, against the TLS test servers.
@Suite struct SecurityPolicyTests {
    /// The status of a GET to the server presenting `certificate` under `policy`, or the refusal's message.
    private func outcome(
        _ certificate: TestCertificateAuthority.ServerCertificate,
        _ makePolicy: (TestCertificateAuthority) -> SecurityPolicy
    ) async throws -> String {
        let (authority, base) = try await TrustServers.shared.server(certificate)
        var configuration = Session.Configuration()
        configuration.tls.trustRoots = .certificates([authority.root.certificate])
        configuration.timeouts.connect = .seconds(5)
        let session = Session(
            configuration: configuration,
            serverTrustManager: ServerTrustManager(evaluatingEveryHostWith: makePolicy(authority))
        )
        defer { Task { try await session.shutdown() } }
        let response = await session.request(base + "/get").serializingData().response
        if let error = response.error {
            #expect(error.code == .serverTrustEvaluationFailed, "\(error)")
            return error.message
        }
        return String(response.response?.status.code ?? 0)
    }

    @Test func theDefaultPolicyAcceptsOnlyValidCertificatesForTheHost() async throws {
        #expect(try await self.outcome(.leaf) { _ in .default } == "200")
        #expect(try await self.outcome(.expired) { _ in .default }.contains("expired"))
        #expect(try await self.outcome(.wrongHost) { _ in .default }.contains("for another host"))
        #expect(try await self.outcome(.selfSigned) { _ in .default }.contains("self-signed"))
    }

    @Test func invalidCertificatesWithDomainValidationNeedPinning() async throws {
        let unpinned: (TestCertificateAuthority) -> SecurityPolicy = { _ in
            let policy = SecurityPolicy(pinningMode: .none)
            policy.allowInvalidCertificates = true
            return policy
        }
        for certificate in [TestCertificateAuthority.ServerCertificate.leaf, .selfSigned] {
            #expect(try await self.outcome(certificate, unpinned).contains("needs pinned certificates"))
        }
        let pinnedButEmpty: (TestCertificateAuthority) -> SecurityPolicy = { _ in
            let policy = SecurityPolicy(pinningMode: .certificate)
            policy.allowInvalidCertificates = true
            return policy
        }
        #expect(try await self.outcome(.leaf, pinnedButEmpty).contains("needs pinned certificates"))
    }

    @Test func invalidCertificatesWithoutDomainValidationAreAccepted() async throws {
        let lax: (TestCertificateAuthority) -> SecurityPolicy = { _ in
            let policy = SecurityPolicy(pinningMode: .none)
            policy.allowInvalidCertificates = true
            policy.validatesDomainName = false
            return policy
        }
        for certificate in TestCertificateAuthority.ServerCertificate.allCases {
            #expect(try await self.outcome(certificate, lax) == "200", "\(certificate)")
        }
    }

    @Test func certificatePinningUsesThePinsAsTheOnlyAnchors() async throws {
        let pinSelfSigned: (TestCertificateAuthority) -> SecurityPolicy = {
            SecurityPolicy(pinningMode: .certificate, pinnedCertificates: [$0.selfSigned.certificate])
        }
        #expect(try await self.outcome(.selfSigned, pinSelfSigned) == "200")
        #expect(try await self.outcome(.leaf, pinSelfSigned).contains("no pinned certificate matches"))

        let pinIntermediate: (TestCertificateAuthority) -> SecurityPolicy = {
            SecurityPolicy(pinningMode: .certificate, pinnedCertificates: [$0.intermediate.certificate])
        }
        #expect(try await self.outcome(.leaf, pinIntermediate) == "200")
        #expect(try await self.outcome(.wrongHost, pinIntermediate).contains("is not for this host"))
        // Even allowing invalid certificates, the pinned anchors must validate the dates.
        let allowing: (TestCertificateAuthority) -> SecurityPolicy = {
            let policy = SecurityPolicy(pinningMode: .certificate, pinnedCertificates: [$0.intermediate.certificate])
            policy.allowInvalidCertificates = true
            return policy
        }
        #expect(try await self.outcome(.expired, allowing).contains("expired on"))
        let anyName: (TestCertificateAuthority) -> SecurityPolicy = {
            let policy = SecurityPolicy(pinningMode: .certificate, pinnedCertificates: [$0.intermediate.certificate])
            policy.validatesDomainName = false
            return policy
        }
        #expect(try await self.outcome(.wrongHost, anyName) == "200")
    }

    @Test func publicKeyPinning() async throws {
        let pinLeafKey: (TestCertificateAuthority) -> SecurityPolicy = {
            SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [$0.leaf.certificate])
        }
        #expect(try await self.outcome(.leaf, pinLeafKey) == "200")
        #expect(try await self.outcome(.untrustedLeaf, pinLeafKey).contains("does not lead to a trusted root"))
        let allowingExpired: (TestCertificateAuthority) -> SecurityPolicy = {
            let policy = SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [$0.expired.certificate])
            policy.allowInvalidCertificates = true
            return policy
        }
        #expect(try await self.outcome(.expired, allowingExpired) == "200")
        #expect(try await self.outcome(.leaf, allowingExpired).contains("no pinned public key matches"))
    }

    @Test func pinnedCertificatesAreDeduplicatedAndLoadFromFolders() throws {
        let authority = try TestCertificateAuthority()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        try authority.write(to: folder)
        defer { try? FileManager.default.removeItem(at: folder) }
        let loaded = try SecurityPolicy.certificates(inDirectory: folder)
        #expect(loaded.contains(authority.root.certificate) && loaded.contains(authority.leaf.certificate))
        let policy = SecurityPolicy(pinningMode: .certificate, pinnedCertificates: loaded + loaded)
        #expect(policy.pinnedCertificates.count == Set(loaded).count && Set(loaded).count < loaded.count * 2)
    }
}
