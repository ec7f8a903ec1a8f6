import Foundation

@testable import KiteUnderFuzz

extension FuzzTarget {
    /// `Set-Cookie` from `https://www.example.com/docs/intro`: a cookie whose name and value hold no control
    /// characters but tab (RFC 6265bis §5.6 allows HTAB), whose domain is the host or a parent of it, whose path is
    /// absolute; the same cookie again.
    static func fuzzSetCookie(_ input: [UInt8]) {
        let header = String(decoding: input, as: UTF8.self)
        let url = URL(string: "https://www.example.com/docs/intro")!
        guard let cookie = Cookie(setCookie: header, for: url) else { return }
        let controls = (cookie.name + cookie.value).unicodeScalars.filter {
            ($0.value < 0x20 && $0.value != 0x09) || $0.value == 0x7F
        }
        require(controls.isEmpty, "a cookie with control characters: \(String(reflecting: cookie))")
        require(
            ["www.example.com", "example.com"].contains(cookie.domain),
            "a cookie for \(cookie.domain) from www.example.com"
        )
        require(cookie.path.hasPrefix("/"), "a cookie with path \(cookie.path)")
        let again = Cookie(setCookie: header, for: url)
        require(
            again?.name == cookie.name && again?.value == cookie.value && again?.domain == cookie.domain
                && again?.path == cookie.path,
            "a second read gave \(String(describing: again))"
        )
    }

    /// Cookie dates (RFC 6265 §5.1.1): a date from 1601 on, which its RFC 1123 form gives back.
    static func fuzzCookieDate(_ input: [UInt8]) {
        guard let date = CookieDate.parse(input) else { return }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "GMT")!
        let year = calendar.component(.year, from: date)
        require(year >= 1601, "a cookie date in \(year)")
        guard year <= 9999 else { return }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = calendar.timeZone
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let text = formatter.string(from: date)
        require(CookieDate.parse(Array(text.utf8)) == date, "\(date) formatted as \(text) parses to another date")
    }

    /// `Content-Disposition` and the file name Kite derives from it: the file stays in the directory, under a
    /// name that is not empty, `.` or `..` and holds no `/` or NUL.
    static func fuzzContentDisposition(_ input: [UInt8]) {
        let text = String(decoding: input, as: UTF8.self)
        guard let disposition = ContentDisposition(text) else { return }
        let directory = URL(fileURLWithPath: "/downloads", isDirectory: true)
        let suggested = disposition.filename ?? ""
        let destination = DownloadFilename.destinationURL(in: directory, suggestedName: suggested)
        let name = destination.lastPathComponent
        require(
            destination.deletingLastPathComponent().standardizedFileURL.path == directory.path,
            "\(String(reflecting: suggested)) leads to \(destination.path)"
        )
        require(
            !name.isEmpty && name != "." && name != ".." && !name.contains("/") && !name.contains("\0"),
            "\(String(reflecting: suggested)) gives the name \(String(reflecting: name))"
        )
    }

    /// `WWW-Authenticate` challenges (RFC 9110 §11.6.1): schemes that are tokens, the same challenges again.
    static func fuzzAuthenticationChallenges(_ input: [UInt8]) {
        let fields = String(decoding: input, as: UTF8.self).split(separator: "\n").map(String.init)
        let challenges = AuthenticationChallenge.parse(fields)
        for challenge in challenges {
            require(
                !challenge.scheme.isEmpty && !challenge.scheme.contains(where: { $0 == " " || $0 == "," || $0 == "=" }),
                "a challenge with scheme \(String(reflecting: challenge.scheme))"
            )
        }
        require(AuthenticationChallenge.parse(fields) == challenges, "a second read gave other challenges")
    }

    /// Media types: a type and subtype without `/` or `;`, which read back from their description.
    static func fuzzMediaType(_ input: [UInt8]) {
        let text = String(decoding: input, as: UTF8.self)
        _ = Charset.encoding(forContentType: text)
        guard let type = MediaType(text) else { return }
        require(
            !(type.type + type.subtype).contains(where: { $0 == "/" || $0 == ";" }),
            "the media type \(type.type)/\(type.subtype)"
        )
        let again = MediaType(type.description)
        require(
            again?.type == type.type && again?.subtype == type.subtype,
            "\(type) reads back as \(String(describing: again))"
        )
    }

    /// Proxy variables: the input's parts (split at NUL) are `https_proxy`, `no_proxy` and a host. The proxy for
    /// `https://host/` is none, a URL without credentials, or a `proxyFailed` error.
    static func fuzzProxyVariables(_ input: [UInt8]) {
        let parts = input.split(separator: 0, maxSplits: 2, omittingEmptySubsequences: false)
            .map { String(decoding: $0, as: UTF8.self) }
        let proxy = parts.first ?? ""
        let noProxy = parts.count > 1 ? parts[1] : ""
        let host = parts.count > 2 ? parts[2] : "example.com"
        guard let url = URL(string: "https://\(host)/"), url.host != nil else { return }
        let configuration = ProxyConfiguration.environment(variables: ["https_proxy": proxy, "no_proxy": noProxy])
        do {
            guard let chosen = try configuration.proxy(for: url) else { return }
            require(
                chosen.user == nil && chosen.password == nil,
                "the proxy \(chosen.absoluteString) carries credentials"
            )
            require(["http", "socks5"].contains(chosen.scheme ?? ""), "the proxy \(chosen.absoluteString)")
        } catch {
            require(error.code == .proxyFailed, "the proxy choice failed with \(error.code): \(error.message)")
        }
    }
}

extension FuzzTarget {
    /// Netlink datagrams (route, link and address messages): every message read lies inside the datagram.
    static func fuzzNetlink(_ input: [UInt8]) {
        #if os(Linux)
        let messages = NetlinkParser.messages(in: input)
        let total = messages.reduce(0) { $0 + Int($1.header.length) }
        require(total <= input.count, "\(messages.count) messages of \(total) bytes in a datagram of \(input.count)")
        #endif
    }
}

extension FuzzTarget {
    /// Digest challenges answered (RFC 7616 §3.4): the input's lines are `WWW-Authenticate` values; every Digest
    /// challenge Kite can answer gives an `Authorization` value that holds no CR, LF or NUL and that reads back,
    /// with the same parser, as one Digest credential carrying the challenge's realm, nonce and opaque, the user
    /// name, the URI and a response of the hash's length in lowercase hex.
    static func fuzzDigestAuthorization(_ input: [UInt8]) {
        let fields = String(decoding: input, as: UTF8.self).split(separator: "\n").map(String.init)
        for challenge in AuthenticationChallenge.parse(fields) {
            guard var digest = DigestAuthorization(challenge: challenge) else { continue }
            let user = "Mufasa \"the\" king\\"
            let uri = "/dir/index.html?x=1"
            let answer = digest.authorization(
                username: user,
                password: "Circle Of Life",
                method: "GET",
                uri: uri,
                body: input,
                cnonce: "0a4f113b"
            )
            require(
                !answer.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }),
                "an Authorization value with CR, LF or NUL: \(String(reflecting: answer))"
            )
            let read = AuthenticationChallenge.parse([answer])
            require(read.count == 1 && read[0].scheme == "digest", "\(String(reflecting: answer)) reads as \(read)")
            let parameters = read[0].parameters
            require(
                parameters["username"] == user && parameters["realm"] == digest.realm
                    && parameters["nonce"] == digest.nonce && parameters["uri"] == uri
                    && parameters["opaque"] == digest.opaque,
                "\(String(reflecting: answer)) reads back as \(parameters) for \(challenge)"
            )
            let response = parameters["response"] ?? ""
            let hexLength = digest.algorithm("").utf8.count
            require(
                response.utf8.count == hexLength
                    && response.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) },
                "the response \(String(reflecting: response)) of \(String(reflecting: answer))"
            )
        }
    }

    /// `Retry-After` (RFC 9110 §10.2.3): no delay, or one that is not negative and not NaN; a date read from the
    /// value is the one its IMF-fixdate form gives back.
    static func fuzzRetryAfter(_ input: [UInt8]) {
        let value = String(decoding: input, as: UTF8.self)
        let now = Date(timeIntervalSince1970: 1_795_000_000)
        if let seconds = RetryAfter.seconds(in: value, now: now) {
            require(!seconds.isNaN && seconds >= 0, "\(String(reflecting: value)) asks for \(seconds) s")
        }
        guard let date = RetryAfter.date(from: value, now: now) else { return }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "GMT")!
        let year = calendar.component(.year, from: date)
        // DateFormatter's calendar is Julian before October 1582; HTTP dates are proleptic Gregorian.
        guard (1600...9999).contains(year) else { return }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = calendar.timeZone
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let text = formatter.string(from: date)
        require(
            RetryAfter.date(from: text, now: now) == date,
            "\(String(reflecting: value)) is \(date), whose IMF-fixdate \(text) reads as another date"
        )
    }
}
