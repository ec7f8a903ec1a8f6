import Foundation
import Kite
import Testing

/// A draft for `url` with `method` and, when given, a preset `Content-Type`.
func makeDraft(
    _ method: HTTPRequest.Method = .get,
    _ url: String = "https://example.com/path",
    contentType: String? = nil
) -> RequestDraft {
    var draft = RequestDraft(method: method, url: URL(string: url)!)
    if let contentType {
        draft.headerFields[.contentType] = contentType
    }
    return draft
}

/// The body as UTF-8 text, or `nil` when there is none.
func bodyText(_ draft: RequestDraft) -> String? {
    draft.body.map { String(decoding: $0, as: UTF8.self) }
}

/// Runs `body`, expects a `parameterEncodingFailed` `KiteError`, and returns its message.
func encodingFailureMessage(
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> Void
) -> String? {
    do {
        try body()
        Issue.record("expected a parameterEncodingFailed error, but nothing was thrown", sourceLocation: sourceLocation)
        return nil
    } catch let error as KiteError {
        #expect(error.code == .parameterEncodingFailed, sourceLocation: sourceLocation)
        #expect(error.request == nil, sourceLocation: sourceLocation)
        return error.message
    } catch {
        Issue.record("expected a KiteError, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// A string-keyed coding key for hand-written `encode(to:)` implementations.
struct TestKey: CodingKey, ExpressibleByStringLiteral {
    let stringValue: String
    var intValue: Int? { nil }

    init(stringLiteral value: String) {
        self.stringValue = value
    }

    init?(stringValue: String) {
        self.stringValue = stringValue
    }

    init?(intValue: Int) {
        nil
    }
}

/// An error with a short description, thrown by test closures.
struct Boom: Error, CustomStringConvertible {
    var description: String { "boom" }
}

/// A type no encoding knows.
struct Point: Sendable, Encodable {
    let x: Int
    let y: Int
}
