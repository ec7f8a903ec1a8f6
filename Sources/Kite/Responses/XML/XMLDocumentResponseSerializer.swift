#if canImport(FoundationXML)
import Foundation
import FoundationXML
import HTTPTypes

/// Accepts an XML response and delivers its body as an ``XMLDocumentSource``, from which each caller makes
/// its own `XMLDocument`: AFNetworking's `AFXMLDocumentResponseSerializer`.
///
/// `XMLDocument` is not `Sendable`, so the serializer does not parse: it checks the response's status and
/// `Content-Type` (``acceptance``, AFNetworking's by default) and whether an empty body is allowed, and the
/// document is parsed once, where it is used, by ``XMLDocumentSource/makeDocument()``. `DataRequest`'s
/// ``DataRequest/serializingXMLDocument(options:acceptance:automaticallyCancelling:)`` and
/// ``DataRequest/responseXMLDocument(queue:options:acceptance:completionHandler:)`` do that for you.
///
/// External entities and DTDs are never loaded, whatever ``options`` say: see ``XMLDocumentSource``.
///
/// ```swift
/// let source = try await session.request("http://127.0.0.1:8080/xml")
///     .serializingResponse(using: XMLDocumentResponseSerializer())
///     .value
/// let document = try source.makeDocument()
/// print(document.rootElement()?.name ?? "")  // slideshow
/// ```
public struct XMLDocumentResponseSerializer: ResponseAcceptingSerializer, ResponseSerializer {
    /// Which responses are accepted; ``ResponseAcceptance/xml`` (`application/xml`, `text/xml`, `200..<300`)
    /// by default.
    public var acceptance: ResponseAcceptance
    /// The options the document is parsed with: AFNetworking's `options`. Kite removes
    /// `.nodeLoadExternalEntitiesAlways` and `.nodeLoadExternalEntitiesSameOriginOnly` and adds
    /// `.nodeLoadExternalEntitiesNever`; `.documentValidate` is refused with `responseSerializationFailed`,
    /// because validating would load the external DTD the body names.
    public var options: XMLNode.Options
    public let emptyResponseCodes: Set<Int>
    public let emptyRequestMethods: Set<HTTPRequest.Method>

    /// Creates the serializer.
    ///
    /// ```swift
    /// let serializer = XMLDocumentResponseSerializer(options: .nodePreserveWhitespace)
    /// ```
    ///
    /// - Parameters:
    ///   - acceptance: Which responses are accepted; AFNetworking's XML types and `200..<300` by default.
    ///   - options: The options the document is parsed with (never loading external entities).
    ///   - emptyResponseCodes: Status codes whose empty body gives an empty source.
    ///   - emptyRequestMethods: Methods whose empty body gives an empty source.
    public init(
        acceptance: ResponseAcceptance = .xml,
        options: XMLNode.Options = [],
        emptyResponseCodes: Set<Int> = Self.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPRequest.Method> = Self.defaultEmptyRequestMethods
    ) {
        self.acceptance = acceptance
        self.options = options
        self.emptyResponseCodes = emptyResponseCodes
        self.emptyRequestMethods = emptyRequestMethods
    }

    public func serialize(
        request: HTTPRequest?,
        response: HTTPResponse?,
        data: Data?,
        error: KiteError?
    ) throws -> XMLDocumentSource {
        let body = try self.content(
            request: request,
            response: response,
            data: data,
            error: error,
            acceptance: self.acceptance,
            producing: "XMLDocument"
        )
        if let refusal = XMLSafety.refusal(of: self.options) { throw refusal }
        return XMLDocumentSource(data: body ?? Data(), options: self.options)
    }
}
#endif
