import Foundation
import Testing

@testable import Kite

@Suite struct DownloadFilenameTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let suggestion: String
        let expected: String

        init(_ suggestion: String, _ expected: String) {
            self.suggestion = suggestion
            self.expected = expected
        }

        var testDescription: String { self.suggestion.debugDescription }
    }

    static let family = "\u{1F468}\u{200D}\u{1F469}\u{200D}\u{1F467}\u{200D}\u{1F466}"

    static let hostileNames: [Case] = [
        Case("report.pdf", "report.pdf"),
        Case("../../etc/passwd", "_.._etc_passwd"),
        Case("..", "download"),
        Case(".", "download"),
        Case("...", "download"),
        Case(".bashrc", "bashrc"),
        Case("..\\..\\windows\\win.ini", "_.._windows_win.ini"),
        Case("%2e%2e%2f", "%2e%2e%2f"),
        Case("%2e%2e%2fetc%2fpasswd", "%2e%2e%2fetc%2fpasswd"),
        Case("a/b", "a_b"),
        Case("a\\b", "a_b"),
        Case("/", "_"),
        Case("evil.pdf\u{0}.exe", "evil.pdf_.exe"),
        Case("\u{0}", "_"),
        Case("a\r\nb.txt", "a__b.txt"),
        Case("\r\n", "__"),
        Case("tab\there\u{7F}\u{85}.txt", "tab_here__.txt"),
        Case("invoice\u{202E}fdp.exe", "invoice_fdp.exe"),
        Case("\u{200F}name\u{2066}.txt", "_name_.txt"),
        Case("  spaced name.txt  ", "spaced name.txt"),
        Case(" . . ", "download"),
        Case(". . .txt", "txt"),
        Case("file. . .", "file"),
        Case("notes.txt.", "notes.txt"),
        Case("", "download"),
        Case("\u{3000}\u{A0}", "download"),
        Case("CON", "_CON"),
        Case("CON.txt", "_CON.txt"),
        Case("con.tar.gz", "_con.tar.gz"),
        Case("Nul .txt", "_Nul .txt"),
        Case("COM1", "_COM1"),
        Case("lpt9.log", "_lpt9.log"),
        Case("COM\u{B9}.txt", "_COM\u{B9}.txt"),
        Case("CONOUT$", "_CONOUT$"),
        Case("CONSOLE.txt", "CONSOLE.txt"),
        Case("COM10", "COM10"),
        Case("my.CON", "my.CON"),
        Case("e\u{301}te\u{301}.txt", "\u{E9}t\u{E9}.txt"),
        Case("Å.txt", "\u{C5}.txt"),
        Case("€ rates.txt", "€ rates.txt"),
        Case(String(repeating: "a", count: 300) + ".txt", String(repeating: "a", count: 251) + ".txt"),
        Case(String(repeating: "a", count: 300), String(repeating: "a", count: 255)),
        Case(String(repeating: "😀", count: 300), String(repeating: "😀", count: 63)),
        Case(String(repeating: "é", count: 300) + ".jpeg", String(repeating: "é", count: 125) + ".jpeg"),
        Case(String(repeating: family, count: 20) + ".png", String(repeating: family, count: 10) + ".png"),
        Case(String(repeating: "a", count: 260) + ".this extension has spaces", String(repeating: "a", count: 255)),
        Case(
            String(repeating: "a", count: 250) + "." + String(repeating: "b", count: 40),
            String(repeating: "a", count: 250) + "." + String(repeating: "b", count: 4)
        ),
        Case(
            String(repeating: "a", count: 250) + "     " + String(repeating: "b", count: 10) + ".txt",
            String(repeating: "a", count: 250) + ".txt"
        ),
        Case("x" + String(repeating: "\u{301}", count: 200), "x" + String(repeating: "\u{301}", count: 127)),
    ]

    @Test(arguments: hostileNames)
    func hostileNamesAreSanitisedExactly(_ testCase: Case) {
        let name = DownloadFilename.sanitized(testCase.suggestion)
        #expect(Array(name.unicodeScalars) == Array(testCase.expected.unicodeScalars))
        Self.expectSafe(name)
        #expect(Array(DownloadFilename.sanitized(name).unicodeScalars) == Array(name.unicodeScalars), "idempotent")
    }

    static let suggestions: [(String?, String?, String)] = [
        ("attachment; filename*=UTF-8''%E2%82%AC%20rates.txt", nil, "€ rates.txt"),
        ("attachment; filename*=iso-8859-1'en'%A3%20rates.txt", nil, "£ rates.txt"),
        ("attachment; filename=\"EURO rates.txt\"; filename*=utf-8''%e2%82%ac%20rates.txt", nil, "€ rates.txt"),
        ("attachment; filename*=utf-8''%e2%82%ac%20rates.txt; filename=\"EURO rates.txt\"", nil, "€ rates.txt"),
        ("attachment; filename*=UTF-8''%FF.txt; filename=\"plain.txt\"", nil, "plain.txt"),
        ("attachment; filename*=UTF-8''...; filename=\"plain.txt\"", nil, "plain.txt"),
        ("attachment; filename=my report.pdf", nil, "my report.pdf"),
        ("attachment; filename=\"../../etc/passwd\"", nil, "_.._etc_passwd"),
        ("attachment; filename*=UTF-8''..%2F..%2Fetc%2Fpasswd", nil, "_.._etc_passwd"),
        ("attachment; filename=\"%2e%2e%2f\"", nil, "%2e%2e%2f"),
        ("attachment; filename=\"...\"", "https://x/a/b.pdf", "b.pdf"),
        ("attachment", "https://x/a/b.pdf", "b.pdf"),
        ("garbage garbage", "https://x/a/b.pdf", "b.pdf"),
        ("inline; filename=\"CON\"", "https://x/a/b.pdf", "_CON"),
        (nil, "https://x/a/report%20final.pdf?x=1", "report final.pdf"),
        (nil, "https://x/a/report%20final.pdf#section", "report final.pdf"),
        (nil, "https://x/", "download"),
        (nil, "https://x", "download"),
        (nil, "https://x/a/", "download"),
        (nil, "https://x/a/%2e%2e%2fetc", "_etc"),
        (nil, "https://x/a/%252e%252e", "%2e%2e"),
        (nil, "https://x/a/100%25.txt", "100%.txt"),
        (nil, "https://x/a/%E2%82%AC.txt", "€.txt"),
        (nil, "https://x/a/%FF.txt", "%FF.txt"),
        (nil, "https://x/a/.htaccess", "htaccess"),
        (nil, "file:///tmp/archive.tar.gz", "archive.tar.gz"),
        (nil, nil, "download"),
    ]

    @Test(arguments: suggestions)
    func suggestedNamesComeFromTheHeaderThenTheURL(_ header: String?, _ url: String?, _ expected: String) throws {
        let url = try url.map { try #require(URL(string: $0)) }
        let name = DownloadFilename.suggested(contentDisposition: header, url: url)
        #expect(Array(name.unicodeScalars) == Array(expected.unicodeScalars))
        Self.expectSafe(name)
    }

    @Test(arguments: hostileNames.map(\.suggestion) + ["a/../../b", "../", "/etc/passwd", "~/.ssh/id_rsa", "C:\\x"])
    func destinationsStayInsideTheDirectory(_ suggestion: String) {
        let directory = URL(fileURLWithPath: "/tmp/kite-downloads/../kite-downloads/", isDirectory: true)
        let destination = DownloadFilename.destinationURL(in: directory, suggestedName: suggestion)
        #expect(destination.deletingLastPathComponent().standardizedFileURL.path == "/tmp/kite-downloads")
        #expect(destination.path == "/tmp/kite-downloads/" + DownloadFilename.sanitized(suggestion))
        #expect(destination.standardizedFileURL.path == destination.path)
    }

    @Test func randomNamesAreAlwaysSafe() async {
        var random = SplitMix64(seed: 2024)
        let alphabet: [Unicode.Scalar] = [
            ".", ".", "/", "\\", " ", "a", "C", "O", "N", "%", "2", "e", "f", "\u{0}", "\r", "\n", "\u{301}", "é",
            "😀", "\u{200D}", "\u{202E}", "\u{3000}", "\u{FEFF}", ":",
        ]
        for iteration in 0..<3000 {
            await yieldNowAndThen(iteration)
            let length = Int(random.next() % 320)
            var scalars = String.UnicodeScalarView()
            for _ in 0..<length {
                scalars.append(alphabet[Int(random.next() % UInt64(alphabet.count))])
            }
            let suggestion = String(scalars)
            let name = DownloadFilename.sanitized(suggestion)
            Self.expectSafe(name, suggestion)
            #expect(DownloadFilename.sanitized(name).utf8.elementsEqual(name.utf8), "\(suggestion.debugDescription)")
        }
    }

    /// The promises of `sanitized(_:)`, on bytes and scalars, not on `String` equality that ignores normalisation.
    static func expectSafe(_ name: String, _ input: String = "", sourceLocation: SourceLocation = #_sourceLocation) {
        let bytes = Array(name.utf8)
        #expect(!bytes.isEmpty, "\(input.debugDescription)", sourceLocation: sourceLocation)
        #expect(bytes.count <= 255, "\(input.debugDescription)", sourceLocation: sourceLocation)
        #expect(!bytes.contains(UInt8(ascii: "/")), "\(input.debugDescription)", sourceLocation: sourceLocation)
        #expect(!bytes.contains(UInt8(ascii: "\\")), "\(input.debugDescription)", sourceLocation: sourceLocation)
        #expect(!bytes.contains(0), "\(input.debugDescription)", sourceLocation: sourceLocation)
        #expect(bytes.first != UInt8(ascii: "."), "\(input.debugDescription)", sourceLocation: sourceLocation)
        #expect(
            !name.unicodeScalars.contains { $0.properties.generalCategory == .control },
            "\(input.debugDescription)",
            sourceLocation: sourceLocation
        )
        #expect(
            name.unicodeScalars.elementsEqual(name.precomposedStringWithCanonicalMapping.unicodeScalars),
            "\(input.debugDescription)",
            sourceLocation: sourceLocation
        )
    }
}
