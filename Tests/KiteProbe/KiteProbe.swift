import Foundation
import Kite
import X509

/// One request in a process of its own, for the tests whose failure would be a crash (`HostileEngineInputTests`):
/// a trap kills this process, not the test run, and the test reports the signal.
///
///     KiteProbe KIND URL [--ca PEM-FILE] [--timeout SECONDS]
///
/// `KIND` is `data`, `download`, `stream` or `upload`, or a kind another file of this target adds (each reads the
/// options it knows from `options`). Prints one line, `response STATUS BYTES` or `error CODE MESSAGE`, and exits 0;
/// any other ending is a failure.
@main struct KiteProbe {
    static func main() async {
        var arguments = Array(CommandLine.arguments.dropFirst())
        guard arguments.count >= 2 else {
            print("usage: KiteProbe data|download|stream|upload URL [--ca PEM-FILE] [--timeout SECONDS]")
            exit(2)
        }
        let kind = arguments.removeFirst()
        let url = arguments.removeFirst()
        var configuration = Session.Configuration()
        configuration.proxy = .none
        configuration.timeouts.total = .seconds(10)
        var options: [String: String] = [:]
        while arguments.count >= 2 {
            let (option, value) = (arguments.removeFirst(), arguments.removeFirst())
            switch option {
            case "--ca":
                do {
                    let pem = try String(contentsOfFile: value, encoding: .utf8)
                    configuration.tls.trustRoots = .certificates([try Certificate(pemEncoded: pem)])
                } catch {
                    print("cannot read \(value): \(error)")
                    exit(2)
                }
            case "--timeout":
                configuration.timeouts.total = .seconds(Int(value) ?? 10)
            default:
                options[String(option.drop { $0 == "-" })] = value
            }
        }
        // A kind of another file makes its own session from the configuration and the options.
        if let line = await Self.runExtension(kind, url, configuration: configuration, options: options) {
            print(line)
            return
        }
        let session = Session(configuration: configuration)
        print(await Self.run(kind, url, on: session))
        try? await session.shutdown()
    }

    /// The kinds other files of this target add: `nil` for a kind none of them knows.
    static func runExtension(
        _ kind: String,
        _ url: String,
        configuration: Session.Configuration,
        options: [String: String]
    ) async -> String? {
        switch kind {
        case let kind where kind.hasPrefix("h2-"):
            return await Self.runHTTP2(kind, url, configuration: configuration, options: options)
        case "download-big-head":
            // A POST download (the delegate API, with a body) whose head holds a field of `header-bytes` bytes.
            let size = Int(options["header-bytes"] ?? "") ?? 8_000_000
            var headers = HTTPFields()
            try? headers.add(name: "X-Big", value: String(repeating: "a", count: size))
            let session = Session(configuration: configuration)
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("kite-probe-\(UUID())")
            defer { try? FileManager.default.removeItem(at: folder) }
            let response = await session.download(
                url,
                method: .post,
                parameters: ["q": "hello"],
                headers: headers,
                to: DownloadRequest.suggestedDownloadDestination(in: folder)
            ).serializingDownloadedFileURL().response
            try? await session.shutdown()
            return Self.line(response.response?.status.code, nil, response.error)
        case "cache-remove":
            // A URL a caller names to the cache, which is not a request's (no scheme, another scheme).
            guard let target = URL(string: url) else { return "error invalidURL \(url)" }
            let cache = ResponseCache()
            await cache.removeCachedResponses(for: target)
            return "response - \(await cache.cachedResponses(for: target).count)"
        case "identity", "proxy", "upload-element":
            return await Self.runInputs(kind, url, configuration: configuration, options: options)
        default:
            return nil
        }
    }

    static func run(_ kind: String, _ url: String, on session: Session) async -> String {
        switch kind {
        case "data":
            let response = await session.request(url).serializingData().response
            return Self.line(response.response?.status.code, response.data?.count, response.error)
        case "upload":
            let response = await session.upload(Data("kite".utf8), to: url, method: .put).serializingData().response
            return Self.line(response.response?.status.code, response.data?.count, response.error)
        case "download":
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("kite-probe-\(UUID())")
            defer { try? FileManager.default.removeItem(at: folder) }
            let response = await session.download(url, to: DownloadRequest.suggestedDownloadDestination(in: folder))
                .serializingDownloadedFileURL()
                .response
            let size = response.fileURL.flatMap { try? FileManager.default.attributesOfItem(atPath: $0.path)[.size] }
            return Self.line(response.response?.status.code, (size as? NSNumber)?.intValue, response.error)
        case "stream":
            var bytes = 0
            do {
                for try await chunk in session.streamRequest(url).streamingData() {
                    bytes += chunk.count
                }
                return "response - \(bytes)"
            } catch {
                return Self.line(nil, nil, error)
            }
        default:
            return "unknown kind \(kind)"
        }
    }

    static func line(_ status: Int?, _ bytes: Int?, _ error: KiteError?) -> String {
        if let error { return "error \(error.code) \(error.message)" }
        return "response \(status.map(String.init) ?? "-") \(bytes ?? 0)"
    }
}
