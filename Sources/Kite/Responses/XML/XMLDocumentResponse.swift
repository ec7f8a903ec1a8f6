#if canImport(FoundationXML)
import Foundation
import FoundationXML
import HTTPTypes

/// Everything an XML document request produced, with the document parsed on the queue that receives it:
/// the argument of ``DataRequest/responseXMLDocument(queue:options:acceptance:completionHandler:)``.
///
/// Its names are ``DataResponse``'s. It is not `Sendable`, because `XMLDocument` is not: use it on the queue
/// that received it.
///
/// ```swift
/// session.request("http://127.0.0.1:8080/xml").responseXMLDocument { response in
///     print(response.value?.rootElement()?.name ?? "", response.response?.status.code ?? 0)  // slideshow 200
/// }
/// ```
public struct XMLDocumentResponse {
    /// The request head as sent, with default headers; `nil` when it could not be built.
    public let request: HTTPRequest?
    /// The response head; `nil` when no response arrived.
    public let response: HTTPResponse?
    /// The URL that answered, after redirects.
    public let url: URL?
    /// The response body, kept even when the result is a failure.
    public let data: Data?
    /// The timeline and byte counts; the serialization time does not include parsing.
    public let metrics: ResponseMetrics?
    /// The document or the error.
    public let result: Result<XMLDocument, KiteError>

    /// Creates a response.
    ///
    /// ```swift
    /// let response = XMLDocumentResponse(
    ///     request: nil, response: nil, url: nil, data: nil, metrics: nil,
    ///     result: .success(XMLDocument(rootElement: XMLElement(name: "r")))
    /// )
    /// ```
    ///
    /// - Parameters:
    ///   - request: The request head as sent.
    ///   - response: The response head.
    ///   - url: The URL that answered.
    ///   - data: The body.
    ///   - metrics: The timeline.
    ///   - result: The result.
    public init(
        request: HTTPRequest?,
        response: HTTPResponse?,
        url: URL? = nil,
        data: Data?,
        metrics: ResponseMetrics?,
        result: Result<XMLDocument, KiteError>
    ) {
        self.request = request
        self.response = response
        self.url = url
        self.data = data
        self.metrics = metrics
        self.result = result
    }

    /// The serialized response with its source parsed into a document; errors name `summary`.
    init(_ serialized: DataResponse<XMLDocumentSource, KiteError>, summary: RequestSummary) {
        self.init(
            request: serialized.request,
            response: serialized.response,
            url: serialized.url,
            data: serialized.data,
            metrics: serialized.metrics,
            result: serialized.result.flatMap { $0.documentResult(naming: summary, response: serialized.response) }
        )
    }

    /// The document, if the result is a success.
    ///
    /// ```swift
    /// print(response.value?.rootElement()?.name ?? "")
    /// ```
    public var value: XMLDocument? {
        guard case .success(let value) = self.result else { return nil }
        return value
    }

    /// The error, if the result is a failure.
    ///
    /// ```swift
    /// print(response.error?.message ?? "")
    /// ```
    public var error: KiteError? {
        guard case .failure(let error) = self.result else { return nil }
        return error
    }
}

@available(*, unavailable, message: "XMLDocument is not Sendable: use the response on the queue that received it")
extension XMLDocumentResponse: Sendable {}

extension XMLDocumentSource {
    /// A new document, or the parse error naming the request and carrying the response head.
    func documentResult(naming summary: RequestSummary, response: HTTPResponse?) -> Result<XMLDocument, KiteError> {
        do {
            return .success(try self.makeDocument())
        } catch {
            return .failure(error.naming(summary).carrying(response))
        }
    }
}
#endif
