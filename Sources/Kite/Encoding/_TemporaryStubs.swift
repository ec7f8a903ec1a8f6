// TEMPORARY: replaced by the real encoders from the `encoding` branch.
import Foundation

public struct URLEncoding: ParameterEncoding {
    public static var `default`: URLEncoding { URLEncoding() }
    public func encode(_ draft: RequestDraft, with parameters: Parameters?) throws -> RequestDraft { draft }
}

public struct URLEncodedFormParameterEncoder: ParameterEncoder {
    public static var `default`: URLEncodedFormParameterEncoder { URLEncodedFormParameterEncoder() }
    public func encode<Value: Encodable & Sendable>(
        _ parameters: Value?,
        into draft: RequestDraft
    ) throws -> RequestDraft {
        draft
    }
}

public struct JSONParameterEncoder: ParameterEncoder {
    public static var `default`: JSONParameterEncoder { JSONParameterEncoder() }
    public func encode<Value: Encodable & Sendable>(
        _ parameters: Value?,
        into draft: RequestDraft
    ) throws -> RequestDraft {
        var draft = draft
        draft.body = try JSONEncoder().encode(parameters)
        draft.headerFields[.contentType] = "application/json"
        return draft
    }
}
