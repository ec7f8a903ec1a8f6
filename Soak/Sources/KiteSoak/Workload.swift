import Crypto
import Foundation
import Kite

/// httpbin's echo of a GET.
struct Echo: Decodable, Sendable {
    let args: [String: String]
    let url: String
}

/// httpbin's echo of a POST.
struct PostEcho: Decodable, Sendable {
    let args: [String: String]
    let data: String
    let files: [String: String]
    let form: [String: String]
    let json: [String: String]?
}

/// httpbin's answer to an accepted credential.
struct Authenticated: Decodable, Sendable {
    let authenticated: Bool
    let user: String
}

/// The fault server's /upload-ack answer.
struct Received: Decodable, Sendable {
    let received: Int
}

/// One kind of work a worker can pick.
struct Operation: Sendable {
    let name: String
    let weight: Int
    let run: @Sendable (Workload) async -> Outcome
}

/// The sessions the workers share, made once as an application makes them, and the peers they talk to.
struct Workload: Sendable {
    let peers: Peers
    /// No proxy, default settings: httpbin, nginx and the fault server.
    let plain: Session
    /// A `RetryPolicy` with its defaults.
    let retrying: Session
    /// nginx over TLS, its certificate pinned (`PinnedCertificatesTrustEvaluator`), the soak CA as the only root.
    let pinnedCertificate: Session
    /// nginx over TLS, its CA's public key pinned (`PublicKeysTrustEvaluator`).
    let pinnedKey: Session
    /// nginx over TLS with a pin that matches nothing: every request must fail with serverTrustEvaluationFailed.
    let wrongPin: Session
    /// Plain http through tinyproxy.
    let proxied: Session

    /// The rate nginx downloads are read at (bytes per second, `nil` for no limit), and whether they are cancelled
    /// in the middle: `SOAK_DOWNLOAD_RATE` (0 for none) and `SOAK_DOWNLOAD_CANCEL=0`, to tell what a trend comes from.
    let downloadRate: Int?
    let cancelsDownloads: Bool

    /// Every session, for shutting them down.
    var sessions: [Session] {
        [self.plain, self.retrying, self.pinnedCertificate, self.pinnedKey, self.wrongPin, self.proxied]
    }

    init(peers: Peers, idleTimeout: Duration, monitor: ClosureEventMonitor) throws {
        self.peers = peers
        let environment = ProcessInfo.processInfo.environment
        let rate = environment["SOAK_DOWNLOAD_RATE"].flatMap { Int($0) } ?? 16 * 1024 * 1024
        self.downloadRate = rate > 0 ? rate : nil
        self.cancelsDownloads = environment["SOAK_DOWNLOAD_CANCEL"] != "0"
        func configuration(_ change: (inout Session.Configuration) -> Void = { _ in }) -> Session.Configuration {
            var configuration = Session.Configuration()
            configuration.proxy = .none
            configuration.connectionIdleTimeout = idleTimeout
            change(&configuration)
            return configuration
        }
        let ca = try Certificates.load(from: peers.caFile)
        let server = try Certificates.load(from: peers.serverCertificateFile)
        let stranger = try Certificates.publicKeys(from: peers.strangerCertificateFile)
        let soakRoots = configuration { $0.tls.trustRoots = .certificates(ca) }
        self.plain = Session(configuration: configuration(), eventMonitors: [monitor])
        self.retrying = Session(configuration: configuration(), interceptor: RetryPolicy(), eventMonitors: [monitor])
        self.pinnedCertificate = Session(
            configuration: soakRoots,
            serverTrustManager: ServerTrustManager(evaluators: [
                "127.0.0.1": PinnedCertificatesTrustEvaluator(certificates: server)
            ]),
            eventMonitors: [monitor]
        )
        self.pinnedKey = Session(
            configuration: soakRoots,
            serverTrustManager: ServerTrustManager(evaluators: [
                "127.0.0.1": PublicKeysTrustEvaluator(keys: ca.map(\.publicKey))
            ]),
            eventMonitors: [monitor]
        )
        self.wrongPin = Session(
            configuration: soakRoots,
            serverTrustManager: ServerTrustManager(evaluators: ["127.0.0.1": PublicKeysTrustEvaluator(keys: stranger)]),
            eventMonitors: [monitor]
        )
        self.proxied = Session(
            configuration: configuration { $0.proxy = .http(host: peers.proxyHost, port: peers.proxyPort) },
            eventMonitors: [monitor]
        )
    }

    /// Every operation, with its weight in the random choice.
    static let operations: [Operation] =
        [
            Operation(name: "GET json (Decodable)", weight: 8) {
                await $0.getDecodable(through: $0.plain, $0.peers.httpbin)
            },
            Operation(name: "POST json", weight: 4) { await $0.postJSON() },
            Operation(name: "POST form", weight: 4) { await $0.postForm() },
            Operation(name: "redirect/3", weight: 3) { await $0.redirect("/redirect/3") },
            Operation(name: "absolute-redirect/2", weight: 2) { await $0.redirect("/absolute-redirect/2") },
            Operation(name: "basic-auth challenge", weight: 3) { await $0.basicAuth() },
            Operation(name: "digest-auth challenge", weight: 3) { await $0.digestAuth() },
            Operation(name: "retry 503 (RetryPolicy)", weight: 2) { await $0.retry503() },
            Operation(name: "retry lost connection (RetryPolicy, fault)", weight: 2) { await $0.retryLostConnection() },
            Operation(name: "upload memory", weight: 4) { await $0.uploadMemory() },
            Operation(name: "upload file", weight: 3) { await $0.uploadFile() },
            Operation(name: "upload multipart with file", weight: 3) { await $0.uploadMultipart() },
            Operation(name: "download nginx, cancel, resume", weight: 3) { workload in
                await workload.downloadCancelResume(through: workload.plain, "\(workload.peers.nginx)/blob.bin")
            },
            Operation(name: "download https pinned, cancel, resume", weight: 2) { workload in
                await workload.downloadCancelResume(through: workload.pinnedKey, "\(workload.peers.nginxTLS)/blob.bin")
            },
            Operation(name: "download fault cut, resume", weight: 2) { await $0.downloadCutAndResume() },
            Operation(name: "download fault stall, cancel, resume", weight: 1) { await $0.downloadStallCancelResume() },
            Operation(name: "stream/20 chunks", weight: 3) { await $0.streamLines() },
            Operation(name: "drip stream", weight: 1) { await $0.drip() },
            Operation(name: "https certificate pinned", weight: 3) {
                await $0.tlsSmallFile(through: $0.pinnedCertificate)
            },
            Operation(name: "https public key pinned", weight: 3) { await $0.tlsSmallFile(through: $0.pinnedKey) },
            Operation(name: "https wrong pin (must be refused)", weight: 1) { await $0.tlsWrongPin() },
            Operation(name: "proxy GET (tinyproxy)", weight: 3) {
                await $0.getDecodable(through: $0.proxied, $0.peers.httpbin)
            },
            Operation(name: "proxy POST json (tinyproxy)", weight: 2) { await $0.postJSON(through: $0.proxied) },
        ] + FaultRoutes.operations

    // MARK: - Data requests

    func getDecodable(through session: Session, _ base: String) async -> Outcome {
        let n = Int.random(in: 0..<1_000_000)
        let response = await session.request("\(base)/get", parameters: ["q": "kite soak", "n": n])
            .validate()
            .serializingDecodable(Echo.self)
            .response
        return .of(response.result) { echo in
            echo.args == ["q": "kite soak", "n": "\(n)"] ? nil : "GET /get?n=\(n): httpbin echoed \(echo.args)"
        }
    }

    func postJSON(through session: Session? = nil) async -> Outcome {
        let body = [
            "name": "kite", "nonce": UUID().uuidString, "text": String(repeating: "é✓", count: .random(in: 0...200)),
        ]
        let response = await (session ?? self.plain).request(
            "\(self.peers.httpbin)/post",
            method: .post,
            parameters: body,
            encoder: JSONParameterEncoder.default
        )
        .validate()
        .serializingDecodable(PostEcho.self)
        .response
        return .of(response.result) { echo in echo.json == body ? nil : "POST json: httpbin echoed \(echo.json as Any)"
        }
    }

    func postForm() async -> Outcome {
        let body = ["name": "kite soak", "nonce": UUID().uuidString, "symbols": "a&b=c+d %"]
        let response = await self.plain.request("\(self.peers.httpbin)/post", method: .post, parameters: body)
            .validate()
            .serializingDecodable(PostEcho.self)
            .response
        return .of(response.result) { echo in echo.form == body ? nil : "POST form: httpbin echoed \(echo.form)" }
    }

    func redirect(_ path: String) async -> Outcome {
        let response = await self.plain.request("\(self.peers.httpbin)\(path)").validate()
            .serializingDecodable(Echo.self).response
        return .of(response.result) { echo in
            echo.url.hasSuffix("/get") ? nil : "\(path): ended at \(echo.url), not /get"
        }
    }

    func basicAuth() async -> Outcome {
        let password = "s3cret-\(Int.random(in: 0..<1000))"
        let response = await self.plain.request("\(self.peers.httpbin)/basic-auth/kite/\(password)")
            .authenticate(username: "kite", password: password)
            .validate()
            .serializingDecodable(Authenticated.self)
            .response
        return .of(response.result) { $0.authenticated && $0.user == "kite" ? nil : "basic-auth: \($0)" }
    }

    func digestAuth() async -> Outcome {
        let algorithm = Bool.random() ? "MD5" : "SHA-256"
        let response = await self.plain.request("\(self.peers.httpbin)/digest-auth/auth/kite/s3cret/\(algorithm)")
            .authenticate(username: "kite", password: "s3cret")
            .validate()
            .serializingDecodable(Authenticated.self)
            .response
        return .of(response.result) { $0.authenticated && $0.user == "kite" ? nil : "digest-auth \(algorithm): \($0)" }
    }

    /// httpbin answers 503 or 200 at random; the policy retries the 503s (twice at most).
    func retry503() async -> Outcome {
        let path = Bool.random() ? "/status/503" : "/status/503,200"
        let response = await self.retrying.request("\(self.peers.httpbin)\(path)").validate()
            .serializingData(emptyResponseCodes: [200])
            .response
        return .of(response.result) { _ in path == "/status/503" ? "\(path) succeeded" : nil }
    }

    /// The fault server cuts the body every time: retried, then the lost connection is the answer.
    func retryLostConnection() async -> Outcome {
        let mode = ["fin", "rst"].randomElement()!
        let response = await self.retrying.request("\(self.peers.fault)/close-after?bytes=512&length=4096&mode=\(mode)")
            .validate()
            .serializingData()
            .response
        return .of(response.result) { _ in "close-after mode=\(mode) succeeded" }
    }

    // MARK: - Uploads

    func uploadMemory() async -> Outcome {
        let text = String(repeating: "kite soak upload \(UUID().uuidString)\n", count: .random(in: 1...2000))
        let response = await self.plain.upload(
            Data(text.utf8),
            to: "\(self.peers.httpbin)/post",
            headers: [.contentType: "text/plain; charset=utf-8"]
        )
        .validate()
        .serializingDecodable(PostEcho.self)
        .response
        return .of(response.result) {
            $0.data == text ? nil : "upload memory: httpbin echoed \($0.data.count) characters"
        }
    }

    func uploadFile() async -> Outcome {
        let size = Int.random(in: 64 * 1024...2 * 1024 * 1024)
        let file = self.peers.workDirectory.appendingPathComponent("upload-\(UUID().uuidString).bin")
        defer { try? FileManager.default.removeItem(at: file) }
        do {
            try Data(repeating: UInt8.random(in: 0...255), count: size).write(to: file)
        } catch {
            return .failure("harness: could not write \(file.path): \(error)")
        }
        let response = await self.plain.upload(file, to: "\(self.peers.fault)/upload-ack").validate()
            .serializingDecodable(Received.self).response
        return .of(response.result) {
            $0.received == size ? nil : "upload file: the server received \($0.received) of \(size)"
        }
    }

    func uploadMultipart() async -> Outcome {
        let content = String(
            repeating: "a line of the attached file \(UUID().uuidString)\n",
            count: .random(in: 1...500)
        )
        let file = self.peers.workDirectory.appendingPathComponent("part-\(UUID().uuidString).txt")
        defer { try? FileManager.default.removeItem(at: file) }
        do {
            try Data(content.utf8).write(to: file)
        } catch {
            return .failure("harness: could not write \(file.path): \(error)")
        }
        var form = MultipartFormData()
        form.append(Data("kite".utf8), withName: "name")
        form.append(file, withName: "attachment")
        let response = await self.plain.upload(multipartFormData: form, to: "\(self.peers.httpbin)/post").validate()
            .serializingDecodable(PostEcho.self).response
        return .of(response.result) { echo in
            echo.form == ["name": "kite"] && echo.files == ["attachment": content]
                ? nil : "multipart: httpbin saw form \(echo.form) and files \(echo.files.mapValues(\.count))"
        }
    }

    // MARK: - Downloads

    /// Downloads nginx's blob slowly enough to be cancelled in the middle, keeps the resume data, resumes from it
    /// and checks every byte.
    func downloadCancelResume(through session: Session, _ url: String) async -> Outcome {
        await self.download(
            through: session,
            url,
            rate: self.downloadRate,
            cancelAfter: self.cancelsDownloads ? .milliseconds(Int.random(in: 5...300)) : nil
        ) { data in
            guard data.count == self.peers.blobSize else { return "\(data.count) bytes, not \(self.peers.blobSize)" }
            let digest = SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
            return digest == self.peers.blobSHA256 ? nil : "SHA-256 \(digest), not \(self.peers.blobSHA256)"
        }
    }

    /// The fault server sends part of the body and closes; the download resumes from its resume data (206).
    func downloadCutAndResume() async -> Outcome {
        let length = Int.random(in: 64 * 1024...1024 * 1024)
        let sent = Int.random(in: 1..<length)
        let mode = ["fin", "rst"].randomElement()!
        let url = "\(self.peers.fault)/close-after?bytes=\(sent)&length=\(length)&mode=\(mode)"
        return await self.download(through: self.plain, url, rate: nil, cancelAfter: nil) { data in
            data == FaultRoutes.deterministic(length) ? nil : "\(data.count) bytes that are not the deterministic body"
        }
    }

    /// The fault server sends part of the body and goes silent; the download is cancelled while it waits, then
    /// resumed from its resume data (206).
    func downloadStallCancelResume() async -> Outcome {
        let length = Int.random(in: 1024 * 1024...4 * 1024 * 1024)
        let sent = Int.random(in: 64 * 1024..<length)
        let url = "\(self.peers.fault)/close-after?bytes=\(sent)&length=\(length)&mode=stall&max_s=10"
        return await self.download(
            through: self.plain,
            url,
            rate: nil,
            cancelAfter: .milliseconds(Int.random(in: 50...300))
        ) { data in
            data == FaultRoutes.deterministic(length) ? nil : "\(data.count) bytes that are not the deterministic body"
        }
    }

    private func download(
        through session: Session,
        _ url: String,
        rate: Int?,
        cancelAfter: Duration?,
        check: @escaping @Sendable (Data) -> String?
    ) async -> Outcome {
        let file = self.peers.workDirectory.appendingPathComponent("download-\(UUID().uuidString).bin")
        defer { try? FileManager.default.removeItem(at: file) }
        let destination: DownloadRequest.Destination = { _, _ in (file, [.removePreviousFile]) }
        let request = session.download(url, to: destination)
        if let rate { request.limitDownloadRate(to: rate) }
        let task = request.validate().serializingDownloadedFileURL()
        let canceller = Task {
            guard let cancelAfter else { return }
            try? await Task.sleep(for: cancelAfter)
            if !Task.isCancelled { request.cancel(producingResumeData: true) }
        }
        let first = await task.response
        canceller.cancel()
        func verify(_ result: Result<URL, KiteError>, note: String) -> Outcome {
            switch result {
            case .success(let url):
                guard url == file, let data = try? Data(contentsOf: file) else {
                    return .failure("download \(url): no file at \(file.path)")
                }
                return .checked(check(data).map { "download \(url) (\(note)): \($0)" }, note: note)
            case .failure(let error): return .kiteError(error)
            }
        }
        guard case .failure = first.result, let resumeData = first.resumeData else {
            return self.leftPartialFile(
                for: file,
                verify(first.result, note: "whole"),
                story: "one attempt: \(first.result)"
            )
        }
        let second = await session.download(resumingWith: resumeData, to: destination).validate()
            .serializingDownloadedFileURL().response
        if second.resumeData != nil {
            // The second attempt broke too and kept its bytes for a third; the soak does not take it up, so it removes
            // the partial file itself (as an application that gives up on resume data must).
            self.removePartialFiles(for: file)
        }
        return self.leftPartialFile(
            for: file,
            verify(second.result, note: "resumed"),
            story: "first \(first.result), then resumed: \(second.result)"
        )
    }

    /// The partial files Kite stages beside `file` (`.<name>.<UUID>.kite-partial`).
    private func partialFiles(for file: URL) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: self.peers.workDirectory.path)) ?? []
        return names.filter { $0.hasPrefix(".\(file.lastPathComponent).") }
    }

    private func removePartialFiles(for file: URL) {
        for name in self.partialFiles(for: file) {
            try? FileManager.default.removeItem(at: self.peers.workDirectory.appendingPathComponent(name))
        }
    }

    /// The outcome, after saying on standard error when a download that holds no resume data left a partial file.
    private func leftPartialFile(for file: URL, _ outcome: Outcome, story: String) -> Outcome {
        let left = self.partialFiles(for: file)
        if !left.isEmpty {
            FileHandle.standardError.write(
                Data("PARTIAL FILE LEFT \(left) (cancelled task: \(Task.isCancelled)) after \(story)\n".utf8)
            )
        }
        return outcome
    }

    // MARK: - Streams

    func streamLines() async -> Outcome {
        var lines = 0
        var chunks = 0
        do {
            for try await chunk in self.plain.streamRequest("\(self.peers.httpbin)/stream/20").validate()
                .streamingData()
            {
                chunks += 1
                lines += chunk.reduce(0) { $1 == 10 ? $0 + 1 : $0 }
            }
        } catch {
            return .thrown(error)
        }
        return lines == 20
            ? .response("") : .failure("stream/20: the stream ended after \(lines) lines in \(chunks) chunks")
    }

    func drip() async -> Outcome {
        var bytes = 0
        do {
            let url = "\(self.peers.httpbin)/drip?numbytes=64&duration=0.5&delay=0&code=200"
            for try await chunk in self.plain.streamRequest(url).validate().streamingData() {
                bytes += chunk.count
            }
        } catch {
            return .thrown(error)
        }
        return bytes == 64 ? .response("") : .failure("drip: the stream ended after \(bytes) of 64 bytes")
    }

    // MARK: - TLS

    func tlsSmallFile(through session: Session) async -> Outcome {
        let response = await session.request("\(self.peers.nginxTLS)/small.txt").validate().serializingString().response
        return .of(response.result) { $0 == Peers.smallText ? nil : "https /small.txt: \($0.prefix(80))" }
    }

    func tlsWrongPin() async -> Outcome {
        let response = await self.wrongPin.request("\(self.peers.nginxTLS)/small.txt").serializingString().response
        switch response.result {
        case .success: return .failure("a server whose key is not pinned was trusted")
        case .failure(let error): return .kiteError(error)
        }
    }
}
