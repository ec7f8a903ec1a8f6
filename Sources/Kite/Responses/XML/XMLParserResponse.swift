#if canImport(FoundationXML)
import Foundation
import FoundationXML
import HTTPTypes

/// Everything an event-driven XML request produced, with your delegate, which received the parse's events:
/// the argument of ``DataRequest/responseXMLParser(queue:acceptance:delegate:completionHandler:)``.
///
/// Its names are ``DataResponse``'s. It is not `Sendable` (the delegate need not be): use it on the queue
/// that received it.
///
/// ```swift
/// session.request("http://127.0.0.1:8080/xml").responseXMLParser(delegate: Titles()) { response in
///     print(response.delegate.titles, response.error as Any)
/// }
/// ```
public struct XMLParserResponse<Delegate: XMLParserDelegate> {
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
    /// Success when the body was parsed to its end (or until the delegate called `abortParsing()`), else
    /// why not: the request's error, an unaccepted response or the first XML error with its line and column.
    public let result: Result<Void, KiteError>
    /// The delegate that received the events.
    public let delegate: Delegate

    /// Creates a response.
    ///
    /// ```swift
    /// let response = XMLParserResponse(
    ///     request: nil, response: nil, url: nil, data: nil, metrics: nil, result: .success(()), delegate: Titles()
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
    ///   - delegate: The delegate that received the events.
    public init(
        request: HTTPRequest?,
        response: HTTPResponse?,
        url: URL? = nil,
        data: Data?,
        metrics: ResponseMetrics?,
        result: Result<Void, KiteError>,
        delegate: Delegate
    ) {
        self.request = request
        self.response = response
        self.url = url
        self.data = data
        self.metrics = metrics
        self.result = result
        self.delegate = delegate
    }

    /// The error, if the result is a failure.
    ///
    /// ```swift
    /// print(response.error?.message ?? "parsed")
    /// ```
    public var error: KiteError? {
        guard case .failure(let error) = self.result else { return nil }
        return error
    }
}

@available(*, unavailable, message: "The delegate need not be Sendable: use the response on the queue that received it")
extension XMLParserResponse: Sendable {}
#endif
