import AsyncHTTPClient
import Foundation
import HTTPTypes

@testable import KiteUnderFuzz

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension FuzzTarget {
    /// A URL string as users pass it (`URLConvertible`) and the request head Kite makes of it: an `invalidURL`
    /// error, or an `http`/`https` head whose authority and path hold no space or control character, whose
    /// authority holds no `/`, `?`, `#` or `@`, whose path starts with `/` and holds no `#`; and Kite's quick
    /// reading of the common URL gives what `URL`'s accessors give.
    static func fuzzURL(_ input: [UInt8]) {
        let text = String(decoding: input, as: UTF8.self)
        let url: URL
        do {
            url = try text.asURL()
        } catch let error as KiteError {
            require(error.code == .invalidURL, "asURL failed with \(error.code): \(error.message)")
            return
        } catch {
            require(false, "asURL failed with \(error), not a KiteError")
            return
        }
        let draft = RequestDraft(method: .get, url: url, headerFields: HTTPFields())
        let head: HTTPRequest
        do {
            head = try draft.makeHTTPRequest()
        } catch {
            require(error.code == .invalidURL, "the head failed with \(error.code): \(error.message)")
            return
        }
        let scheme = head.scheme ?? ""
        let authority = head.authority ?? ""
        let path = head.path ?? ""
        require(["http", "https"].contains(scheme), "\(String(reflecting: text)) gives the scheme \(scheme)")
        require(
            !authority.isEmpty && !authority.unicodeScalars.contains { "/?#@ ".unicodeScalars.contains($0) }
                && !authority.unicodeScalars.contains { $0.properties.generalCategory == .control },
            "\(String(reflecting: text)) gives the authority \(String(reflecting: authority))"
        )
        require(
            path.hasPrefix("/") && !path.unicodeScalars.contains { $0 == "#" || $0 == " " }
                && !path.unicodeScalars.contains { $0.properties.generalCategory == .control },
            "\(String(reflecting: text)) gives the path \(String(reflecting: path))"
        )
        Self.requireTheEngineReadsTheSameTarget(scheme: scheme, authority: authority, path: path, text: text)
        guard let quick = RequestDraft.requestTarget(ofAbsolute: url.absoluteString, hasBase: url.baseURL != nil),
            let slow = try? draft.requestTargetFromAccessors()
        else { return }
        require(
            quick.scheme == slow.scheme && quick.path == slow.path
                && Self.sameAuthority(quick.authority, slow.authority),
            "\(String(reflecting: text)): read quickly \(quick), by URL's accessors \(slow)"
        )
    }

    /// The engine's own reading of a head Kite accepted: async-http-client parses the URL again and makes its
    /// connection target (`HTTPClient.Request(url:)` does both, through `DeconstructedURL` and `ConnectionTarget`,
    /// where a port above 65535 trapped). It must connect to the host and port Kite checked, a port in 1...65535, and
    /// a host without NUL (async-http-client percent-decodes it).
    private static func requireTheEngineReadsTheSameTarget(
        scheme: String,
        authority: String,
        path: String,
        text: String
    ) {
        guard let engine = try? HTTPClient.Request(url: "\(scheme)://\(authority)\(path)") else { return }
        let (host, port) = Self.split(authority)
        var expected = [String(host)]
        if host.hasPrefix("["), host.contains("%25") {
            // An IP literal is kept in brackets. With a zone, AHC decodes it and NIO's address parser asks
            // `getaddrinfo` (numeric hosts only): a zone it knows (an interface's index or name, `%251`, `%25lo`)
            // gives an address with its scope, kept in brackets; any other makes the host a name, sent decoded to the
            // resolver (which refuses it).
            let decoded = String(host.dropFirst().dropLast()).replacingOccurrences(of: "%25", with: "%")
            expected = [decoded, "[\(decoded)]"]
        }
        let expectedPort = port ?? (scheme == "https" ? 443 : 80)
        require(
            (1...65535).contains(engine.port) && engine.port == expectedPort,
            "\(String(reflecting: text)): the engine connects to port \(engine.port), Kite checked \(expectedPort)"
        )
        require(
            expected.contains { engine.host.caseInsensitiveCompare($0) == .orderedSame }
                && !engine.host.utf8.contains(0),
            "\(String(reflecting: text)): the engine connects to \(String(reflecting: engine.host)), Kite sends "
                + "\(expected.joined(separator: " or "))"
        )
    }

    /// An authority's host (IPv6 literals in their brackets) and port.
    private static func split(_ authority: String) -> (host: Substring, port: Int?) {
        guard let colon = authority.lastIndex(of: ":"), !authority[colon...].contains("]") else {
            return (authority[...], nil)
        }
        return (authority[..<colon], Int(authority[authority.index(after: colon)...]))
    }

    /// Whether two authorities name the same host and port: a port's leading zeros, which `URL` drops, aside.
    private static func sameAuthority(_ a: String, _ b: String) -> Bool {
        let (left, right) = (Self.split(a), Self.split(b))
        return left.host == right.host && left.port == right.port
    }

    /// A `URLRequest` (`URLRequestConvertible`) made of the input's lines: method, URL, then `name: value`
    /// header lines. Kite's draft of it is an `invalidURL`, `invalidRequest` or `invalidHeader` error, or
    /// a draft whose method is a token and whose field values hold no CR, LF or NUL.
    static func fuzzURLRequest(_ input: [UInt8]) {
        let lines = input.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
            .map { String(decoding: $0, as: UTF8.self) }
        guard lines.count >= 2, let url = URL(string: lines[1]) else { return }
        var request = URLRequest(url: url)
        request.httpMethod = lines[0]
        for line in lines.dropFirst(2) {
            guard let colon = line.firstIndex(of: ":") else { continue }
            request.addValue(
                String(line[line.index(after: colon)...]),
                forHTTPHeaderField: String(line[..<colon])
            )
        }
        let draft: RequestDraft
        do {
            draft = try request.asRequestDraft()
        } catch {
            require(
                [.invalidURL, .invalidRequest, .invalidHeader].contains(error.code),
                "asRequestDraft failed with \(error.code): \(error.message)"
            )
            return
        }
        let tokenCharacters = Set("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
        require(
            !draft.method.rawValue.isEmpty && draft.method.rawValue.allSatisfy(tokenCharacters.contains),
            "the method \(String(reflecting: draft.method.rawValue))"
        )
        for field in draft.headerFields {
            require(
                !field.value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }),
                "the field \(field.name): \(String(reflecting: field.value))"
            )
        }
    }

    /// Resume data (Kite's token, which apps store and hand back): a `resumeFailed` error, or a token naming a
    /// partial file that Kite made (so resuming never appends to, or removes, another file), a byte count that
    /// is not negative, and a draft that asks for the bytes from there with `Range`.
    static func fuzzResumeData(_ input: [UInt8]) {
        let token: ResumeData
        do {
            token = try ResumeData.decode(Data(input))
        } catch {
            require(error.code == .resumeFailed, "decode failed with \(error.code): \(error.message)")
            return
        }
        require(token.bytes >= 0, "a token of \(token.bytes) bytes")
        require(
            ResumeData.isPartialFileName(token.partialFileURL?.lastPathComponent ?? ""),
            "a token naming the partial file \(String(reflecting: token.partialFilePath))"
        )
        do {
            let draft = try token.makeDraft()
            require(
                draft.headerFields[.range] == "bytes=\(token.bytes)-" && draft.method == .get,
                "the draft \(draft.method) with Range \(String(describing: draft.headerFields[.range]))"
            )
        } catch {
            require(error.code == .resumeFailed, "makeDraft failed with \(error.code): \(error.message)")
        }
    }
}
