import Crypto
import Foundation
import NIOConcurrencyHelpers
import NIOSSL
import SwiftASN1
import X509

@testable import KiteUnderFuzz

#if canImport(Glibc)
import Glibc
#endif

/// The whole client: a real `Session` on the real engine (async-http-client over NIO, not `MockTransport`) makes the
/// request an input chooses, against a loopback server that plays the input's conversation (``ScriptedServer``),
/// over HTTP/1.1 (`client`) or over TLS with ALPN `h2` (`clientHTTP2`), as curl's `curl_fuzzer` drives curl.
///
/// Properties checked on every input, besides "no trap": each request ends, with a response or a `KiteError`, within
/// ``ClientHarness/bound``; no file is written outside the download folder; once the session is shut down and the
/// server has closed its connections, the process holds exactly the descriptors it held before the input (none of
/// the client's is left open); AddressSanitizer and LeakSanitizer report nothing.
extension FuzzTarget {
    static func fuzzClient(_ input: [UInt8], http2: Bool) {
        let harness = http2 ? ClientHarness.http2 : ClientHarness.http1
        harness.run(ClientPlan(input))
    }
}

/// What one target keeps across inputs: the server, its certificate, the folders.
final class ClientHarness: Sendable {
    static let http1 = ClientHarness(http2: false)
    static let http2 = ClientHarness(http2: true)

    /// The longest an input's requests may take: the session's total timeout (2 s) spans retries and redirects,
    /// twice for an input that makes its request twice, plus the session's shutdown.
    static let bound = Duration.seconds(10)

    let server: ScriptedServer
    /// The certificate the HTTP/2 server presents, which the session trusts.
    let certificate: Certificate?
    let scheme: String
    /// `root/downloads` takes downloads, `root/cache` the disk cache; nothing else may appear in `root`.
    let root: URL
    var downloads: URL { self.root.appendingPathComponent("downloads") }
    var cache: URL { self.root.appendingPathComponent("cache") }

    private init(http2: Bool) {
        let root = FileManager.default.temporaryDirectory
            .appendingPathComponent("kite-fuzz-client-\(ProcessInfo.processInfo.processIdentifier)-\(http2 ? 2 : 1)")
        try? FileManager.default.removeItem(at: root)
        self.root = root
        do {
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
            if http2 {
                let (certificate, context) = try Self.makeTLS()
                self.certificate = certificate
                self.server = try ScriptedServer(tls: context)
                self.scheme = "https"
            } else {
                self.certificate = nil
                self.server = try ScriptedServer(tls: nil)
                self.scheme = "http"
            }
        } catch {
            fatalError("the fuzz harness could not start: \(error)")
        }
    }

    /// A self-signed certificate for 127.0.0.1 and a server context offering `h2`.
    private static func makeTLS() throws -> (Certificate, NIOSSLContext) {
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName { CommonName("Kite fuzz server") }
        let now = Date()
        let certificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: Certificate.PublicKey(key.publicKey),
            notValidBefore: now.addingTimeInterval(-3600),
            notValidAfter: now.addingTimeInterval(30 * 24 * 3600),
            issuer: name,
            subject: name,
            extensions: try Certificate.Extensions {
                SubjectAlternativeNames([.ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1]))])
            },
            issuerPrivateKey: Certificate.PrivateKey(key)
        )
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(try NIOSSLCertificate(bytes: serializer.serializedBytes, format: .der))],
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(key.derRepresentation), format: .der))
        )
        configuration.applicationProtocols = ["h2"]
        return (certificate, try NIOSSLContext(configuration: configuration))
    }

    /// Whether the first input ran: it starts the engine's event loops and their descriptors, which stay.
    private let warmedUp = NIOLockedValueBox(false)

    func run(_ plan: ClientPlan, countingDescriptors: Bool = true) {
        if !self.warmedUp.withLockedValue({ $0 }) {
            self.warmedUp.withLockedValue { $0 = true }
            let ok = Array("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n".utf8)
            self.run(ClientPlan([0, 0, 0, 0, 0x06, 0x01, UInt8(ok.count)] + ok), countingDescriptors: false)
        }
        try? FileManager.default.removeItem(at: self.downloads)
        try? FileManager.default.removeItem(at: self.cache)
        self.server.load(plan.scripts, automaticHTTP2: plan.automaticHTTP2)
        let before = Self.descriptors()
        let outcome = NIOLockedValueBox<String?>(nil)
        let done = DispatchSemaphore(value: 0)
        let harness = self
        Task.detached {
            let described = await harness.perform(plan)
            outcome.withLockedValue { $0 = described }
            done.signal()
        }
        let seconds = Double(Self.bound.components.seconds)
        require(
            done.wait(timeout: .now() + seconds) == .success,
            "the request did not end within \(Self.bound): \(plan)"
        )
        self.server.closeAll()
        // Nothing of the input stays behind: LeakSanitizer cannot see pointers Swift keeps in an enum's spare bits
        // (llvm/llvm-project#56751), so scripts kept until exit would read as leaked.
        self.server.load([], automaticHTTP2: true)
        let leftovers = (try? FileManager.default.contentsOfDirectory(atPath: self.root.path)) ?? []
        require(
            leftovers.allSatisfy { $0 == "downloads" || $0 == "cache" },
            "files were written outside the download folder: \(leftovers.sorted()) (\(plan))"
        )
        for name in (try? FileManager.default.contentsOfDirectory(atPath: self.downloads.path)) ?? [] {
            var isFolder: ObjCBool = false
            let path = self.downloads.appendingPathComponent(name).path
            require(
                FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) && !isFolder.boolValue,
                "the download folder holds \(name), which is not a file (\(plan))"
            )
        }
        // The server's connections close on its own loop, and the client's once shutdown has returned: both are
        // counted as soon as their descriptors are gone.
        guard countingDescriptors else { return }
        var after = Self.descriptors()
        let deadline = ContinuousClock.now + .seconds(2)
        while !after.isSubset(of: before), ContinuousClock.now < deadline {
            usleep(1000)
            after = Self.descriptors()
        }
        require(
            after.isSubset(of: before),
            "\(Self.describe(after.subtracting(before))) stayed open after the session was shut down (\(plan)); "
                + "outcome: \(outcome.withLockedValue { $0 } ?? "none")"
        )
    }

    /// The process's open descriptors, by number, without the one that lists them.
    static func descriptors() -> Set<String> {
        guard let folder = opendir("/proc/self/fd") else { return [] }
        defer { closedir(folder) }
        let own = dirfd(folder)
        var numbers = Set<String>()
        while let entry = readdir(folder) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard let number = Int32(name), number != own else { continue }
            numbers.insert(name)
        }
        return numbers
    }

    /// What each descriptor is (`socket:[…]`, a path), for a failure's message.
    static func describe(_ descriptors: Set<String>) -> [String] {
        descriptors.sorted().map { number in
            let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(number)")
            return "\(number) \(target ?? "?")"
        }
    }

    /// Makes the plan's request (twice when it says so) on a session of its own, and shuts the session down.
    private func perform(_ plan: ClientPlan) async -> String {
        var configuration = Session.Configuration()
        configuration.proxy = .none
        configuration.timeouts.connect = .seconds(1)
        // Short idle timeouts: most of an input's time is spent waiting for one (a silent or stalled server), and
        // the pauses a script can make are at most 20 ms.
        configuration.timeouts.idleRead = .milliseconds(60)
        configuration.timeouts.idleWrite = .milliseconds(60)
        configuration.timeouts.total = .seconds(2)
        configuration.maximumRedirects = plan.redirects ? 3 : 0
        configuration.decompression =
            plan.decompression ? .enabled(maximumRatio: 100, ratioCheckedAfter: 64 << 10) : .disabled
        configuration.maximumResponseSize = plan.smallLimit ? 4096 : 1 << 20
        configuration.httpShouldHandleCookies = plan.cookies
        configuration.cookieJar = plan.cookies ? HTTPCookieJar() : nil
        if plan.memoryCache || plan.diskCache {
            configuration.cache = ResponseCache(
                memoryCapacity: plan.memoryCache ? 1 << 20 : 0,
                diskCapacity: plan.diskCache ? 4 << 20 : 0,
                directory: plan.diskCache ? self.cache : nil
            )
        }
        if let certificate = self.certificate {
            configuration.tls.trustRoots = .certificates([certificate])
            configuration.tls.diagnosesTrustFailures = false
        }
        let retry =
            plan.retry
            ? RetryPolicy(retryLimit: 1, exponentialBackoffScale: 0.001, maximumDelay: .milliseconds(20)) : nil
        let session = Session(configuration: configuration, interceptor: retry)
        var outcomes: [String] = []
        for _ in 0..<(plan.twice ? 2 : 1) {
            outcomes.append(await self.request(plan, on: session))
        }
        do {
            try await session.shutdown()
        } catch {
            outcomes.append("shutdown: \(error)")
        }
        return outcomes.joined(separator: "; ")
    }

    private func request(_ plan: ClientPlan, on session: Session) async -> String {
        let url = "\(self.scheme)://127.0.0.1:\(self.server.port)\(plan.path)"
        let request: BaseRequest
        let outcome: @Sendable () async -> String
        switch plan.kind {
        case .get, .head, .delete, .post:
            let method: HTTPRequest.Method =
                [.get: .get, .head: .head, .delete: .delete, .post: .post][plan.kind] ?? .get
            let data =
                plan.kind == .post
                ? session.upload(Data(repeating: 0x61, count: 64), to: url, method: .post)
                : session.request(url, method: method)
            let prepared = Self.prepared(data, plan)
            request = prepared
            outcome = { Self.describe(await prepared.serializingData().response) }
        case .put:
            let chunks = AsyncStream<Data> { continuation in
                for index in 0..<4 { continuation.yield(Data(repeating: UInt8(index), count: 1024)) }
                continuation.finish()
            }
            let upload = Self.prepared(
                session.upload(chunks, length: plan.unknownLength ? nil : 4096, to: url, method: .put),
                plan
            )
            request = upload
            outcome = { Self.describe(await upload.serializingData().response) }
        case .download:
            var download = session.download(url, to: DownloadRequest.suggestedDownloadDestination(in: self.downloads))
            if plan.credential { download = download.authenticate(username: "kite", password: "fuzz") }
            if plan.validate { download = download.validate() }
            let prepared = download
            request = prepared
            outcome = {
                let response = await prepared.serializingDownloadedFileURL().response
                if let file = response.fileURL {
                    require(
                        file.deletingLastPathComponent().standardizedFileURL.path
                            == self.downloads.standardizedFileURL.path,
                        "the download was saved outside its folder, at \(file.path)"
                    )
                }
                return "download \(response.response?.status.code ?? 0) \(response.error.map { "\($0.code)" } ?? "ok")"
            }
        case .lines, .events:
            var stream = session.streamRequest(url)
            if plan.credential { stream = stream.authenticate(username: "kite", password: "fuzz") }
            if plan.validate { stream = stream.validate() }
            let prepared = stream
            request = prepared
            let lines = plan.kind == .lines
            outcome = {
                var count = 0
                do {
                    if lines {
                        for try await _ in prepared.streamingLines(maximumLineLength: 1024) { count += 1 }
                    } else {
                        for try await _ in prepared.streamingServerSentEvents() { count += 1 }
                    }
                    return "stream \(count)"
                } catch {
                    return "stream \(count) \((error as? KiteError)?.code.description ?? "\(error)")"
                }
            }
        }
        guard let delay = plan.cancelAfter else { return await outcome() }
        return await withTaskGroup(of: String?.self) { group in
            group.addTask { await outcome() }
            group.addTask {
                try? await Task.sleep(for: .milliseconds(delay))
                request.cancel()
                return nil
            }
            var described = ""
            for await result in group { if let result { described = result } }
            return described
        }
    }

    private static func prepared(_ request: DataRequest, _ plan: ClientPlan) -> DataRequest {
        var request = request
        if plan.credential { request = request.authenticate(username: "kite", password: "fuzz") }
        if plan.validate { request = request.validate() }
        return request
    }

    private static func describe(_ response: DataResponse<Data, KiteError>) -> String {
        "\(response.response?.status.code ?? 0) \(response.data?.count ?? 0) \(response.error.map { "\($0.code)" } ?? "ok")"
    }
}
