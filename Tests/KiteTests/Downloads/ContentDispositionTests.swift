import Foundation
import Kite
import Testing

@Suite struct ContentDispositionTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let header: String
        let type: ContentDisposition.DispositionType?
        let filename: String?

        init(_ header: String, _ type: ContentDisposition.DispositionType?, _ filename: String?) {
            self.header = header
            self.type = type
            self.filename = filename
        }

        var testDescription: String { self.header }
    }

    /// Mostly the cases of the tc2231 test suite for RFC 6266, with the tolerant answers Kite gives.
    static let cases: [Case] = [
        Case("inline", .inline, nil),
        Case("INLINE", .inline, nil),
        Case("inline; filename=\"foo.html\"", .inline, "foo.html"),
        Case("attachment", .attachment, nil),
        Case("ATTACHMENT", .attachment, nil),
        Case("form-data; name=\"field\"", .other("form-data"), nil),
        Case("X-Custom", .other("x-custom"), nil),
        Case("attachment; filename=\"foo.html\"", .attachment, "foo.html"),
        Case("attachment; filename=\"f\\oo.html\"", .attachment, "foo.html"),
        Case("attachment; filename=\"\\\"quoting\\\" tested.html\"", .attachment, "\"quoting\" tested.html"),
        Case("attachment; filename=\"back\\\\slash.html\"", .attachment, "back\\slash.html"),
        Case("attachment; filename=\"Here's a semicolon;.html\"", .attachment, "Here's a semicolon;.html"),
        Case("attachment; foo=\"bar\"; filename=\"foo.html\"", .attachment, "foo.html"),
        Case("attachment; foo=\"\\\"\\\\\";filename=\"foo.html\"", .attachment, "foo.html"),
        Case("attachment; example=\"filename=example.txt\"", .attachment, nil),
        Case("attachment; FILENAME=\"foo.html\"", .attachment, "foo.html"),
        Case("attachment; filename=foo.html", .attachment, "foo.html"),
        Case("attachment; filename=foo.html ;", .attachment, "foo.html"),
        Case("attachment; ;filename=foo", .attachment, "foo"),
        Case("attachment;;; filename=foo;;", .attachment, "foo"),
        Case("  attachment  ;  filename  =  \"foo.html\"  ", .attachment, "foo.html"),
        Case("attachment; filename=my report final.pdf", .attachment, "my report final.pdf"),
        Case("attachment; filename=foo,bar.html", .attachment, "foo,bar.html"),
        Case("attachment; filename='foo.bar'", .attachment, "'foo.bar'"),
        Case("attachment; filename=\"foo-ä.html\"", .attachment, "foo-ä.html"),
        Case("attachment; filename=\"foo-%41.html\"", .attachment, "foo-%41.html"),
        Case("attachment; filename=\"50%.html\"", .attachment, "50%.html"),
        Case("attachment; name=\"foo-%41.html\"", .attachment, nil),
        Case("attachment; filename=\"foo.html\".txt", .attachment, "foo.html"),
        Case("attachment; filename=\"bar", .attachment, "bar"),
        Case("attachment; filename=\"foo.html\"; filename=\"bar.html\"", .attachment, "foo.html"),
        Case("attachment; filename", .attachment, nil),
        Case("attachment; filename=", .attachment, ""),
        Case("inline; attachment; filename=foo.html", .inline, "foo.html"),
        Case("filename=foo.html", .inline, "foo.html"),
        Case("; filename=foo.html", .inline, "foo.html"),
        // filename*: RFC 8187 ext-value.
        Case("attachment; filename*=UTF-8''%E2%82%AC%20rates.txt", .attachment, "€ rates.txt"),
        Case("attachment; filename*=utf-8''foo-%c3%a4-%e2%82%ac.html", .attachment, "foo-ä-€.html"),
        Case("attachment; filename*=iso-8859-1'en'%A3%20rates.txt", .attachment, "£ rates.txt"),
        Case("attachment; filename*=ISO-8859-1''foo-%E4.html", .attachment, "foo-ä.html"),
        Case("attachment; filename*=UTF-8'de-DE'foo.html", .attachment, "foo.html"),
        Case("attachment; filename*=UTF-8''A-%2541.html", .attachment, "A-%41.html"),
        Case("attachment; filename*= UTF-8''foo-%c3%a4.html", .attachment, "foo-ä.html"),
        Case("attachment; filename* =UTF-8''foo-%c3%a4.html", .attachment, "foo-ä.html"),
        Case("attachment; filename*=\"UTF-8''foo-%c3%a4.html\"", .attachment, "foo-ä.html"),
        Case("attachment; filename*=UTF-8''foo bar.html", .attachment, "foo bar.html"),
        Case("attachment; filename*=''foo-%c3%a4.html", .attachment, nil),
        Case("attachment; filename*=\"foo%20bar.html\"", .attachment, nil),
        Case("attachment; filename*=UTF-8'foo-%c3%a4.html", .attachment, nil),
        Case("attachment; filename*=UTF-8''foo-%E4.html", .attachment, nil),
        Case("attachment; filename*=UTF-8''foo%", .attachment, nil),
        Case("attachment; filename*=UTF-8''foo%g0", .attachment, nil),
        Case("attachment; filename*=Shift_JIS''foo.html", .attachment, nil),
        Case("attachment; filename*0=\"foo.\"; filename*1=\"html\"", .attachment, nil),
        // filename* wins over filename when it is valid, in either order.
        Case(
            "attachment; filename=\"EURO rates.txt\"; filename*=utf-8''%e2%82%ac%20rates.txt",
            .attachment,
            "€ rates.txt"
        ),
        Case("attachment; filename*=UTF-8''foo-%c3%a4.html; filename=\"foo-ae.html\"", .attachment, "foo-ä.html"),
        Case("attachment; filename*=UTF-8''foo-%E4.html; filename=\"foo-ae.html\"", .attachment, "foo-ae.html"),
        Case(
            "attachment; filename*0*=ISO-8859-15''euro-sign%3d%a4; filename*=ISO-8859-1''currency-sign%3d%a4",
            .attachment,
            "currency-sign=¤"
        ),
        // Garbage.
        Case("", nil, nil),
        Case("   ", nil, nil),
        Case(";", nil, nil),
        Case("\"inline\"", nil, nil),
        Case("=", nil, nil),
        Case("attachment garbage", nil, nil),
        Case("\u{0}\u{1}\r\n", nil, nil),
    ]

    @Test(arguments: cases)
    func headersParse(_ testCase: Case) {
        let disposition = ContentDisposition(testCase.header)
        #expect(disposition?.type == testCase.type)
        #expect(disposition?.filename == testCase.filename)
        if testCase.type == nil {
            #expect(disposition == nil)
        }
    }

    @Test func parametersAreKeptByLowercaseName() throws {
        let disposition = try #require(
            ContentDisposition("form-data; Name=\"field\"; FILENAME=a.txt; filename*=UTF-8''b%20c.txt; x*=bad")
        )
        #expect(
            disposition
                == ContentDisposition(
                    type: .other("form-data"),
                    parameters: ["name": "field", "filename": "a.txt", "filename*": "b c.txt"]
                )
        )
    }

    @Test func parsingNeverCrashesOnRandomHeaders() {
        var random = SplitMix64(seed: 0x4B49_5445)
        let alphabet = Array("attachment; inline filename*=\"\\'%UTF-8E2ab \t,=;;\"\u{0}\r\n€😀")
        for _ in 0..<2000 {
            let length = Int(random.next() % 40)
            let header = String((0..<length).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] })
            let disposition = ContentDisposition(header)
            if let filename = disposition?.filename {
                let name = DownloadFilename.sanitized(filename)
                #expect(!name.isEmpty && !name.contains("/") && !name.hasPrefix("."), "\(header.debugDescription)")
            }
        }
    }
}

/// A small deterministic pseudo-random generator, so generated tests fail the same way every time.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        self.state = seed
    }

    mutating func next() -> UInt64 {
        self.state &+= 0x9E37_79B9_7F4A_7C15
        var z = self.state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
