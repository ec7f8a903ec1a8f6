#if canImport(FoundationXML)
import Foundation
import FoundationXML

/// The async handle of an XML document request: await its ``value``, a new `XMLDocument` parsed where you
/// await it.
///
/// `XMLDocument` is not `Sendable`, so ``value`` and ``result`` run on the caller's executor
/// (`nonisolated(nonsending)`): the document is parsed there and never crosses an isolation boundary, so the
/// task can be awaited from any actor, the main actor included (a large document then parses on it). Each
/// read parses again and gives a new document. ``response`` is the `Sendable` serialized response, with the
/// body as an ``XMLDocumentSource``.
///
/// Cancelling the task that awaits cancels the request (unless it was made with
/// `automaticallyCancelling: false`).
///
/// ```swift
/// @MainActor func showTitle() async throws {
///     let document = try await session.request("http://127.0.0.1:8080/xml").serializingXMLDocument().value
///     print(document.rootElement()?.attribute(forName: "title")?.stringValue ?? "")  // Sample Slide Show
/// }
/// ```
public struct XMLDocumentTask: Sendable {
    private let task: DataTask<XMLDocumentSource>

    init(_ task: DataTask<XMLDocumentSource>) {
        self.task = task
    }

    /// The request being serialized.
    ///
    /// ```swift
    /// let task = session.request("http://127.0.0.1:8080/xml").serializingXMLDocument()
    /// print(task.request.id)
    /// ```
    public var request: DataRequest { self.task.request }

    /// The whole serialized response, once the request is over; its value is the body as an
    /// ``XMLDocumentSource`` (not yet parsed).
    ///
    /// ```swift
    /// let response = await session.request("http://127.0.0.1:8080/xml").serializingXMLDocument().response
    /// print(response.response?.status.code ?? 0, response.data?.count ?? 0)
    /// ```
    public var response: DataResponse<XMLDocumentSource, KiteError> {
        get async { await self.task.response }
    }

    /// A new document or the error, made on the caller's executor.
    ///
    /// ```swift
    /// switch await session.request("http://127.0.0.1:8080/xml").serializingXMLDocument().result {
    /// case .success(let document): print(document.rootElement()?.name ?? "")
    /// case .failure(let error): print(error)
    /// }
    /// ```
    nonisolated(nonsending) public var result: Result<XMLDocument, KiteError> {
        get async {
            let response = await self.task.response
            return response.result.flatMap {
                $0.documentResult(naming: self.task.request.summary, response: response.response)
            }
        }
    }

    /// A new document, made on the caller's executor.
    ///
    /// ```swift
    /// let document = try await session.request("http://127.0.0.1:8080/xml").serializingXMLDocument().value
    /// ```
    ///
    /// - Throws: ``KiteError`` when the request, acceptance, validation or parsing failed; a body that is
    ///   not well-formed XML fails with `responseSerializationFailed` naming the line and the column.
    nonisolated(nonsending) public var value: XMLDocument {
        get async throws(KiteError) { try await self.result.get() }
    }

    /// Cancels the request.
    ///
    /// ```swift
    /// session.request("http://127.0.0.1:8080/delay/10").serializingXMLDocument().cancel()
    /// ```
    public func cancel() {
        self.task.cancel()
    }

    /// Resumes the request.
    ///
    /// ```swift
    /// task.resume()
    /// ```
    public func resume() {
        self.task.resume()
    }

    /// Suspends the request.
    ///
    /// ```swift
    /// task.suspend()
    /// ```
    public func suspend() {
        self.task.suspend()
    }
}
#endif
