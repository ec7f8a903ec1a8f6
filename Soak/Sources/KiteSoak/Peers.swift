import Foundation

/// Where the real servers listen, and what they serve: from the environment `Soak/soak.sh` sets.
struct Peers: Sendable {
    /// python httpbin under gunicorn, `http://127.0.0.1:PORT`.
    let httpbin: String
    /// nginx over plain http, `http://127.0.0.1:PORT`.
    let nginx: String
    /// nginx over TLS (HTTP/2 and HTTP/1.1 through ALPN), `https://127.0.0.1:PORT`.
    let nginxTLS: String
    /// Tests/FaultServer/fault_server.py, `http://127.0.0.1:PORT`.
    let fault: String
    /// tinyproxy.
    let proxyHost: String
    let proxyPort: Int
    /// The CA that signed nginx's certificate, nginx's certificate, and a certificate nothing was signed with.
    let caFile: URL
    let serverCertificateFile: URL
    let strangerCertificateFile: URL
    /// The file nginx serves at /blob.bin: its size and SHA-256 (hex).
    let blobSize: Int
    let blobSHA256: String
    /// Where downloads and upload sources go; empty whenever no operation runs.
    let workDirectory: URL

    /// The peers by port, to name the far end of a socket.
    var ports: [Int: String] {
        var ports = [self.proxyPort: "tinyproxy"]
        for (name, url) in [
            ("httpbin", self.httpbin), ("nginx", self.nginx), ("nginx-tls", self.nginxTLS), ("fault", self.fault),
        ] {
            if let port = URLComponents(string: url)?.port { ports[port] = name }
        }
        return ports
    }

    /// The body of nginx's /small.txt (soak.sh writes the same).
    static let smallText = "kite soak: a small file served by nginx\n"

    static func fromEnvironment() throws -> Peers {
        let environment = ProcessInfo.processInfo.environment
        func value(_ name: String) throws -> String {
            guard let value = environment[name], !value.isEmpty else { throw SoakError("\(name) is not set") }
            return value
        }
        let proxy = try value("SOAK_PROXY").split(separator: ":")
        guard proxy.count == 2, let proxyPort = Int(proxy[1]) else { throw SoakError("SOAK_PROXY is not host:port") }
        guard let blobSize = Int(try value("SOAK_BLOB_SIZE")) else { throw SoakError("SOAK_BLOB_SIZE is not a number") }
        return Peers(
            httpbin: try value("SOAK_HTTPBIN"),
            nginx: try value("SOAK_NGINX"),
            nginxTLS: try value("SOAK_NGINX_TLS"),
            fault: try value("SOAK_FAULT"),
            proxyHost: String(proxy[0]),
            proxyPort: proxyPort,
            caFile: URL(fileURLWithPath: try value("SOAK_CA")),
            serverCertificateFile: URL(fileURLWithPath: try value("SOAK_SERVER_CERTIFICATE")),
            strangerCertificateFile: URL(fileURLWithPath: try value("SOAK_STRANGER_CERTIFICATE")),
            blobSize: blobSize,
            blobSHA256: try value("SOAK_BLOB_SHA256"),
            workDirectory: URL(fileURLWithPath: try value("SOAK_WORK_DIRECTORY"))
        )
    }
}

/// A problem of the soak harness itself (its arguments, its environment).
struct SoakError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
