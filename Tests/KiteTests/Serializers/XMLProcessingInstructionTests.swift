#if canImport(FoundationXML)
import Foundation
import FoundationXML
import Testing

@testable import Kite

/// A processing instruction without data (`<?pi?>`) crashed the process in swift-corelibs-foundation's
/// `XMLParser` (it reads libxml2's null data pointer as a C string); found by the `xmlParser` fuzz target. Kite
/// gives each such instruction empty data first, which means the same.
@Suite struct XMLProcessingInstructionTests {
    @Test func instructionsWithoutDataGetEmptyDataAndNothingElseChanges() throws {
        let input =
            #"<?a?><!--<?b?>--><![CDATA[<?c?>]]><?d x?><??><!DOCTYPE r [<!ENTITY e "<?f?>">"#
            + #"<!ENTITY g '&#60;?h?&#62;&#38;'><!ENTITY i "&#169;<?j k?>">]><r t="?>"/>"#
        let expected =
            #"<?a ?><!--<?b?>--><![CDATA[<?c?>]]><?d x?><??><!DOCTYPE r [<!ENTITY e "<?f ?>">"#
            + #"<!ENTITY g '<?h ?>&#38;'><!ENTITY i "&#169;<?j k?>">]><r t="?>"/>"#
        let output = XMLProcessingInstructions.withEmptyData(Data(input.utf8))
        #expect(String(decoding: output, as: UTF8.self) == expected)
        let untouched = Data(#"<?xml version="1.0"?><r><!--<?x?>--><?y z?></r>"#.utf8)
        #expect(XMLProcessingInstructions.withEmptyData(untouched) == untouched)
    }

    @Test func theParserDeliversThemWithEmptyData() throws {
        let body =
            #"<?xml version="1.0"?><?pi?><!DOCTYPE r [<!ENTITY e "&#60;?ent?&#62;">]>"#
            + #"<r><?x?>&e;<!--<?c?>--><![CDATA[<?d?>]]></r>"#
        let recorder = InstructionRecorder()
        try XMLParserSource(data: Data(body.utf8)).parse(delegate: recorder)
        #expect(recorder.events == ["pi=", "x=", "ent=", "comment <?c?>", "cdata <?d?>"])

        let again = InstructionRecorder()
        let parser = XMLParserSource(data: Data("<r><?x?></r>".utf8)).makeParser()
        parser.delegate = again
        #expect(parser.parse())
        #expect(again.events == ["x="])
    }

    @Test func aDocumentHoldsThemWithEmptyData() throws {
        let document = try XMLDocumentSource(data: Data("<r><?x?><y/></r>".utf8)).makeDocument()
        let instruction = try #require(document.rootElement()?.children?.first)
        #expect(instruction.kind == .processingInstruction)
        #expect(instruction.name == "x")
        #expect(instruction.stringValue == "")
    }
}

/// libxml2's push parser crashed the process when bytes did not convert from an encoding it reads through iconv
/// (found by the `xmlDocument` fuzz target): Kite converts what Foundation reads to UTF-8 and refuses the rest.
@Suite struct XMLDeclaredEncodingTests {
    @Test func aShiftJISBodyIsReadAsUTF8() throws {
        var body = Data(#"<?xml version="1.0" encoding="Shift_JIS"?><r>"#.utf8)
        body.append(contentsOf: [0x82, 0xA0])
        body.append(contentsOf: "</r>".utf8)
        let document = try XMLDocumentSource(data: body).makeDocument()
        #expect(document.rootElement()?.stringValue == "\u{3042}")
        let readable = try XMLSafety.readable(body)
        #expect(String(decoding: readable, as: UTF8.self) == #"<?xml version="1.0" encoding="UTF-8"?><r>\#u{3042}</r>"#)
    }

    @Test(arguments: [
        (
            Data(#"<?xml version="1.0" encoding="Shift_JIS"?><r>"#.utf8) + [0xFF, 0xFE, 0x80] + Data("</r>".utf8),
            "the body is not valid Shift_JIS, the encoding its XML declaration names"
        ),
        (
            Data(#"<?xml version="1.0" encoding="UTF-32"?><r/>"#.utf8),
            #"the XML declares the encoding "UTF-32", which Kite does not read"#
        ),
        (
            Data(#"<?xml version="1.0" encoding="UTF-7"?"#.utf8) + [0, 0],
            #"the XML declares the encoding "UTF-7", which Kite does not read"#
        ),
        (
            Data([0, 0, 0, 0x3C, 0xFF, 0xFF, 0xFF, 0xFF]),
            "the body is XML in UCS-4 or EBCDIC, which Kite does not read"
        ),
    ])
    func anEncodingLibxml2CannotReadSafelyIsRefused(body: Data, message: String) throws {
        let error = try #require(throws: KiteError.self) { try XMLDocumentSource(data: body).makeDocument() }
        #expect(error.code == .responseSerializationFailed)
        #expect(error.message.hasPrefix(message), "\(error.message)")
        let parseError = try #require(throws: KiteError.self) {
            try XMLParserSource(data: body).parse(delegate: InstructionRecorder())
        }
        #expect(parseError.message.hasPrefix(message))
        #expect(XMLParserSource(data: body).makeParser().parse() == false)
    }
}

private final class InstructionRecorder: NSObject, XMLParserDelegate {
    var events: [String] = []

    func parser(_ parser: XMLParser, foundProcessingInstructionWithTarget target: String, data: String?) {
        self.events.append("\(target)=\(data ?? "nil")")
    }

    func parser(_ parser: XMLParser, foundComment comment: String) {
        self.events.append("comment \(comment)")
    }

    func parser(_ parser: XMLParser, foundCDATA CDATABlock: Data) {
        self.events.append("cdata \(String(decoding: CDATABlock, as: UTF8.self))")
    }
}
#endif
