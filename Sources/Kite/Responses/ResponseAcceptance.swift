import Foundation
import HTTPTypes

/// Which responses a serializer accepts: status codes and `Content-Type` media types, as each
/// AFNetworking response serializer's `acceptableStatusCodes` and `acceptableContentTypes`.
///
/// `nil` accepts anything. A serializer checks acceptance before it reads the body; a response it does not
/// accept fails with `responseValidationFailed`, and the error carries the response head and the body
/// (``KiteError/responseBody``, at most 64 KiB).
///
/// ```swift
/// var serializer = JSONResponseSerializer()
/// serializer.acceptableContentTypes = ["application/json", "text/html"]
/// let value = try await session.request("http://127.0.0.1:8080/json")
///     .serializingResponse(using: serializer)
///     .value
/// ```
///
/// The rules are AFNetworking's: the status must be in ``statusCodes``; the media type of `Content-Type`
/// (without parameters) must be one of ``contentTypes``, which may use `*` wildcards (`image/*`). An empty
/// body passes the content-type check, so a `204` or an empty `200` is never refused for its type.
public struct ResponseAcceptance: Sendable, Hashable {
    /// The acceptable status codes; `nil` accepts any.
    public var statusCodes: IndexSet?
    /// The acceptable media types, such as `application/json` or `image/*`; `nil` accepts any.
    public var contentTypes: Set<String>?

    /// Creates an acceptance.
    ///
    /// ```swift
    /// let acceptance = ResponseAcceptance(statusCodes: IndexSet(200..<300), contentTypes: ["text/csv"])
    /// ```
    ///
    /// - Parameters:
    ///   - statusCodes: The acceptable status codes; `nil` accepts any.
    ///   - contentTypes: The acceptable media types; `nil` accepts any.
    public init(statusCodes: IndexSet? = nil, contentTypes: Set<String>? = nil) {
        self.statusCodes = statusCodes
        self.contentTypes = contentTypes
    }

    /// Accepts every response: the default of Kite's Alamofire-style serializers, which leave checks to
    /// `validate()`.
    public static let any = ResponseAcceptance()

    /// `200..<300` and any content type: AFNetworking's `AFHTTPResponseSerializer`.
    public static let http = ResponseAcceptance(statusCodes: IndexSet(integersIn: 200..<300))

    /// `200..<300` and `application/json`, `text/json`, `text/javascript`: AFNetworking's `AFJSONResponseSerializer`.
    public static let json = ResponseAcceptance(
        statusCodes: IndexSet(integersIn: 200..<300),
        contentTypes: ["application/json", "text/json", "text/javascript"]
    )

    /// `200..<300` and `application/xml`, `text/xml`: AFNetworking's XML serializers.
    public static let xml = ResponseAcceptance(
        statusCodes: IndexSet(integersIn: 200..<300),
        contentTypes: ["application/xml", "text/xml"]
    )

    /// `200..<300` and `application/x-plist`: AFNetworking's `AFPropertyListResponseSerializer`.
    public static let propertyList = ResponseAcceptance(
        statusCodes: IndexSet(integersIn: 200..<300),
        contentTypes: ["application/x-plist"]
    )

    /// `200..<300` and AFNetworking's image types (`image/tiff`, `image/jpeg`, `image/gif`, `image/png`,
    /// `image/ico`, `image/x-icon`, `image/bmp`, `image/x-bmp`, `image/x-xbitmap`, `image/x-win-bitmap`),
    /// plus `image/webp` and `image/heic`, which Kite's ``ImageInfo`` also reads.
    public static let image = ResponseAcceptance(
        statusCodes: IndexSet(integersIn: 200..<300),
        contentTypes: [
            "image/tiff", "image/jpeg", "image/gif", "image/png", "image/ico", "image/x-icon", "image/bmp",
            "image/x-bmp", "image/x-xbitmap", "image/x-win-bitmap", "image/webp", "image/heic",
        ]
    )

    /// Checks a response; `nil` when it is accepted.
    ///
    /// When both the status and the type are refused, one error names both, the status first (AFNetworking
    /// puts the status error on top of the type error).
    ///
    /// ```swift
    /// if let error = ResponseAcceptance.json.check(response: response, data: data) { throw error }
    /// ```
    ///
    /// - Parameters:
    ///   - response: The response head; without one nothing is checked.
    ///   - data: The body.
    /// - Returns: A `responseValidationFailed` error carrying the response and the body, or `nil`.
    public func check(response: HTTPResponse?, data: Data?) -> KiteError? {
        guard let response, self.statusCodes != nil || self.contentTypes != nil else { return nil }
        var reasons: [String] = []
        if let statusCodes, !statusCodes.contains(response.status.code) {
            reasons.append(
                "response status \(response.status.code) is not acceptable (\(Self.describe(statusCodes)))"
            )
        }
        if let contentTypes,
            let refusal = Self.refusal(of: response, by: contentTypes, bodyIsEmpty: data?.isEmpty ?? true)
        {
            reasons.append(refusal)
        }
        guard !reasons.isEmpty else { return nil }
        return KiteError(
            code: .responseValidationFailed,
            message: reasons.joined(separator: ", and "),
            response: response
        )
        .carryingBody(data)
    }

    /// Why `response`'s content type is not one of `contentTypes`, or `nil` when it is or the body is empty. An
    /// empty set accepts no type (AFNetworking's empty `NSSet`), and an entry that is not a media type matches
    /// nothing, so a typo never turns the check off.
    private static func refusal(of response: HTTPResponse, by contentTypes: Set<String>, bodyIsEmpty: Bool) -> String? {
        guard !bodyIsEmpty else { return nil }
        let acceptable = contentTypes.compactMap(MediaType.init)
        if acceptable.contains(where: { $0.type == "*" && $0.subtype == "*" }) { return nil }
        let list =
            contentTypes.isEmpty
            ? "no content type (acceptableContentTypes is empty)"
            : "one of " + contentTypes.map { MediaType($0)?.description ?? $0 }.sorted().joined(separator: ", ")
        guard let contentType = response.headerFields[.contentType] else {
            return "the response has no Content-Type, but \(list) was expected"
        }
        guard let mediaType = MediaType(contentType), acceptable.contains(where: { $0.matches(mediaType) }) else {
            return "response Content-Type \"\(contentType)\" is not \(list)"
        }
        return nil
    }

    /// `200..<300` for one range, else the ranges joined by commas.
    private static func describe(_ codes: IndexSet) -> String {
        codes.rangeView.map { range in
            range.count == 1 ? "\(range.lowerBound)" : "\(range.lowerBound)..<\(range.upperBound)"
        }
        .joined(separator: ", ")
    }
}

/// A serializer whose acceptance can be set: every serializer Kite ships is one, so AFNetworking code such
/// as `serializer.acceptableContentTypes = […]` ports as it is.
///
/// ```swift
/// var serializer = ImageResponseSerializer()
/// serializer.acceptableContentTypes?.insert("image/svg+xml")
/// ```
public protocol ResponseAcceptingSerializer: DataResponseSerializerProtocol {
    /// Which responses the serializer accepts.
    var acceptance: ResponseAcceptance { get set }
}

extension ResponseAcceptingSerializer {
    /// The acceptable status codes; `nil` accepts any. AFNetworking's name.
    public var acceptableStatusCodes: IndexSet? {
        get { self.acceptance.statusCodes }
        set { self.acceptance.statusCodes = newValue }
    }

    /// The acceptable media types; `nil` accepts any. AFNetworking's name.
    public var acceptableContentTypes: Set<String>? {
        get { self.acceptance.contentTypes }
        set { self.acceptance.contentTypes = newValue }
    }

    /// Rethrows the request's error, then throws when the response is not accepted.
    ///
    /// - Parameters:
    ///   - response: The response head.
    ///   - data: The body.
    ///   - error: The request's or a validator's error.
    func checkAcceptance(response: HTTPResponse?, data: Data?, error: KiteError?) throws(KiteError) {
        if let error { throw error }
        if let refusal = self.acceptance.check(response: response, data: data) { throw refusal }
    }
}

extension DataResponseSerializerProtocol {
    /// This serializer, refusing responses outside `statusCodes` or `contentTypes` before it reads them.
    /// Works with any serializer, your own too.
    ///
    /// ```swift
    /// let lines = try await session.request("http://127.0.0.1:8080/stream/3")
    ///     .serializingResponse(using: LineCountSerializer().accepting(contentTypes: ["application/json"]))
    ///     .value
    /// ```
    ///
    /// - Parameters:
    ///   - statusCodes: The acceptable status codes; `nil` accepts any.
    ///   - contentTypes: The acceptable media types; `nil` accepts any.
    /// - Returns: The checking serializer.
    public func accepting(
        statusCodes: IndexSet? = nil,
        contentTypes: Set<String>? = nil
    ) -> AcceptanceCheckingSerializer<Self> {
        AcceptanceCheckingSerializer(
            self,
            acceptance: ResponseAcceptance(statusCodes: statusCodes, contentTypes: contentTypes)
        )
    }
}

/// Any serializer behind an acceptance check; made by ``DataResponseSerializerProtocol/accepting(statusCodes:contentTypes:)``.
public struct AcceptanceCheckingSerializer<Base: DataResponseSerializerProtocol>: ResponseAcceptingSerializer {
    /// The serializer that reads accepted responses.
    public let base: Base
    public var acceptance: ResponseAcceptance

    /// Wraps `base`.
    ///
    /// - Parameters:
    ///   - base: The serializer that reads accepted responses.
    ///   - acceptance: Which responses are accepted.
    public init(_ base: Base, acceptance: ResponseAcceptance) {
        self.base = base
        self.acceptance = acceptance
    }

    public func serialize(
        request: HTTPRequest?,
        response: HTTPResponse?,
        data: Data?,
        error: KiteError?
    ) throws -> Base.SerializedObject {
        try self.checkAcceptance(response: response, data: data, error: error)
        return try self.base.serialize(request: request, response: response, data: data, error: nil)
    }
}
