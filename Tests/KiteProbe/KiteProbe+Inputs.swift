import Foundation
import Kite

/// The kinds for a caller's settings that reached traps in Kite's dependencies (`CallerInputTrapTests`):
///
///     KiteProbe identity URL|- (--pkcs12 FILE [--passphrase P] | --cert PEM [--key PEM]) [--trust every]
///     KiteProbe proxy URL (--proxy-host HOST --proxy-port PORT [--proxy-kind http|socks] | --proxy-env VALUE)
///     KiteProbe upload-element URL --element-bytes COUNT --length LENGTH
///
/// `identity` loads a client identity and, unless the URL is `-` (then it prints `identity N certificates`), makes a
/// `data` request with it, through a trust manager evaluating every host with `--trust every`. `proxy` makes a
/// `data` request through the proxy given, or through `http_proxy` and `https_proxy` set to `--proxy-env`.
/// `upload-element` uploads a stream of one element of `COUNT` zero bytes (its memory is 1 MiB, whatever the
/// count) declared `LENGTH` bytes long.
extension KiteProbe {
    static func runInputs(
        _ kind: String,
        _ url: String,
        configuration: Session.Configuration,
        options: [String: String]
    ) async -> String? {
        var configuration = configuration
        var trustManager: ServerTrustManager?
        switch kind {
        case "identity":
            do {
                if let file = options["pkcs12"] {
                    configuration.tls.clientIdentity = try ClientIdentity(
                        pkcs12File: URL(fileURLWithPath: file),
                        passphrase: options["passphrase"]
                    )
                } else if let certificate = options["cert"] {
                    configuration.tls.clientIdentity = try ClientIdentity(
                        certificateFile: URL(fileURLWithPath: certificate),
                        privateKeyFile: options["key"].map { URL(fileURLWithPath: $0) }
                    )
                } else {
                    return "identity needs --pkcs12 or --cert"
                }
            } catch {
                return Self.line(nil, nil, error)
            }
            if url == "-" {
                return "identity \(configuration.tls.clientIdentity?.certificateChain.count ?? 0) certificates"
            }
            if options["trust"] == "every" {
                trustManager = ServerTrustManager(evaluatingEveryHostWith: DefaultTrustEvaluator())
            }
        case "proxy":
            if let value = options["proxy-env"] {
                configuration.proxy = .environment(variables: ["http_proxy": value, "https_proxy": value])
            } else if let host = options["proxy-host"], let port = options["proxy-port"].flatMap({ Int($0) }) {
                configuration.proxy =
                    options["proxy-kind"] == "socks" ? .socks(host: host, port: port) : .http(host: host, port: port)
            } else {
                return "proxy needs --proxy-env, or --proxy-host and --proxy-port"
            }
        case "upload-element":
            guard let count = options["element-bytes"].flatMap({ Int($0) }),
                let length = options["length"].flatMap({ Int64($0) })
            else { return "upload-element needs --element-bytes and --length" }
            let stream = AsyncStream<ZeroBytes> { continuation in
                continuation.yield(ZeroBytes(count: count))
                continuation.finish()
            }
            let session = Session(configuration: configuration)
            let response = await session.upload(stream, length: length, to: url, method: .put)
                .serializingData()
                .response
            try? await session.shutdown()
            return Self.line(response.response?.status.code, response.data?.count, response.error)
        default:
            return nil
        }
        let session = Session(configuration: configuration, serverTrustManager: trustManager)
        let line = await Self.run("data", url, on: session)
        try? await session.shutdown()
        return line
    }
}

/// `count` zero bytes, whose regions all share one 1 MiB block: a stream element of any size in 1 MiB of memory.
struct ZeroBytes: DataProtocol, Sendable {
    private static let block = [UInt8](repeating: 0, count: 1 << 20)

    let count: Int

    var startIndex: Int { 0 }
    var endIndex: Int { self.count }
    subscript(position: Int) -> UInt8 { 0 }

    var regions: [ArraySlice<UInt8>] {
        let (whole, rest) = self.count.quotientAndRemainder(dividingBy: Self.block.count)
        let regions = [ArraySlice<UInt8>](repeating: Self.block[...], count: whole)
        return rest == 0 ? regions : regions + [Self.block[..<rest]]
    }
}
