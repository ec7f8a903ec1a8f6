import CNIOBoringSSL
import CNIOBoringSSLShims

/// Finds, before swift-nio-ssl reads a PKCS#12 file, what would make it trap.
///
/// `NIOSSLPKCS12Bundle` calls `fatalError` when BoringSSL's `PKCS12_parse` succeeds but gives no private key, or no
/// certificate that matches the key (swift-nio-ssl 2.37.6, `SSLPKCS12Bundle.swift:62`): a trust store exported as
/// `.p12`, a key exported alone, a key beside another key's certificates. The file is parsed here by the same
/// BoringSSL function first, so what it finds is exactly what swift-nio-ssl would find, and the parse's results are
/// freed. (BoringSSL is swift-nio-ssl's own copy: it parses PKCS#12 as the TLS library does, which no other package
/// can promise.)
enum PKCS12Check {
    /// Why the PKCS#12 file `bytes` cannot be a client identity, or `nil` when `NIOSSLPKCS12Bundle` can be given it
    /// (it still throws for a wrong passphrase or a malformed file).
    ///
    /// - Parameters:
    ///   - bytes: The file's contents.
    ///   - passphrase: The passphrase, as `NIOSSLPKCS12Bundle` is given it.
    /// - Returns: The reason, to follow the file's name: "holds no private key, …".
    static func problem(in bytes: [UInt8], passphrase: String?) -> String? {
        let parsed = bytes.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            guard let base = buffer.baseAddress else { return nil }
            var cursor: UnsafePointer<UInt8>? = base
            return d2i_PKCS12(nil, &cursor, buffer.count)
        }
        guard let p12 = parsed else { return nil }
        defer { PKCS12_free(p12) }
        var key: OpaquePointer?
        var certificate: OpaquePointer?
        var chain: OpaquePointer?
        let status: CInt
        if let passphrase {
            status = passphrase.withCString { PKCS12_parse(p12, $0, &key, &certificate, &chain) }
        } else {
            status = PKCS12_parse(p12, nil, &key, &certificate, &chain)
        }
        defer {
            if let key { EVP_PKEY_free(key) }
            if let certificate { X509_free(certificate) }
            if let chain { CNIOBoringSSLShims_sk_X509_pop_free(chain, X509_free) }
        }
        ERR_clear_error()
        guard status == 1 else { return nil }
        let others = chain.map { CNIOBoringSSLShims_sk_X509_num($0) } ?? 0
        switch (key, certificate) {
        case (nil, _):
            let count = others + (certificate == nil ? 0 : 1)
            switch count {
            case 0: return "holds neither a private key nor a certificate"
            case 1: return "holds no private key, only 1 certificate: it is a trust store, not a client identity"
            default:
                return "holds no private key, only \(count) certificates: it is a trust store, not a client identity"
            }
        case (_, nil):
            switch others {
            case 0: return "holds a private key but no certificate"
            case 1: return "holds a private key, but its certificate is not the key's"
            default: return "holds a private key, but none of its \(others) certificates is the key's"
            }
        default:
            return nil
        }
    }
}
