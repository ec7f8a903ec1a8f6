#if canImport(FoundationXML)
import Foundation
import FoundationXML

/// Why a body is not well-formed XML, where the parser stopped, and the sentence Kite reports.
///
/// On Linux `XMLParser` reports only a libxml2 error code (its `NSError` has no description), so the reason
/// comes from ``reasons``; the line and column are the parser's `lineNumber` and `columnNumber` when it
/// reported the error (both 1-based: the column is where libxml2 stopped reading).
struct XMLParseFailure {
    /// The libxml2 error code, the same as `XMLParser.ErrorCode`'s raw value.
    let code: Int
    let line: Int
    let column: Int
    /// Whether an element had started before the error.
    let sawElement: Bool
    /// The parser's error.
    let underlying: (any Error)?

    /// `the body is not well-formed XML: opening and ending tag mismatch at line 2, column 15`.
    var error: KiteError {
        KiteError(
            code: .responseSerializationFailed,
            message: "the body is not well-formed XML: \(self.reason) at line \(self.line), column \(self.column)",
            underlyingError: self.underlying
        )
    }

    private var reason: String {
        // libxml2 reports a body with no element at all, such as whitespace, as content after the end.
        if !self.sawElement, self.code == 4 || self.code == 5 { return "the document has no root element" }
        return Self.reasons[self.code] ?? "XML parser error \(self.code)"
    }

    /// A body too short to hold an element: corelibs' `XMLParser` reports success for fewer than 4 bytes
    /// without reading them, so Kite refuses them itself.
    static func tooShort(_ count: Int) -> KiteError {
        KiteError(
            code: .responseSerializationFailed,
            message: "the body is not well-formed XML: \(count) bytes are too few for a root element"
                + " (the shortest document, <a/>, has 4)"
        )
    }

    /// Codes libxml2 reports as warnings (`XML_WAR_…`): the document is still well-formed, so parsing goes on.
    static func isWarning(_ code: Int) -> Bool {
        [27, 93, 97, 98, 99, 100, 102, 106, 107].contains(code)
    }

    /// `XML_ERR_USER_STOP`: a delegate called `abortParsing()`.
    static let userStop = 111

    /// libxml2's reasons (`xmlParserErrors`), reworded as phrases.
    private static let reasons: [Int: String] = [
        1: "internal parser error",
        2: "out of memory",
        3: "the document does not start with markup",
        4: "start tag expected, '<' not found",
        5: "extra content at the end of the document",
        6: "invalid hexadecimal character reference",
        7: "invalid decimal character reference",
        8: "invalid character reference",
        9: "invalid character or byte sequence for the document's encoding",
        10: "character reference at the end of the input",
        11: "character reference before the root element",
        12: "character reference after the root element",
        13: "character reference in the DTD",
        14: "entity reference at the end of the input",
        15: "entity reference before the root element",
        16: "entity reference after the root element",
        17: "entity reference in the DTD",
        18: "parameter entity reference at the end of the input",
        19: "parameter entity reference before the root element",
        20: "parameter entity reference after the root element",
        21: "parameter entity reference inside a declaration of the internal subset",
        22: "entity reference without a name",
        23: "entity reference without ';'",
        24: "parameter entity reference without a name",
        25: "parameter entity reference without ';'",
        26: "reference to an undeclared entity (external entities and DTDs are never loaded)",
        28: "reference to an unparsed entity",
        29: "an attribute references an external entity",
        30: "a parameter entity is referenced where it is not allowed",
        31: "unknown encoding",
        32: "unsupported encoding",
        33: "string not started (\" or ' expected)",
        34: "string not closed",
        35: "namespace declaration error",
        36: "entity value not started",
        37: "entity value not finished",
        38: "'<' in an attribute value",
        39: "attribute value not quoted (\" or ' expected)",
        40: "attribute value not finished",
        41: "attribute without a value",
        42: "attribute defined twice",
        43: "literal not started",
        44: "literal not finished",
        45: "comment not finished",
        46: "processing instruction not started",
        47: "processing instruction not finished",
        48: "notation declaration not started",
        49: "notation declaration not finished",
        50: "attribute-list declaration not started",
        51: "attribute-list declaration not finished",
        52: "mixed content declaration not started",
        53: "mixed content declaration not finished",
        54: "element content declaration not started",
        55: "element content declaration not finished",
        56: "XML declaration not started",
        57: "XML declaration not finished",
        58: "conditional section not started",
        59: "conditional section not finished",
        60: "external subset not finished",
        61: "DOCTYPE declaration not finished",
        62: "']]>' in content",
        63: "CDATA section not finished",
        64: "XML declaration allowed only at the start of the document",
        65: "space required",
        66: "separator required",
        67: "name token required",
        68: "name required",
        69: "#PCDATA required",
        70: "system literal (URI) required",
        71: "public identifier required",
        72: "'<' required",
        73: "'>' required",
        74: "'</' required",
        75: "'=' required",
        76: "opening and ending tag mismatch",
        77: "element not closed before the end of the input",
        78: "invalid standalone value",
        79: "invalid encoding name",
        80: "'--' inside a comment",
        81: "the bytes are not valid in the declared encoding",
        82: "external entity in a standalone document",
        83: "invalid conditional section",
        84: "value required",
        85: "content not well balanced",
        86: "extra content at the end of the document",
        87: "invalid character in an entity",
        88: "parameter entity reference inside the markup of the internal subset",
        89: "entity reference loop or excessive entity expansion",
        90: "entity crosses a markup boundary",
        91: "invalid URI",
        92: "URI with a fragment",
        94: "no DTD",
        95: "invalid conditional section keyword",
        96: "version missing in the XML declaration",
        101: "encoding missing in the text declaration",
        103: "the document is not standalone",
        104: "entity processing error",
        105: "notation processing error",
        108: "unknown XML version",
        109: "version mismatch",
        110: "name too long",
        111: "the parse was stopped",
        200: "misuse of the reserved xml namespace",
        201: "undefined namespace prefix",
        202: "invalid qualified name",
        203: "attribute defined twice with the same namespace",
    ]
}
#endif
