#if canImport(FoundationXML)
import Dispatch
import Foundation
import FoundationXML

extension DataRequest {
    /// The body as an `XMLDocument`, for `async` callers: AFNetworking's `AFXMLDocumentResponseSerializer`.
    ///
    /// The task's ``XMLDocumentTask/value`` parses the body on the awaiting executor and gives a new document,
    /// so it can be awaited from any actor. External entities and DTDs are never loaded, whatever `options`
    /// say (see ``XMLDocumentSource``). Responses are accepted as `acceptance` says; `.any` by default, leaving
    /// checks to `validate()`; ``ResponseAcceptance/xml`` is AFNetworking's.
    ///
    /// ```swift
    /// let document = try await session.request("http://127.0.0.1:8080/xml")
    ///     .serializingXMLDocument(acceptance: .xml)
    ///     .value
    /// print(document.rootElement()?.name ?? "")  // slideshow
    /// ```
    ///
    /// - Parameters:
    ///   - options: The options the document is parsed with; the ones that load external entities are
    ///     ignored and `.documentValidate` is refused.
    ///   - acceptance: Which responses are accepted.
    ///   - automaticallyCancelling: Whether cancelling the awaiting task cancels the request.
    /// - Returns: The task to await.
    public func serializingXMLDocument(
        options: XMLNode.Options = [],
        acceptance: ResponseAcceptance = .any,
        automaticallyCancelling: Bool = true
    ) -> XMLDocumentTask {
        XMLDocumentTask(
            self.serializingResponse(
                using: XMLDocumentResponseSerializer(acceptance: acceptance, options: options),
                automaticallyCancelling: automaticallyCancelling
            )
        )
    }

    /// Calls `completionHandler` once with the body parsed as an `XMLDocument`, on `queue`.
    ///
    /// The document is parsed on `queue`, in the block that calls the handler, and handed over there.
    /// External entities and DTDs are never loaded, whatever `options` say (see ``XMLDocumentSource``).
    ///
    /// ```swift
    /// session.request("http://127.0.0.1:8080/xml").responseXMLDocument(acceptance: .xml) { response in
    ///     print(response.value?.rootElement()?.name ?? "", response.error as Any)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - queue: Where the document is parsed and the handler runs; the session's ``Session/callbackQueue``
    ///     by default.
    ///   - options: The options the document is parsed with; the ones that load external entities are
    ///     ignored and `.documentValidate` is refused.
    ///   - acceptance: Which responses are accepted; `.any` by default.
    ///   - completionHandler: The handler.
    /// - Returns: The request.
    @discardableResult
    public func responseXMLDocument(
        queue: DispatchQueue? = nil,
        options: XMLNode.Options = [],
        acceptance: ResponseAcceptance = .any,
        completionHandler: @escaping @Sendable (XMLDocumentResponse) -> Void
    ) -> Self {
        let summary = self.summary
        return self.response(
            queue: queue,
            responseSerializer: XMLDocumentResponseSerializer(acceptance: acceptance, options: options)
        ) { serialized in
            completionHandler(XMLDocumentResponse(serialized, summary: summary))
        }
    }

    /// The body as an `XMLParser`, for `async` callers: AFNetworking's `AFXMLParserResponseSerializer`.
    ///
    /// The task's ``XMLParserTask/value`` makes a new parser on the awaiting executor; it loads no external
    /// entity or DTD. Set its delegate and call `parse()`.
    ///
    /// ```swift
    /// let parser = try await session.request("http://127.0.0.1:8080/xml").serializingXMLParser().value
    /// let titles = Titles()
    /// parser.delegate = titles
    /// _ = parser.parse()
    /// ```
    ///
    /// - Parameters:
    ///   - acceptance: Which responses are accepted; `.any` by default.
    ///   - automaticallyCancelling: Whether cancelling the awaiting task cancels the request.
    /// - Returns: The task to await.
    public func serializingXMLParser(
        acceptance: ResponseAcceptance = .any,
        automaticallyCancelling: Bool = true
    ) -> XMLParserTask {
        XMLParserTask(
            self.serializingResponse(
                using: XMLParserResponseSerializer(acceptance: acceptance),
                automaticallyCancelling: automaticallyCancelling
            )
        )
    }

    /// Runs an `XMLParser` over the body with `delegate` on `queue`, then calls `completionHandler` there
    /// with the delegate and whether the body parsed: event-driven (SAX) XML.
    ///
    /// Every delegate call happens on `queue`. The parser loads no external entity or DTD and stops at the
    /// first error, which the result names with its line and column (`XMLParser` on Linux would otherwise
    /// recover and go on). The delegate is sent to the request and comes back in the response, so it is
    /// touched by one queue only.
    ///
    /// ```swift
    /// session.request("http://127.0.0.1:8080/xml").responseXMLParser(queue: .main, delegate: Titles()) { response in
    ///     switch response.result {
    ///     case .success: print(response.delegate.titles)
    ///     case .failure(let error): print(error)
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - queue: Where the delegate and the handler run; the session's ``Session/callbackQueue`` by default.
    ///   - acceptance: Which responses are accepted; `.any` by default. A response that is not accepted is
    ///     not parsed.
    ///   - delegate: Receives the parse's events.
    ///   - completionHandler: The handler.
    /// - Returns: The request.
    @discardableResult
    public func responseXMLParser<Delegate: XMLParserDelegate>(
        queue: DispatchQueue? = nil,
        acceptance: ResponseAcceptance = .any,
        delegate: sending Delegate,
        completionHandler: @escaping @Sendable (XMLParserResponse<Delegate>) -> Void
    ) -> Self {
        let run = XMLParserRun(delegate: delegate, summary: self.summary, completionHandler: completionHandler)
        return self.response(
            queue: queue,
            responseSerializer: XMLParserResponseSerializer(acceptance: acceptance),
            completionHandler: run.finish
        )
    }
}

/// One `responseXMLParser` call: the delegate the caller sent (gave up), run over the body by the one block on
/// the response queue that finishes it.
// @unchecked: the delegate was `sending` (no one else holds it) and only `finish`, run once on the queue, uses it.
private final class XMLParserRun<Delegate: XMLParserDelegate>: @unchecked Sendable {
    private let delegate: Delegate
    private let summary: RequestSummary
    private let completionHandler: @Sendable (XMLParserResponse<Delegate>) -> Void

    init(
        delegate: Delegate,
        summary: RequestSummary,
        completionHandler: @escaping @Sendable (XMLParserResponse<Delegate>) -> Void
    ) {
        self.delegate = delegate
        self.summary = summary
        self.completionHandler = completionHandler
    }

    /// Parses the accepted body with the delegate, then calls the handler.
    func finish(_ serialized: DataResponse<XMLParserSource, KiteError>) {
        let result = serialized.result.flatMap { source -> Result<Void, KiteError> in
            do throws(KiteError) {
                try source.parse(delegate: self.delegate)
                return .success(())
            } catch {
                return .failure(error.naming(self.summary).carrying(serialized.response))
            }
        }
        self.completionHandler(
            XMLParserResponse(
                request: serialized.request,
                response: serialized.response,
                url: serialized.url,
                data: serialized.data,
                metrics: serialized.metrics,
                result: result,
                delegate: self.delegate
            )
        )
    }
}
#endif
