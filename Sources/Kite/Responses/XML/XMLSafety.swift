#if canImport(FoundationXML)
import Foundation
import FoundationXML

/// How Kite reads XML from the network without loading anything the body names (XXE, external DTDs).
///
/// Measured with corelibs Foundation on libxml2 2.9.14:
/// - `XMLDocument(data:options: [])` substitutes entities (`XML_PARSE_NOENT`), so a
///   `<!ENTITY x SYSTEM "file:///…">` is read from disk and `SYSTEM "http://…"` is fetched; so are external
///   parameter entities. `.nodeLoadExternalEntitiesAlways` also loads the external DTD, and `validate()`
///   (`.documentValidate`) fetches it too. Only `.nodeLoadExternalEntitiesNever` loads nothing.
/// - `XMLParser` never loads a file entity, but with `externalEntityResolvingPolicy = .always` it fetches
///   `http` entities even when `shouldResolveExternalEntities` is `false`; with `.never` it loads nothing.
/// - libxml2's global entity loader asks the thread's current `XMLParser` (the one inside `parse()`) for its
///   policy, and loads with libxml2's default loader when there is none, as during `XMLDocument(data:)`.
///
/// So Kite (1) parses documents with `.nodeLoadExternalEntitiesNever` and without the loading options, and
/// (2) builds the document from inside a checking `XMLParser`'s `parserDidEndDocument`, where that parser,
/// configured by ``secure(_:)``, is the current one and refuses every load. Either measure alone stops the
/// loads this machine's tests try; together they do not depend on one library detail.
enum XMLSafety {
    /// The options Kite parses a document with: the caller's, without `.nodeLoadExternalEntitiesAlways` and
    /// `.nodeLoadExternalEntitiesSameOriginOnly`, with `.nodeLoadExternalEntitiesNever`.
    static func documentOptions(_ options: XMLNode.Options) -> XMLNode.Options {
        options.subtracting([.nodeLoadExternalEntitiesAlways, .nodeLoadExternalEntitiesSameOriginOnly])
            .union(.nodeLoadExternalEntitiesNever)
    }

    /// Why Kite will not parse with `options`, or `nil`: `.documentValidate` is refused, because validating
    /// loads the external DTD the body names and skipping the check silently would be worse.
    static func refusal(of options: XMLNode.Options) -> KiteError? {
        guard options.contains(.documentValidate) else { return nil }
        return KiteError(
            code: .responseSerializationFailed,
            message: "XMLNode.Options.documentValidate is not supported: validating would load the external DTD"
                + " that the body names; parse without it"
        )
    }

    /// `data` as corelibs' `XMLParser` can read it without crashing: in an encoding libxml2 reads itself
    /// (``XMLDeclaredEncoding``), with data for every processing instruction (``XMLProcessingInstructions``).
    ///
    /// - Throws: ``KiteError`` with code `responseSerializationFailed` for an encoding Kite does not read.
    static func readable(_ data: Data) throws(KiteError) -> Data {
        XMLProcessingInstructions.withEmptyData(try XMLDeclaredEncoding.readable(data))
    }

    /// Makes `parser` load no external entity or DTD.
    static func secure(_ parser: XMLParser) {
        parser.shouldResolveExternalEntities = false
        parser.externalEntityResolvingPolicy = .never
        parser.allowedExternalEntityURLs = nil
    }

    /// Runs a secured parser over `data` with `checker` as its delegate; throws at the first error that is
    /// not a warning (the parser is stopped there, though corelibs' parser would recover and go on).
    ///
    /// A delegate's own `abortParsing()` is not an error.
    static func run(_ data: Data, checker: XMLCheckingDelegate) throws(KiteError) {
        guard data.count >= 4 else { throw XMLParseFailure.tooShort(data.count) }
        try Self.parse(readable: try Self.readable(data), checker: checker)
    }

    /// ``run(_:checker:)`` over data ``readable(_:)`` has already made safe.
    private static func parse(readable data: Data, checker: XMLCheckingDelegate) throws(KiteError) {
        let parser = XMLParser(data: data)
        Self.secure(parser)
        parser.delegate = checker
        let finished = parser.parse()
        if let failure = checker.failure { throw failure.error }
        guard !finished, let error = parser.parserError else { return }
        let code = (error as NSError).code
        guard code != XMLParseFailure.userStop else { return }
        throw XMLParseFailure(
            code: code,
            line: parser.lineNumber,
            column: parser.columnNumber,
            sawElement: checker.sawElement,
            underlying: error
        )
        .error
    }

    /// The document for `data`, built safely; see ``XMLSafety``.
    static func document(from data: Data, options: XMLNode.Options) throws(KiteError) -> XMLDocument {
        let checker = XMLCheckingDelegate(forwardingTo: nil)
        guard data.count >= 4 else { throw XMLParseFailure.tooShort(data.count) }
        let readable = try Self.readable(data)
        checker.documentInput = (readable, Self.documentOptions(options))
        try Self.parse(readable: readable, checker: checker)
        if let error = checker.documentError {
            throw KiteError(
                code: .responseSerializationFailed,
                message: "the body could not be read as an XML document: \(error)",
                underlyingError: error
            )
        }
        guard let document = checker.document else {
            throw KiteError(
                code: .responseSerializationFailed,
                message: "the body is not well-formed XML: the parser stopped before the end of the document"
            )
        }
        return document
    }
}
#endif
