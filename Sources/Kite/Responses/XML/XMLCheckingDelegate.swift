#if canImport(FoundationXML)
import Foundation
import FoundationXML

/// The delegate of Kite's checking parser: forwards every event to the caller's delegate (if any), stops
/// the parse at the first error that is not a warning and keeps where it happened, and, when asked, builds
/// the `XMLDocument` at the end of a well-formed parse (see ``XMLSafety``).
///
/// Used by one parse on one thread, and dropped after it.
final class XMLCheckingDelegate: XMLParserDelegate {
    /// The caller's delegate, held strongly for the parse (`XMLParser` holds its delegate weakly).
    private let target: (any XMLParserDelegate)?
    /// Set to build a document from this data, with these options, at the end of a well-formed parse.
    var documentInput: (data: Data, options: XMLNode.Options)?
    private(set) var document: XMLDocument?
    private(set) var documentError: (any Error)?
    private(set) var failure: XMLParseFailure?
    private(set) var sawElement = false

    init(forwardingTo target: (any XMLParserDelegate)?) {
        self.target = target
    }

    func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
        self.target?.parser(parser, parseErrorOccurred: parseError)
        let code = (parseError as NSError).code
        guard self.failure == nil, !XMLParseFailure.isWarning(code) else { return }
        self.failure = XMLParseFailure(
            code: code,
            line: parser.lineNumber,
            column: parser.columnNumber,
            sawElement: self.sawElement,
            underlying: parseError
        )
        parser.abortParsing()
    }

    func parserDidEndDocument(_ parser: XMLParser) {
        self.target?.parserDidEndDocument(parser)
        guard self.failure == nil, let input = self.documentInput else { return }
        // Inside `parse()`: this parser, which refuses every external load, is the one libxml2's loader asks.
        do {
            self.document = try XMLDocument(data: input.data, options: input.options)
        } catch {
            self.documentError = error
        }
    }

    func parser(
        _ parser: XMLParser,
        didStartElement elementName: String,
        namespaceURI: String?,
        qualifiedName qName: String?,
        attributes attributeDict: [String: String]
    ) {
        self.sawElement = true
        self.target?.parser(
            parser,
            didStartElement: elementName,
            namespaceURI: namespaceURI,
            qualifiedName: qName,
            attributes: attributeDict
        )
    }

    func parserDidStartDocument(_ parser: XMLParser) {
        self.target?.parserDidStartDocument(parser)
    }

    func parser(
        _ parser: XMLParser,
        foundNotationDeclarationWithName name: String,
        publicID: String?,
        systemID: String?
    ) {
        self.target?.parser(parser, foundNotationDeclarationWithName: name, publicID: publicID, systemID: systemID)
    }

    func parser(
        _ parser: XMLParser,
        foundUnparsedEntityDeclarationWithName name: String,
        publicID: String?,
        systemID: String?,
        notationName: String?
    ) {
        self.target?.parser(
            parser,
            foundUnparsedEntityDeclarationWithName: name,
            publicID: publicID,
            systemID: systemID,
            notationName: notationName
        )
    }

    func parser(
        _ parser: XMLParser,
        foundAttributeDeclarationWithName attributeName: String,
        forElement elementName: String,
        type: String?,
        defaultValue: String?
    ) {
        self.target?.parser(
            parser,
            foundAttributeDeclarationWithName: attributeName,
            forElement: elementName,
            type: type,
            defaultValue: defaultValue
        )
    }

    func parser(_ parser: XMLParser, foundElementDeclarationWithName elementName: String, model: String) {
        self.target?.parser(parser, foundElementDeclarationWithName: elementName, model: model)
    }

    func parser(_ parser: XMLParser, foundInternalEntityDeclarationWithName name: String, value: String?) {
        self.target?.parser(parser, foundInternalEntityDeclarationWithName: name, value: value)
    }

    func parser(
        _ parser: XMLParser,
        foundExternalEntityDeclarationWithName name: String,
        publicID: String?,
        systemID: String?
    ) {
        self.target?.parser(
            parser,
            foundExternalEntityDeclarationWithName: name,
            publicID: publicID,
            systemID: systemID
        )
    }

    func parser(
        _ parser: XMLParser,
        didEndElement elementName: String,
        namespaceURI: String?,
        qualifiedName qName: String?
    ) {
        self.target?.parser(parser, didEndElement: elementName, namespaceURI: namespaceURI, qualifiedName: qName)
    }

    func parser(_ parser: XMLParser, didStartMappingPrefix prefix: String, toURI namespaceURI: String) {
        self.target?.parser(parser, didStartMappingPrefix: prefix, toURI: namespaceURI)
    }

    func parser(_ parser: XMLParser, didEndMappingPrefix prefix: String) {
        self.target?.parser(parser, didEndMappingPrefix: prefix)
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        self.target?.parser(parser, foundCharacters: string)
    }

    func parser(_ parser: XMLParser, foundIgnorableWhitespace whitespaceString: String) {
        self.target?.parser(parser, foundIgnorableWhitespace: whitespaceString)
    }

    func parser(_ parser: XMLParser, foundProcessingInstructionWithTarget target: String, data: String?) {
        self.target?.parser(parser, foundProcessingInstructionWithTarget: target, data: data)
    }

    func parser(_ parser: XMLParser, foundComment comment: String) {
        self.target?.parser(parser, foundComment: comment)
    }

    func parser(_ parser: XMLParser, foundCDATA CDATABlock: Data) {
        self.target?.parser(parser, foundCDATA: CDATABlock)
    }

    func parser(_ parser: XMLParser, resolveExternalEntityName name: String, systemID: String?) -> Data? {
        self.target?.parser(parser, resolveExternalEntityName: name, systemID: systemID)
    }

    func parser(_ parser: XMLParser, validationErrorOccurred validationError: any Error) {
        self.target?.parser(parser, validationErrorOccurred: validationError)
    }
}
#endif
