import Foundation
import SwiftASN1
import X509

/// Loads certificates and public keys from PEM and DER files, folders and bundles (swift-certificates).
///
/// ```swift
/// let pinned = try Certificates.load(from: URL(fileURLWithPath: "api.pem"))
/// let roots = try Certificates.inDirectory(URL(fileURLWithPath: "/etc/myapp/ca"))
/// ```
public enum Certificates {
    /// File extensions read from folders and bundles, as AFNetworking reads `.cer` files (and PEM ones).
    public static let fileExtensions: Set<String> = ["cer", "crt", "der", "pem"]

    /// Every certificate in a file: one DER certificate, or any number of PEM `CERTIFICATE` blocks.
    ///
    /// - Throws: ``KiteError`` `invalidRequest` naming the file when it cannot be read or holds none.
    public static func load(from file: URL) throws(KiteError) -> [Certificate] {
        try self.load(from: file, skippingKeys: false)
    }

    /// `skippingKeys`: a PEM file that holds no certificate (a private key next to its certificate) gives none.
    private static func load(from file: URL, skippingKeys: Bool) throws(KiteError) -> [Certificate] {
        let data: Data
        do {
            data = try DownloadFiles.contents(of: file)
        } catch {
            throw KiteError(
                code: .invalidRequest,
                message: "could not read \(file.path): \(error)",
                underlyingError: error
            )
        }
        do {
            if let text = String(data: data, encoding: .utf8), text.contains("-----BEGIN") {
                let blocks = self.pemBlocks(in: text).filter { $0.label == "CERTIFICATE" }
                if blocks.isEmpty, skippingKeys { return [] }
                guard !blocks.isEmpty else {
                    throw KiteError(code: .invalidRequest, message: "\(file.path) holds no PEM certificate")
                }
                return try blocks.map { try Certificate(pemEncoded: $0.text) }
            }
            return [try Certificate(derEncoded: Array(data))]
        } catch let error as KiteError {
            throw error
        } catch {
            throw KiteError(
                code: .invalidRequest,
                message: "\(file.path) is not a PEM or DER certificate: \(error)",
                underlyingError: error
            )
        }
    }

    /// The certificates of every `.cer`, `.crt`, `.der` and `.pem` file in a folder, in file name order (PEM
    /// files holding only a private key are skipped).
    public static func inDirectory(_ directory: URL) throws(KiteError) -> [Certificate] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        } catch {
            throw KiteError(
                code: .invalidRequest,
                message: "could not list \(directory.path): \(error)",
                underlyingError: error
            )
        }
        var certificates: [Certificate] = []
        for name in names.sorted() where self.fileExtensions.contains((name as NSString).pathExtension.lowercased()) {
            certificates += try self.load(from: directory.appendingPathComponent(name), skippingKeys: true)
        }
        return certificates
    }

    /// The certificates in a bundle's resources (AFNetworking's `certificatesInBundle:`).
    public static func inBundle(_ bundle: Bundle) throws(KiteError) -> [Certificate] {
        guard let resources = bundle.resourceURL else { return [] }
        return try self.inDirectory(resources)
    }

    /// The public keys of the certificates in a file (for ``PublicKeysTrustEvaluator``).
    public static func publicKeys(from file: URL) throws(KiteError) -> [Certificate.PublicKey] {
        try self.load(from: file).map(\.publicKey)
    }

    static func readText(_ file: URL) throws(KiteError) -> String {
        do {
            return try String(contentsOf: file, encoding: .utf8)
        } catch {
            throw KiteError(
                code: .invalidRequest,
                message: "could not read \(file.path): \(error)",
                underlyingError: error
            )
        }
    }

    /// The PEM blocks of a text, with their labels (`CERTIFICATE`, `PRIVATE KEY`, `EC PRIVATE KEY`, …).
    static func pemBlocks(in text: String) -> [(label: String, text: String)] {
        var blocks: [(String, String)] = []
        var current: (label: String, lines: [String])?
        for line in text.split(whereSeparator: \.isNewline).map({ $0.trimmingCharacters(in: .whitespaces) }) {
            if line.hasPrefix("-----BEGIN "), line.hasSuffix("-----") {
                current = (String(line.dropFirst(11).dropLast(5)), [line])
            } else if line.hasPrefix("-----END "), line.hasSuffix("-----"), var block = current {
                block.lines.append(line)
                blocks.append((block.label, block.lines.joined(separator: "\n")))
                current = nil
            } else if current != nil {
                current?.lines.append(line)
            }
        }
        return blocks
    }
}
