import Foundation

/// A serialized value that ``HTTPSessionManager`` hands to `success` closures as AFNetworking's untyped
/// `responseObject`: JSON as `[String: Any]` / `[Any]` with `NSNull`, a property list as Foundation objects, an
/// XML body as an `XMLDocument` or `XMLParser`.
///
/// Kite's serializers produce `Sendable` values off the caller's queue; the manager converts them on its
/// completion queue, so objects that are not `Sendable` (`XMLDocument`, `[String: Any]`) never cross threads.
///
/// ```swift
/// let object = try JSONValue.object(["id": .int(7)]).responseObject()
/// print((object as? [String: Any])?["id"] as? Int ?? 0)  // 7
/// ```
public protocol ResponseObjectConvertible: Sendable {
    /// The object for AFNetworking-style code, made on the thread that will use it.
    ///
    /// - Returns: The object, or `nil` for no object.
    /// - Throws: Why the value cannot become an object (for example malformed XML).
    func responseObject() throws(KiteError) -> Any?
}

extension Data: ResponseObjectConvertible {
    /// The data itself.
    public func responseObject() -> Any? { self }
}

extension String: ResponseObjectConvertible {
    /// The string itself.
    public func responseObject() -> Any? { self }
}
