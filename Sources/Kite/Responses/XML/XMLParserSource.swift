#if canImport(FoundationXML)
import Foundation
import FoundationXML

/// An XML body that makes a fresh `XMLParser` each time it is asked, or runs one with your delegate: the
/// `Sendable` value of ``XMLParserResponseSerializer``.
///
/// Every parser it makes loads no external entity or DTD: `shouldResolveExternalEntities` is `false` and
/// `externalEntityResolvingPolicy` is `.never` (on Linux `.always` fetches `http` entities even when
/// `shouldResolveExternalEntities` is `false`). Do not change them for bodies from the network.
///
/// ```swift
/// final class Titles: XMLParserDelegate {
///     var titles: [String] = []
///     private var inTitle = false
///     func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?,
///                 qualifiedName: String?, attributes: [String: String]) { self.inTitle = name == "title" }
///     func parser(_ parser: XMLParser, foundCharacters string: String) { if self.inTitle { self.titles.append(string) } }
///     func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
///         self.inTitle = false
///     }
/// }
/// let titles = Titles()
/// try XMLParserSource(data: Data("<r><title>A</title><title>B</title></r>".utf8)).parse(delegate: titles)
/// print(titles.titles)  // ["A", "B"]
/// ```
public struct XMLParserSource: Sendable {
    /// The body.
    public let data: Data

    /// Creates a source.
    ///
    /// ```swift
    /// let source = XMLParserSource(data: Data("<r/>".utf8))
    /// ```
    ///
    /// - Parameter data: The XML body.
    public init(data: Data) {
        self.data = data
    }

    /// A new parser over the body that loads no external entity or DTD; set its delegate and call `parse()`.
    ///
    /// On Linux the parser recovers from errors and keeps delivering events after reporting one; call
    /// `abortParsing()` in `parser(_:parseErrorOccurred:)` to stop, or use ``parse(delegate:)``, which does.
    ///
    /// ```swift
    /// let parser = XMLParserSource(data: Data("<r/>".utf8)).makeParser()
    /// print(parser.shouldResolveExternalEntities)  // false
    /// ```
    ///
    /// The parser reads the body as ``parse(delegate:)`` does (Kite's checks of XML bodies): a body in an encoding Kite
    /// does not read gives a parser that fails at once; ``parse(delegate:)`` says why.
    ///
    /// - Returns: The parser, owned by the caller.
    public func makeParser() -> XMLParser {
        let parser = XMLParser(data: (try? XMLSafety.readable(self.data)) ?? Data("<></>".utf8))
        XMLSafety.secure(parser)
        return parser
    }

    /// Parses the body with `delegate`, on the calling thread, loading no external entity or DTD, and stops at
    /// the first error (as `XMLParser` does on Apple platforms). An empty body delivers no events.
    ///
    /// Warnings (such as a relative namespace URI) reach the delegate's `parser(_:parseErrorOccurred:)` and do
    /// not stop the parse. A delegate that calls `abortParsing()` ends the parse without an error.
    ///
    /// ```swift
    /// try XMLParserSource(data: Data("<r><title>A</title></r>".utf8)).parse(delegate: Titles())
    /// ```
    ///
    /// - Parameter delegate: Receives the events; held for the parse.
    /// - Throws: ``KiteError`` `responseSerializationFailed` naming the reason, the line and the column of the
    ///   first error, such as `the body is not well-formed XML: opening and ending tag mismatch at line 2,
    ///   column 15`.
    public func parse(delegate: some XMLParserDelegate) throws(KiteError) {
        guard !self.data.isEmpty else { return }
        try XMLSafety.run(self.data, checker: XMLCheckingDelegate(forwardingTo: delegate))
    }
}

extension XMLParserSource: ResponseObjectConvertible {
    /// A new parser over the body, as AFNetworking's `AFXMLParserResponseSerializer` gives (see
    /// ``makeParser()``); `nil` for an empty body.
    ///
    /// ```swift
    /// let parser = try XMLParserSource(data: Data("<r/>".utf8)).responseObject() as? XMLParser
    /// ```
    ///
    /// - Returns: The parser, or `nil` for an empty body.
    public func responseObject() -> Any? {
        self.data.isEmpty ? nil : self.makeParser()
    }
}
#endif
