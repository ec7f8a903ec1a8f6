#if canImport(FoundationXML)
import Foundation
import FoundationXML
import HTTPTypes

/// Accepts an XML response and delivers its body as an ``XMLParserSource``, from which each caller makes its
/// own `XMLParser` or runs one with a delegate: AFNetworking's `AFXMLParserResponseSerializer`.
///
/// `XMLParser` is not `Sendable`, so the serializer does not parse: it checks the response's status and
/// `Content-Type` (``acceptance``, AFNetworking's by default) and whether an empty body is allowed.
/// `DataRequest`'s ``DataRequest/responseXMLParser(queue:acceptance:delegate:completionHandler:)`` runs your
/// delegate over the body; ``DataRequest/serializingXMLParser(acceptance:automaticallyCancelling:)`` gives
/// you a parser.
///
/// ```swift
/// let source = try await session.request("http://127.0.0.1:8080/xml")
///     .serializingResponse(using: XMLParserResponseSerializer())
///     .value
/// try source.parse(delegate: Titles())
/// ```
public struct XMLParserResponseSerializer: ResponseAcceptingSerializer, ResponseSerializer {
    /// Which responses are accepted; ``ResponseAcceptance/xml`` (`application/xml`, `text/xml`, `200..<300`)
    /// by default.
    public var acceptance: ResponseAcceptance
    public let emptyResponseCodes: Set<Int>
    public let emptyRequestMethods: Set<HTTPRequest.Method>

    /// Creates the serializer.
    ///
    /// ```swift
    /// let serializer = XMLParserResponseSerializer(acceptance: .any)
    /// ```
    ///
    /// - Parameters:
    ///   - acceptance: Which responses are accepted; AFNetworking's XML types and `200..<300` by default.
    ///   - emptyResponseCodes: Status codes whose empty body gives an empty source.
    ///   - emptyRequestMethods: Methods whose empty body gives an empty source.
    public init(
        acceptance: ResponseAcceptance = .xml,
        emptyResponseCodes: Set<Int> = Self.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPRequest.Method> = Self.defaultEmptyRequestMethods
    ) {
        self.acceptance = acceptance
        self.emptyResponseCodes = emptyResponseCodes
        self.emptyRequestMethods = emptyRequestMethods
    }

    public func serialize(
        request: HTTPRequest?,
        response: HTTPResponse?,
        data: Data?,
        error: KiteError?
    ) throws -> XMLParserSource {
        let body = try self.content(
            request: request,
            response: response,
            data: data,
            error: error,
            acceptance: self.acceptance,
            producing: "XMLParser"
        )
        return XMLParserSource(data: body ?? Data())
    }
}
#endif
