import HTTPTypes

/// What a request head must be before anything of Kite's engine, or of its dependencies, sees it.
///
/// async-http-client and NIO trap on some values a caller or a server can name: an IP-literal host with a port above
/// 65535 (`SocketAddress(ipAddress:port:)`), a host name longer than a SOCKS request can carry (NIOSOCKS writes its
/// length in one byte), 65,535 header fields or more (`HTTPFields`). Every head is checked here twice: when it is
/// built from its draft (so a caller's URL, a `URLRequest` and a redirect's `Location` fail with the URL named), and
/// when the engine takes it (so a head an adapter rewrote is checked too; the engine counts the fields' bytes on the
/// walk that converts them). The check makes nothing and copies nothing for a head it lets through: an error's
/// message and the request's name are made only for a refused one. RELIABILITY.md lists the traps each limit keeps
/// away.
enum RequestHeadCheck {
    /// The longest request target (path and query) sent: nginx and Apache answer 414 past 8 KiB, Node.js past
    /// 16 KiB; a longer one is a mistake or an attack, and is refused before it costs a connection.
    static let maximumTargetLength = 64 * 1024
    /// The longest host name: DNS names have at most 253 characters (RFC 1035 §2.3.4, without the root's dot).
    static let maximumHostLength = 253
    /// The most header fields a request or a response may have: `HTTPFields` traps at 65,535.
    static let maximumFieldCount = 10_000
    /// The most bytes a request's header fields may hold (names and values): nginx takes 32 KiB, Apache 8 KiB a
    /// field. async-http-client 1.37 traps when a download's or stream's head is too large for the socket to take at
    /// once and the server answers 2xx before reading it (`RequestBag+StateMachine.swift:170`; 8 MB on loopback).
    static let maximumFieldBytes = 256 * 1024
    /// The longest IPv6 zone (RFC 6874): an interface name (Linux and Darwin keep them under 16 bytes) or index. A
    /// bracketed host with a long zone reaches a SOCKS proxy as a name whose length NIOSOCKS writes in one byte.
    static let maximumZoneLength = 15

    /// What is wrong with a head; an error adds the request's name, which only a refused head needs made.
    enum Refusal {
        /// The URL cannot be requested: the reason, as the words after the URL.
        case url(String)
        /// The header fields cannot be sent: the message.
        case fields(String)

        /// The error for a refused request named `summary`: `invalidURL` or `invalidHeader`.
        func error(for summary: RequestSummary) -> KiteError {
            switch self {
            case .url(let reason):
                KiteError(code: .invalidURL, message: "URL \"\(summary.url)\" \(reason)", request: summary)
            case .fields(let message):
                KiteError(code: .invalidHeader, message: message, request: summary)
            }
        }
    }

    /// Why a head with these parts must not reach the engine, or `nil`. The parts are passed where the caller has
    /// them already (a head's accessors copy them).
    ///
    /// - Parameters:
    ///   - scheme: The head's scheme.
    ///   - authority: The head's authority.
    ///   - path: The head's path (with query).
    ///   - fields: The head's fields.
    ///   - fieldBytes: The bytes of `fields`' names and values, when the caller counted them on a walk of its own;
    ///     `nil` counts them here.
    static func refusal(
        scheme: String?,
        authority: String?,
        path: String?,
        fields: HTTPFields,
        fieldBytes: Int? = nil
    ) -> Refusal? {
        if let reason = Self.problem(scheme: scheme, authority: authority, path: path) { return .url(reason) }
        if fields.count > Self.maximumFieldCount {
            return .fields("the request has \(fields.count) header fields, more than \(Self.maximumFieldCount)")
        }
        let bytes = fieldBytes ?? Self.bytes(of: fields)
        if bytes > Self.maximumFieldBytes {
            return .fields("the request's header fields hold \(bytes) bytes, more than \(Self.maximumFieldBytes)")
        }
        return nil
    }

    /// The bytes of `fields`' names and values, as ``maximumFieldBytes`` counts them.
    static func bytes(of fields: HTTPFields) -> Int {
        var bytes = 0
        for field in fields {
            bytes += Self.bytes(of: field)
        }
        return bytes
    }

    /// The bytes of `field`'s name and value.
    @inline(__always)
    static func bytes(of field: HTTPField) -> Int {
        field.name.rawName.utf8.count + field.value.utf8.count
    }

    /// Why a head with these parts cannot be sent, or `nil`.
    static func problem(scheme: String?, authority: String?, path: String?) -> String? {
        guard let scheme, Self.isHTTP(scheme) else {
            return scheme.map { "has the unsupported scheme \"\($0)\"; use http or https" }
                ?? "has no scheme; use http:// or https://"
        }
        guard let authority, !authority.isEmpty else { return "has no host" }
        if let reason = Self.problem(authority: authority) { return reason }
        guard let path, path.utf8.first == UInt8(ascii: "/") else {
            return "has a request target that does not start with \"/\""
        }
        if path.utf8.count > Self.maximumTargetLength {
            return "has a request target of \(path.utf8.count) bytes, longer than \(Self.maximumTargetLength)"
        }
        for byte in path.utf8 where byte <= 0x20 || byte == 0x7F || byte == UInt8(ascii: "#") {
            return "has the byte \(Self.shown(byte)) in its request target"
        }
        return nil
    }

    /// Why `authority` (a host, then an optional port) cannot be connected to, or `nil`.
    static func problem(authority: String) -> String? {
        if let reason = authority.utf8.withContiguousStorageIfAvailable(Self.problem(authorityBytes:)) {
            return reason
        }
        // A string that is not native UTF-8 (bridged), made contiguous first.
        var authority = authority
        return authority.withUTF8(Self.problem(authorityBytes:))
    }

    private static func problem(authorityBytes bytes: UnsafeBufferPointer<UInt8>) -> String? {
        guard !bytes.isEmpty else { return "has no host" }
        var index = 0
        if bytes[0] == UInt8(ascii: "[") {
            guard let close = bytes.firstIndex(of: UInt8(ascii: "]")) else {
                return "has an IPv6 host without its closing \"]\""
            }
            let literal = String(decoding: bytes[0...close], as: UTF8.self)
            guard RequestDraft.isIPv6Literal(Substring(literal)) else {
                return "has the host \(literal), which is not an IPv6 address"
            }
            // A zone (RFC 6874) is sent to the resolver decoded: only unreserved bytes, so none decodes to NUL.
            if let zone = literal.range(of: "%25") {
                let name = literal[zone.upperBound...].utf8.dropLast()
                for byte in name where !Self.isUnreserved(byte) {
                    return "has the byte \(Self.shown(byte)) in the zone of its IPv6 host"
                }
                if name.count > Self.maximumZoneLength {
                    return "has an IPv6 zone of \(name.count) bytes, longer than \(Self.maximumZoneLength)"
                }
            }
            index = close + 1
        } else {
            while index < bytes.count, bytes[index] != UInt8(ascii: ":") {
                guard Self.isHostByte(bytes[index]) else {
                    return "has the byte \(Self.shown(bytes[index])) in its host"
                }
                index += 1
            }
            guard index > 0 else { return "has no host" }
            let length = bytes[index - 1] == UInt8(ascii: ".") ? index - 1 : index
            if length > Self.maximumHostLength {
                return "has a host name of \(length) bytes, longer than DNS allows (\(Self.maximumHostLength))"
            }
        }
        guard index < bytes.count else { return nil }
        guard bytes[index] == UInt8(ascii: ":") else {
            return "has \"\(String(decoding: bytes[index...], as: UTF8.self))\" after its host"
        }
        let digits = bytes[(index + 1)...]
        // An empty port is the scheme's (RFC 3986 §3.2.3).
        guard !digits.isEmpty else { return nil }
        var port = 0
        for digit in digits {
            guard digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") else {
                return "has the port \"\(String(decoding: digits, as: UTF8.self))\", which is not a number"
            }
            port = min(port * 10 + Int(digit - UInt8(ascii: "0")), 1 << 20)
        }
        guard (1...65535).contains(port) else {
            return "has the port \(String(decoding: digits, as: UTF8.self)), which is not in 1...65535"
        }
        return nil
    }

    private static func isHTTP(_ scheme: String) -> Bool {
        switch scheme {
        case "http", "https": true
        default: scheme.lowercased() == "http" || scheme.lowercased() == "https"
        }
    }

    /// RFC 3986's reg-name without percent-encoding: unreserved and sub-delims bytes (and so IPv4 addresses).
    /// async-http-client decodes a percent-encoded host before it resolves it, so `%00` would cut the name the
    /// resolver sees short of the one Kite checks and sends (`evil.example%00.good.example`), and `%31%32%37.0.0.1`
    /// would reach NIO's IP-address parser unchecked.
    private static func isHostByte(_ byte: UInt8) -> Bool {
        if Self.isUnreserved(byte) { return true }
        switch byte {
        case UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("),
            UInt8(ascii: ")"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","), UInt8(ascii: ";"),
            UInt8(ascii: "="):
            return true
        default:
            return false
        }
    }

    /// RFC 3986's unreserved bytes.
    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    /// A byte as an error names it: the character when it is printable ASCII, else its hex value.
    private static func shown(_ byte: UInt8) -> String {
        if byte > 0x20, byte < 0x7F { return "\"\(Character(Unicode.Scalar(byte)))\"" }
        let hex = String(byte, radix: 16, uppercase: true)
        return "0x" + (hex.count < 2 ? "0" + hex : hex)
    }
}
