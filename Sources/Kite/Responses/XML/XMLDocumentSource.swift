#if canImport(FoundationXML)
import Foundation
import FoundationXML

/// An XML body that makes a fresh `XMLDocument` each time it is asked: the `Sendable` value of
/// ``XMLDocumentResponseSerializer``.
///
/// `XMLDocument` is not `Sendable`, so Kite hands this value across threads and each caller parses where it
/// uses the document.
///
/// Parsing is XXE-safe whatever ``options`` say: external entities (`<!ENTITY x SYSTEM "file:///…">`,
/// `http` ones, external parameter entities) and external DTDs are never loaded. A reference to an external
/// entity stays an unexpanded reference (its text is empty), and so does a reference to an entity declared
/// in the body's internal DTD subset: `stringValue` includes that entity's text, but elements inside it are
/// not children in the tree. Before building the tree Kite checks that the body is well-formed, because
/// corelibs' `XMLDocument(data:)` recovers silently from malformed input (and crashes on an empty one): the
/// first error is reported with its line and column.
///
/// Do not call `validate()` on a document from the network: it loads the external DTD the body names.
///
/// ```swift
/// let source = XMLDocumentSource(data: Data("<r a=\"1\">text</r>".utf8))
/// let root = try source.makeDocument().rootElement()
/// print(root?.attribute(forName: "a")?.stringValue ?? "", root?.stringValue ?? "")  // 1 text
/// ```
public struct XMLDocumentSource: Sendable {
    /// The body.
    public let data: Data
    /// The options the document is parsed with; the ones that load external entities are ignored.
    public let options: XMLNode.Options

    /// Creates a source.
    ///
    /// ```swift
    /// let source = XMLDocumentSource(data: Data("<r/>".utf8), options: .nodePreserveWhitespace)
    /// ```
    ///
    /// - Parameters:
    ///   - data: The XML body.
    ///   - options: The options the document is parsed with.
    public init(data: Data, options: XMLNode.Options = []) {
        self.data = data
        self.options = options
    }

    /// Parses the body into a new document; an empty body gives a document without a root element.
    ///
    /// ```swift
    /// let document = try XMLDocumentSource(data: Data("<r><a/></r>".utf8)).makeDocument()
    /// print(document.rootElement()?.childCount ?? 0)  // 1
    /// ```
    ///
    /// - Returns: The document, owned by the caller.
    /// - Throws: ``KiteError`` `responseSerializationFailed` when the body is not well-formed XML (the message
    ///   names the reason, the line and the column, such as `the body is not well-formed XML: opening and
    ///   ending tag mismatch at line 2, column 15`) or when ``options`` contain `.documentValidate`.
    public func makeDocument() throws(KiteError) -> XMLDocument {
        if let refusal = XMLSafety.refusal(of: self.options) { throw refusal }
        guard !self.data.isEmpty else { return XMLDocument(rootElement: nil) }
        return try XMLSafety.document(from: self.data, options: self.options)
    }
}

extension XMLDocumentSource: ResponseObjectConvertible {
    /// A new `XMLDocument` for the body, as AFNetworking's `AFXMLDocumentResponseSerializer` gives; `nil` for
    /// an empty body.
    ///
    /// ```swift
    /// let object = try XMLDocumentSource(data: Data("<r/>".utf8)).responseObject()
    /// print((object as? XMLDocument)?.rootElement()?.name ?? "")  // r
    /// ```
    ///
    /// - Returns: The document, or `nil` for an empty body.
    /// - Throws: ``KiteError`` when the body is not well-formed XML.
    public func responseObject() throws(KiteError) -> Any? {
        self.data.isEmpty ? nil : try self.makeDocument()
    }
}
#endif
