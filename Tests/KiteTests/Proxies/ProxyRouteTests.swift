import Foundation
import Testing

@testable import Kite

/// Which proxy each request goes through: curl's environment rules, `no_proxy`, proxy URLs and their errors.
@Suite struct ProxyRouteTests {
    private static func http(_ host: String, _ port: Int, _ credential: Credential? = nil) -> ProxyServer {
        ProxyServer(kind: .http, host: host, port: port, credential: credential)
    }

    private static func socks(_ host: String, _ port: Int) -> ProxyServer {
        ProxyServer(kind: .socks, host: host, port: port, credential: nil)
    }

    private func proxy(
        _ variables: [String: String],
        scheme: String = "http",
        host: String = "example.com",
        port: Int = 80
    ) throws -> ProxyServer? {
        try ProxyRoute(.environment(variables: variables)).proxy(scheme: scheme, host: host, port: port)
    }

    /// The error for a request through `value` in `variable`, or `nil` when it did not throw.
    private func error(_ value: String, in variable: String = "http_proxy") -> KiteError? {
        do {
            _ = try ProxyRoute(.environment(variables: [variable: value]))
                .proxy(scheme: variable.lowercased() == "https_proxy" ? "https" : "http", host: "example.com", port: 80)
            return nil
        } catch {
            return error
        }
    }

    // MARK: - Choosing the variable

    @Test(
        arguments: [
            ([:], "http", nil),
            ([:], "https", nil),
            (["http_proxy": "http://plain:3128"], "http", http("plain", 3128)),
            (["http_proxy": "http://plain:3128"], "https", nil),
            (["https_proxy": "http://secure:3129"], "https", http("secure", 3129)),
            (["https_proxy": "http://secure:3129"], "http", nil),
            (["HTTP_PROXY": "http://upper:8080"], "http", http("upper", 8080)),
            (["HTTP_PROXY": "http://upper:8080"], "https", nil),
            (["HTTPS_PROXY": "http://upper:8443"], "https", http("upper", 8443)),
            (["HTTPS_PROXY": "http://upper:8443"], "http", nil),
            (["all_proxy": "socks5://every:1080"], "http", socks("every", 1080)),
            (["all_proxy": "socks5://every:1080"], "https", socks("every", 1080)),
            (["ALL_PROXY": "http://every:3128"], "https", http("every", 3128)),
            (["http_proxy": "http://a:1", "https_proxy": "http://b:2"], "http", http("a", 1)),
            (["http_proxy": "http://a:1", "https_proxy": "http://b:2"], "https", http("b", 2)),
            (["http_proxy": "", "HTTP_PROXY": "http://upper:2"], "http", http("upper", 2)),
            (["https_proxy": " \t", "all_proxy": "http://every:3"], "https", http("every", 3)),
            (["http_proxy": ""], "http", nil),
            (["no_proxy": "example.org"], "http", nil),
        ] as [([String: String], String, ProxyServer?)]
    )
    func schemeChoosesTheVariable(variables: [String: String], scheme: String, expected: ProxyServer?) throws {
        #expect(try self.proxy(variables, scheme: scheme) == expected)
    }

    @Test(
        arguments: [
            (["http_proxy": "http://lower:1", "HTTP_PROXY": "http://upper:2"], "http", http("lower", 1)),
            (["https_proxy": "http://lower:1", "HTTPS_PROXY": "http://upper:2"], "https", http("lower", 1)),
            (["all_proxy": "http://lower:1", "ALL_PROXY": "http://upper:2"], "http", http("lower", 1)),
            (["all_proxy": "http://lower:1", "ALL_PROXY": "http://upper:2"], "https", http("lower", 1)),
        ] as [([String: String], String, ProxyServer?)]
    )
    func lowerCaseWinsOverUpperCase(variables: [String: String], scheme: String, expected: ProxyServer?) throws {
        #expect(try self.proxy(variables, scheme: scheme) == expected)
    }

    @Test(
        arguments: [
            (["http_proxy": "http://a:1", "all_proxy": "http://every:9"], "https", http("every", 9)),
            (["HTTP_PROXY": "http://a:1", "ALL_PROXY": "http://every:9"], "https", http("every", 9)),
            (["https_proxy": "http://b:2", "all_proxy": "http://every:9"], "http", http("every", 9)),
            (["https_proxy": "http://b:2", "all_proxy": "http://every:9"], "https", http("b", 2)),
            (["HTTPS_PROXY": "http://b:2", "all_proxy": "http://every:9"], "https", http("b", 2)),
            (["http_proxy": "http://a:1", "ALL_PROXY": "http://every:9"], "http", http("a", 1)),
        ] as [([String: String], String, ProxyServer?)]
    )
    func allProxyIsTheFallbackForBothSchemes(
        variables: [String: String],
        scheme: String,
        expected: ProxyServer?
    ) throws {
        #expect(try self.proxy(variables, scheme: scheme) == expected)
    }

    @Test(
        arguments: [
            (["REQUEST_METHOD": "GET", "HTTP_PROXY": "http://evil:1"], "http", nil),
            (["REQUEST_METHOD": "", "HTTP_PROXY": "http://evil:1"], "http", nil),
            (
                ["REQUEST_METHOD": "GET", "HTTP_PROXY": "http://evil:1", "all_proxy": "http://every:9"], "http",
                http("every", 9)
            ),
            (["REQUEST_METHOD": "GET", "http_proxy": "http://lower:1"], "http", http("lower", 1)),
            (["REQUEST_METHOD": "GET", "HTTPS_PROXY": "http://upper:2"], "https", http("upper", 2)),
            (["REQUEST_METHOD": "GET", "ALL_PROXY": "http://every:9"], "http", http("every", 9)),
            (["HTTP_PROXY": "http://evil:1"], "http", http("evil", 1)),
        ] as [([String: String], String, ProxyServer?)]
    )
    func upperCaseHTTPProxyIsIgnoredUnderCGI(variables: [String: String], scheme: String, expected: ProxyServer?) throws
    {
        #expect(try self.proxy(variables, scheme: scheme) == expected)
    }

    // MARK: - no_proxy

    @Test(arguments: [
        // Names match themselves and their subdomains, never a partial label.
        ("example.com", "example.com", 80, true),
        ("example.com", "a.example.com", 80, true),
        ("example.com", "a.b.example.com", 443, true),
        ("example.com", "badexample.com", 80, false),
        ("example.com", "example.org", 80, false),
        ("example.com", "com", 80, false),
        ("a.example.com", "example.com", 80, false),
        (".example.com", "example.com", 80, true),
        (".example.com", "a.example.com", 80, true),
        (".example.com", "badexample.com", 80, false),
        ("*.example.com", "a.example.com", 80, true),
        ("*.example.com", "example.com", 80, true),
        // Case and trailing dots.
        ("EXAMPLE.COM", "a.example.com", 80, true),
        ("example.com", "A.Example.COM", 80, true),
        ("example.com.", "example.com", 80, true),
        ("example.com", "a.example.com.", 80, true),
        (".Example.Com.", "b.EXAMPLE.com", 80, true),
        // Every host.
        ("*", "anything.test", 80, true),
        ("*", "10.0.0.1", 80, true),
        ("*", "::1", 80, true),
        ("a.test,*", "b.test", 8080, true),
        // IPv4 addresses, exactly.
        ("127.0.0.1", "127.0.0.1", 80, true),
        ("127.0.0.1", "127.0.0.2", 80, false),
        ("127.0.0.1", "localhost", 80, false),
        ("0.0.1", "10.0.0.1", 80, false),
        // IPv6 addresses, however spelled.
        ("::1", "::1", 80, true),
        ("::1", "0:0:0:0:0:0:0:1", 80, true),
        ("0:0:0:0:0:0:0:1", "::1", 80, true),
        ("[::1]", "::1", 80, true),
        ("[0::1]", "0:0:0:0:0:0:0:1", 80, true),
        ("::1", "::2", 80, false),
        ("2001:DB8::1", "2001:db8:0:0:0:0:0:1", 80, true),
        ("2001:db8::1", "2001:db8::1:0", 80, false),
        ("::1", "127.0.0.1", 80, false),
        // CIDR ranges match IP hosts only.
        ("10.0.0.0/8", "10.1.2.3", 80, true),
        ("10.0.0.0/8", "10.255.255.255", 80, true),
        ("10.0.0.0/8", "11.0.0.1", 80, false),
        ("10.0.0.0/8", "9.255.255.255", 80, false),
        ("10.0.0.0/8", "ten.example", 80, false),
        ("192.168.1.0/24", "192.168.1.200", 80, true),
        ("192.168.1.0/24", "192.168.2.1", 80, false),
        ("192.168.1.77/24", "192.168.1.3", 80, true),
        ("10.1.2.3/32", "10.1.2.3", 80, true),
        ("10.1.2.3/32", "10.1.2.4", 80, false),
        ("0.0.0.0/0", "8.8.8.8", 80, true),
        ("0.0.0.0/0", "::1", 80, false),
        ("0.0.0.0/0", "example.com", 80, false),
        ("fd00::/8", "fd12:3456::1", 80, true),
        ("fd00::/8", "fe80::1", 80, false),
        ("fd00::/8", "10.0.0.1", 80, false),
        ("[fd00::]/8", "fdff::1", 80, true),
        ("::/0", "2001:db8::1", 80, true),
        ("::/0", "127.0.0.1", 80, false),
        ("::ffff:0:0/96", "10.0.0.1", 80, false),
        ("2001:db8::/127", "2001:db8::1", 80, true),
        ("2001:db8::/128", "2001:db8::1", 80, false),
        ("2001:db8::1/128", "2001:db8::1", 80, true),
        ("2001:db8::/65", "2001:db8::7fff:0:0:1", 80, true),
        ("2001:db8::/65", "2001:db8::8000:0:0:1", 80, false),
        ("2001:db8::/96", "2001:db9::", 80, false),
        ("2001:db8::/64", "2001:db8::ffff:ffff:ffff:ffff", 80, true),
        ("2001:db8::/64", "2001:db8:0:1::", 80, false),
        // Ports.
        ("example.com:8080", "example.com", 8080, true),
        ("example.com:8080", "example.com", 80, false),
        (".example.com:443", "a.example.com", 443, true),
        (".example.com:443", "a.example.com", 80, false),
        ("[::1]:8080", "::1", 8080, true),
        ("[::1]:8080", "::1", 443, false),
        ("1.2.3.4:8080", "1.2.3.4", 8080, true),
        ("1.2.3.4:8080", "1.2.3.4", 80, false),
        // Separators.
        ("a.test, b.test", "b.test", 80, true),
        ("a.test b.test\tc.test", "c.test", 80, true),
        ("a.test,,b.test", "b.test", 80, true),
        (" ,a.test, ", "a.test", 80, true),
        ("a.test\nb.test", "b.test", 80, true),
        ("a.test, b.test", "c.test", 80, false),
        // Malformed entries are ignored, the others still apply.
        ("10.0.0.0/33,example.com", "example.com", 80, true),
        ("10.0.0.0/33,example.com", "10.0.0.1", 80, false),
        ("fd00::/129", "fd00::1", 80, false),
        ("10.0.0.0/x, a.test", "10.0.0.1", 80, false),
        ("10.0.0.0/, a.test", "a.test", 80, true),
        ("example.com:99999", "example.com", 80, false),
        ("example.com:0", "example.com", 80, false),
        ("example.com:http", "example.com", 80, false),
        ("[zz]", "zz", 80, false),
        ("[::1", "::1", 80, false),
        ("*:80", "a.test", 80, false),
        ("a*.test", "ab.test", 80, false),
        ("nohost.test/8", "nohost.test", 80, false),
        // No implicit bypass.
        ("", "localhost", 80, false),
        ("", "127.0.0.1", 80, false),
        ("", "::1", 80, false),
    ])
    func noProxyEntriesSendMatchingHostsDirect(noProxy: String, host: String, port: Int, direct: Bool) throws {
        let variables = ["http_proxy": "http://proxy:3128", "no_proxy": noProxy]
        let expected = direct ? nil : Self.http("proxy", 3128)
        #expect(try self.proxy(variables, host: host, port: port) == expected)
    }

    @Test func noProxyAppliesToEveryScheme() throws {
        let variables = ["https_proxy": "http://s:1", "all_proxy": "http://a:2", "no_proxy": "example.com"]
        #expect(try self.proxy(variables, scheme: "https", host: "www.example.com", port: 443) == nil)
        #expect(try self.proxy(variables, scheme: "http", host: "www.example.com", port: 80) == nil)
        #expect(try self.proxy(variables, scheme: "https", host: "example.org", port: 443) == Self.http("s", 1))
        #expect(try self.proxy(variables, scheme: "http", host: "example.org", port: 80) == Self.http("a", 2))
    }

    @Test(
        arguments: [
            (["NO_PROXY": "example.com"], "example.com", nil),
            (["no_proxy": "other.test", "NO_PROXY": "example.com"], "example.com", http("proxy", 3128)),
            (["no_proxy": "example.com", "NO_PROXY": "other.test"], "example.com", nil),
            (["no_proxy": "", "NO_PROXY": "example.com"], "example.com", nil),
        ] as [([String: String], String, ProxyServer?)]
    )
    func lowerCaseNoProxyWins(variables: [String: String], host: String, expected: ProxyServer?) throws {
        let variables = variables.merging(["http_proxy": "http://proxy:3128"]) { $1 }
        #expect(try self.proxy(variables, host: host) == expected)
    }

    // MARK: - Proxy URLs

    @Test(arguments: [
        ("proxy.corp", http("proxy.corp", 1080)),
        ("proxy.corp:3128", http("proxy.corp", 3128)),
        ("http://proxy.corp", http("proxy.corp", 1080)),
        ("http://proxy.corp:3128", http("proxy.corp", 3128)),
        ("HTTP://proxy.corp:3128", http("proxy.corp", 3128)),
        ("http://proxy.corp:", http("proxy.corp", 1080)),
        ("http://proxy.corp:3128/", http("proxy.corp", 3128)),
        ("http://proxy.corp:3128/some/path?query#fragment", http("proxy.corp", 3128)),
        ("  http://proxy.corp:3128\n", http("proxy.corp", 3128)),
        ("http://10.0.0.1:3128", http("10.0.0.1", 3128)),
        ("http://[::1]:3128", http("::1", 3128)),
        ("http://[2001:db8::1]", http("2001:db8::1", 1080)),
        ("[fd00::2]:8080", http("fd00::2", 8080)),
        ("http://user:pass@proxy:3128", http("proxy", 3128, Credential(user: "user", password: "pass"))),
        ("user:pass@proxy", http("proxy", 1080, Credential(user: "user", password: "pass"))),
        ("http://us%40er:p%3As%2Fs%20w@proxy:1", http("proxy", 1, Credential(user: "us@er", password: "p:s/s w"))),
        ("http://user@proxy:3128", http("proxy", 3128, Credential(user: "user", password: ""))),
        ("http://user:@proxy:3128", http("proxy", 3128, Credential(user: "user", password: ""))),
        ("http://a@b:c@proxy:3128", http("proxy", 3128, Credential(user: "a@b", password: "c"))),
        ("http://user:pw@[::1]:3128", http("::1", 3128, Credential(user: "user", password: "pw"))),
        ("http://@proxy:3128", http("proxy", 3128)),
        ("socks5://proxy:1081", socks("proxy", 1081)),
        ("socks5://proxy", socks("proxy", 1080)),
        ("socks5h://proxy:9050", socks("proxy", 9050)),
        ("SOCKS5H://[::1]", socks("::1", 1080)),
    ])
    func proxyURLsParse(value: String, expected: ProxyServer) throws {
        #expect(try self.proxy(["http_proxy": value]) == expected)
    }

    @Test(arguments: [
        (
            "https://proxy:443",
            "the proxy variable http_proxy=\"https://proxy:443\" cannot be used: HTTPS proxies are not supported "
                + "(the engine cannot speak TLS to a proxy); use an http:// proxy, which tunnels HTTPS requests with "
                + "CONNECT"
        ),
        (
            "socks4://proxy:1080",
            "the proxy variable http_proxy=\"socks4://proxy:1080\" cannot be used: the proxy scheme \"socks4\" is not "
                + "supported; use http, socks5 or socks5h"
        ),
        (
            "socks4a://proxy",
            "the proxy variable http_proxy=\"socks4a://proxy\" cannot be used: the proxy scheme \"socks4a\" is not "
                + "supported; use http, socks5 or socks5h"
        ),
        (
            "FTP://proxy",
            "the proxy variable http_proxy=\"FTP://proxy\" cannot be used: the proxy scheme \"ftp\" is not "
                + "supported; use http, socks5 or socks5h"
        ),
        (
            "http://proxy:0",
            "the proxy variable http_proxy=\"http://proxy:0\" cannot be used: its port is not a number in 1...65535"
        ),
        (
            "http://proxy:65536",
            "the proxy variable http_proxy=\"http://proxy:65536\" cannot be used: its port is not a number in "
                + "1...65535"
        ),
        (
            "http://proxy:http",
            "the proxy variable http_proxy=\"http://proxy:http\" cannot be used: its port is not a number in 1...65535"
        ),
        (
            "http://proxy:+80",
            "the proxy variable http_proxy=\"http://proxy:+80\" cannot be used: its port is not a number in 1...65535"
        ),
        ("http://:3128", "the proxy variable http_proxy=\"http://:3128\" cannot be used: it names no host"),
        ("http://user@", "the proxy variable http_proxy=\"http://user@\" cannot be used: it names no host"),
        (
            "http://::1:3128",
            "the proxy variable http_proxy=\"http://::1:3128\" cannot be used: an IPv6 proxy address must be in "
                + "brackets, such as http://[::1]:3128"
        ),
        (
            "http://[::1",
            "the proxy variable http_proxy=\"http://[::1\" cannot be used: the host in brackets is not an IPv6 address"
        ),
        (
            "http://[10.0.0.1]:3128",
            "the proxy variable http_proxy=\"http://[10.0.0.1]:3128\" cannot be used: the host in brackets is not an "
                + "IPv6 address"
        ),
        (
            "http://[::1]3128",
            "the proxy variable http_proxy=\"http://[::1]3128\" cannot be used: the host must be followed by :port "
                + "or nothing"
        ),
        (
            "socks5://user:pw@proxy:1080",
            "the proxy variable http_proxy=\"socks5://user:***@proxy:1080\" cannot be used: SOCKS proxies with "
                + "credentials are not supported (the engine has no SOCKS authentication)"
        ),
        (
            "http://user:p%ZZw@proxy",
            "the proxy variable http_proxy=\"http://user:***@proxy\" cannot be used: its user name or password is not "
                + "valid percent-encoding"
        ),
    ])
    func unusableProxyURLsFailWithProxyFailed(value: String, message: String) throws {
        let error = try #require(self.error(value))
        #expect(error.code == .proxyFailed)
        #expect(error.message == message)
        #expect(error.description == "Request failed: \(message)")
    }

    @Test(arguments: ["https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"])
    func errorsNameTheVariable(variable: String) throws {
        let error = try #require(self.error("socks4://proxy", in: variable))
        #expect(error.code == .proxyFailed)
        #expect(error.message.hasPrefix("the proxy variable \(variable)=\"socks4://proxy\" cannot be used: "))
    }

    @Test(arguments: [
        "https://user:hunter2@proxy:443",
        "socks4://user:hunter2@proxy",
        "socks5://user:hunter2@proxy",
        "socks5h://user:hunter2@proxy:1080",
        "http://user:hunter2@proxy:99999",
        "http://user:hunter2@:3128",
        "http://user:hunter2@::1:3128",
        "http://user:hunter2@[::1",
        "http://user:hunter2%ZZ@proxy",
        "http://user:hunter2/x@proxy:3128",
        "http://user:hunter2?x@proxy:3128",
        "user:hunter2@proxy:port",
    ])
    func errorsNeverShowThePassword(value: String) throws {
        let error = try #require(self.error(value))
        #expect(error.code == .proxyFailed)
        #expect(error.message.contains("user:***@"))
        for text in [error.message, error.description, String(reflecting: error)] {
            #expect(!text.contains("hunter2"))
        }
    }

    @Test func anUnusableVariableFailsOnlyTheRequestsThatUseIt() throws {
        let variables = ["https_proxy": "socks4://proxy", "http_proxy": "http://plain:3128", "no_proxy": ".internal"]
        let route = ProxyRoute(.environment(variables: variables))
        #expect(try route.proxy(scheme: "http", host: "example.com", port: 80) == Self.http("plain", 3128))
        #expect(try route.proxy(scheme: "https", host: "a.internal", port: 443) == nil)
        #expect(throws: KiteError(code: .proxyFailed, message: "")) {
            try route.proxy(scheme: "https", host: "example.com", port: 443)
        }
        #expect(route.isDirect == false)
    }

    // MARK: - Explicit configurations

    @Test(arguments: [
        ("http", "example.com", 80),
        ("https", "localhost", 443),
        ("https", "::1", 8443),
        ("http", "10.0.0.1", 8080),
    ])
    func explicitConfigurationsApplyToEveryRequest(scheme: String, host: String, port: Int) throws {
        let credential = Credential(user: "me", password: "pw")
        let http = ProxyRoute(.http(host: "proxy.corp", port: 3128, authorization: credential))
        let socks = ProxyRoute(.socks(host: "tor", port: 9050))
        let none = ProxyRoute(.none)
        #expect(try http.proxy(scheme: scheme, host: host, port: port) == Self.http("proxy.corp", 3128, credential))
        #expect(try socks.proxy(scheme: scheme, host: host, port: port) == Self.socks("tor", 9050))
        #expect(try none.proxy(scheme: scheme, host: host, port: port) == nil)
    }

    @Test func theProcessEnvironmentIsTheDefault() throws {
        let process = ProxyRoute(.environment)
        let given = ProxyRoute(.environment(variables: ProcessInfo.processInfo.environment))
        #expect(process.isDirect == given.isDirect)
        func outcome(_ route: ProxyRoute, scheme: String) -> String {
            do {
                return String(describing: try route.proxy(scheme: scheme, host: "example.com", port: 80))
            } catch {
                return "\(error)"
            }
        }
        for scheme in ["http", "https"] {
            #expect(outcome(process, scheme: scheme) == outcome(given, scheme: scheme))
        }
    }

    // MARK: - isDirect

    @Test(
        arguments: [
            ([:], true),
            (["no_proxy": "example.com"], true),
            (["NO_PROXY": "*"], true),
            (["http_proxy": ""], true),
            (["HTTP_PROXY": "http://evil:1", "REQUEST_METHOD": "GET"], true),
            (["http_proxy": "http://proxy:3128", "no_proxy": "*"], true),
            (["http_proxy": "http://proxy:3128", "no_proxy": "a.test, *"], true),
            (["http_proxy": "http://proxy:3128"], false),
            (["HTTPS_PROXY": "http://proxy:3128"], false),
            (["all_proxy": "socks5://proxy"], false),
            (["https_proxy": "socks4://proxy"], false),
            (["http_proxy": "http://proxy:3128", "no_proxy": "example.com"], false),
            (["HTTP_PROXY": "http://proxy:1"], false),
        ] as [([String: String], Bool)]
    )
    func environmentsWithoutProxiesAreDirect(variables: [String: String], isDirect: Bool) {
        #expect(ProxyRoute(.environment(variables: variables)).isDirect == isDirect)
    }

    @Test func explicitConfigurationsAreDirectOnlyForNone() {
        #expect(ProxyRoute(.none).isDirect == true)
        #expect(ProxyRoute(.http(host: "proxy", port: 3128)).isDirect == false)
        #expect(ProxyRoute(.socks(host: "proxy")).isDirect == false)
    }
}
