#if canImport(FoundationXML)
import Foundation
import FoundationXML

/// The async handle of an XML parser request: await its ``value``, a new `XMLParser` over the body, made
/// where you await it; set its delegate and call `parse()`.
///
/// `XMLParser` is not `Sendable`, so ``value`` and ``result`` run on the caller's executor
/// (`nonisolated(nonsending)`) and can be awaited from any actor. The parser loads no external entity or
/// DTD (see ``XMLParserSource/makeParser()``). To parse with a delegate and get the first error with its
/// line and column, take the ``XMLParserSource`` from ``response`` and call
/// ``XMLParserSource/parse(delegate:)``.
///
/// ```swift
/// let parser = try await session.request("http://127.0.0.1:8080/xml").serializingXMLParser().value
/// let titles = Titles()
/// parser.delegate = titles
/// _ = parser.parse()
/// ```
public struct XMLParserTask: Sendable {
    private let task: DataTask<XMLParserSource>

    init(_ task: DataTask<XMLParserSource>) {
        self.task = task
    }

    /// The request being serialized.
    ///
    /// ```swift
    /// print(session.request("http://127.0.0.1:8080/xml").serializingXMLParser().request.id)
    /// ```
    public var request: DataRequest { self.task.request }

    /// The whole serialized response, once the request is over; its value is the body as an
    /// ``XMLParserSource``.
    ///
    /// ```swift
    /// let source = try await session.request("http://127.0.0.1:8080/xml").serializingXMLParser().response.result.get()
    /// try source.parse(delegate: Titles())
    /// ```
    public var response: DataResponse<XMLParserSource, KiteError> {
        get async { await self.task.response }
    }

    /// A new parser or the error, made on the caller's executor.
    ///
    /// ```swift
    /// if case .success(let parser) = await session.request("http://127.0.0.1:8080/xml").serializingXMLParser().result {
    ///     _ = parser.parse()
    /// }
    /// ```
    nonisolated(nonsending) public var result: Result<XMLParser, KiteError> {
        get async { await self.task.response.result.map { $0.makeParser() } }
    }

    /// A new parser over the body, made on the caller's executor.
    ///
    /// ```swift
    /// let parser = try await session.request("http://127.0.0.1:8080/xml").serializingXMLParser().value
    /// ```
    ///
    /// - Throws: ``KiteError`` when the request, acceptance or validation failed.
    nonisolated(nonsending) public var value: XMLParser {
        get async throws(KiteError) { try await self.result.get() }
    }

    /// Cancels the request.
    ///
    /// ```swift
    /// session.request("http://127.0.0.1:8080/delay/10").serializingXMLParser().cancel()
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
