import Foundation
import HTTPTypes
import NIOConcurrencyHelpers

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How ``HTTPSessionManager`` turns parameters and settings into a request: AFNetworking's
/// `AFHTTPRequestSerializer`. This one writes form bodies (`application/x-www-form-urlencoded`);
/// ``JSONRequestSerializer`` and ``PropertyListRequestSerializer`` write JSON and property lists.
///
/// ```swift
/// let serializer = HTTPRequestSerializer()
/// serializer.setValue("kite-tests", forHTTPHeaderField: "X-Client")
/// serializer.setAuthorizationHeaderField(username: "user", password: "secret")
/// serializer.timeoutInterval = 10
/// manager.requestSerializer = serializer
/// ```
///
/// Rules, as AFNetworking's:
/// - Parameters of the methods in ``httpMethodsEncodingParametersInURI`` (`GET`, `HEAD`, `DELETE`) go in the
///   query string; other methods get them in the body.
/// - Query strings sort dictionary keys, write arrays as `key[]` and `NSNull` as a bare key (`flag`), so
///   AFNetworking's server-side expectations hold.
/// - The header fields set here go on every request; a request's own `headers` win over them.
///
/// Kite's session adds `User-Agent`, `Accept-Language` and `Accept-Encoding`, so this serializer starts with
/// no header fields of its own. The settings are guarded by a lock: change them from any thread.
open class HTTPRequestSerializer: @unchecked Sendable {
    // @unchecked: open so that JSON and property list serializers (and yours) can subclass it, as in
    // AFNetworking; its only stored property is a lock-guarded box.
    private let settings: NIOLockedValueBox<Settings>

    private struct Settings {
        var headers: [(name: String, value: String)] = []
        var timeoutInterval: TimeInterval = 60
        var cachePolicy: URLRequest.CachePolicy = .useProtocolCachePolicy
        var methodsInURI: Set<String> = ["GET", "HEAD", "DELETE"]
    }

    /// Creates a serializer with AFNetworking's defaults: a 60 second timeout, parameters of `GET`, `HEAD` and
    /// `DELETE` in the query string.
    public required init() {
        self.settings = NIOLockedValueBox(Settings())
    }

    /// A new serializer: AFNetworking's `+serializer`.
    ///
    /// ```swift
    /// manager.requestSerializer = JSONRequestSerializer.serializer()
    /// ```
    ///
    /// - Returns: The serializer.
    public class func serializer() -> Self {
        self.init()
    }

    /// The header fields set on every request, by name. AFNetworking's `HTTPRequestHeaders`.
    public var httpRequestHeaders: [String: String] {
        self.settings.withLockedValue { settings in
            Dictionary(settings.headers.map { ($0.name, $0.value) }, uniquingKeysWith: { _, last in last })
        }
    }

    /// Sets a header field for every request; `nil` removes it. Names compare without case.
    ///
    /// ```swift
    /// serializer.setValue("application/json", forHTTPHeaderField: "Accept")
    /// ```
    ///
    /// - Parameters:
    ///   - value: The value, or `nil` to remove the field.
    ///   - field: The field name.
    public func setValue(_ value: String?, forHTTPHeaderField field: String) {
        self.settings.withLockedValue { settings in
            settings.headers.removeAll { $0.name.caseInsensitiveCompare(field) == .orderedSame }
            if let value { settings.headers.append((field, value)) }
        }
    }

    /// The value set for a header field.
    ///
    /// - Parameter field: The field name, compared without case.
    /// - Returns: The value, or `nil`.
    public func value(forHTTPHeaderField field: String) -> String? {
        self.settings.withLockedValue { settings in
            settings.headers.last { $0.name.caseInsensitiveCompare(field) == .orderedSame }?.value
        }
    }

    /// Sets `Authorization: Basic` with the Base64 of `username:password` for every request.
    ///
    /// ```swift
    /// serializer.setAuthorizationHeaderField(username: "user", password: "secret")
    /// ```
    ///
    /// - Parameters:
    ///   - username: The user name.
    ///   - password: The password.
    public func setAuthorizationHeaderField(username: String, password: String) {
        let credentials = Data("\(username):\(password)".utf8).base64EncodedString()
        self.setValue("Basic \(credentials)", forHTTPHeaderField: "Authorization")
    }

    /// Removes the `Authorization` header field.
    public func clearAuthorizationHeader() {
        self.setValue(nil, forHTTPHeaderField: "Authorization")
    }

    /// The total timeout of each request, in seconds; 60 by default.
    public var timeoutInterval: TimeInterval {
        get { self.settings.withLockedValue { $0.timeoutInterval } }
        set { self.settings.withLockedValue { $0.timeoutInterval = newValue } }
    }

    /// How each request uses the session's ``ResponseCache``: AFNetworking's `cachePolicy`. The default,
    /// `useProtocolCachePolicy`, leaves it to the session's ``Session/Configuration-swift.struct/requestCachePolicy``.
    ///
    /// ```swift
    /// manager.requestSerializer.cachePolicy = .returnCacheDataElseLoad
    /// ```
    public var cachePolicy: URLRequest.CachePolicy {
        get { self.settings.withLockedValue { $0.cachePolicy } }
        set { self.settings.withLockedValue { $0.cachePolicy = newValue } }
    }

    /// The methods whose parameters go in the query string: `GET`, `HEAD` and `DELETE` by default.
    public var httpMethodsEncodingParametersInURI: Set<String> {
        get { self.settings.withLockedValue { $0.methodsInURI } }
        set { self.settings.withLockedValue { $0.methodsInURI = Set(newValue.map { $0.uppercased() }) } }
    }

    /// How parameters of a method that does not put them in the query string are written into the body.
    /// Subclasses override it; this class writes a form body.
    open var bodyEncoding: any ParameterEncoding {
        URLEncoding(destination: .httpBody, nullEncoding: .bareKey)
    }

    /// The encoding for `method`: the query string for the methods in ``httpMethodsEncodingParametersInURI``,
    /// else ``bodyEncoding``.
    ///
    /// - Parameter method: The request method.
    /// - Returns: The encoding.
    public func encoding(for method: HTTPRequest.Method) -> any ParameterEncoding {
        if self.httpMethodsEncodingParametersInURI.contains(method.rawValue) {
            return URLEncoding(destination: .queryString, nullEncoding: .bareKey)
        }
        return self.bodyEncoding
    }

    /// The header fields for one request: this serializer's, then `headers` over them.
    ///
    /// - Parameter headers: The request's own header fields.
    /// - Returns: The fields.
    /// - Throws: `invalidHeader` naming a field whose name or value is not valid HTTP.
    func headerFields(adding headers: [String: String]?) throws(KiteError) -> HTTPFields {
        var fields = HTTPFields()
        let own = self.settings.withLockedValue { $0.headers }
        for (name, value) in own + (headers ?? [:]).sorted(by: { $0.key < $1.key }).map({ ($0.key, $0.value) }) {
            guard let fieldName = HTTPField.Name(name) else {
                throw KiteError(code: .invalidHeader, message: "\"\(name)\" is not a valid header field name")
            }
            guard HTTPField.isValidValue(value), !value.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\0" })
            else {
                throw KiteError(
                    code: .invalidHeader,
                    message: "the value of header field \(name) holds CR, LF, NUL or another invalid character"
                )
            }
            fields[fieldName] = value
        }
        return fields
    }
}

/// Writes parameters as a JSON body (`application/json`): AFNetworking's `AFJSONRequestSerializer`.
/// Parameters of `GET`, `HEAD` and `DELETE` still go in the query string.
///
/// ```swift
/// manager.requestSerializer = JSONRequestSerializer()
/// manager.post("users", parameters: ["name": "kite"], headers: nil, progress: nil, success: nil, failure: nil)
/// ```
// @unchecked: a subclass of the open HTTPRequestSerializer; its own state is a lock-guarded box.
public final class JSONRequestSerializer: HTTPRequestSerializer, @unchecked Sendable {
    private let options: NIOLockedValueBox<JSONSerialization.WritingOptions>

    /// Creates the serializer.
    public required init() {
        self.options = NIOLockedValueBox([])
        super.init()
    }

    /// The JSON writing options; Kite always adds `.sortedKeys` so bodies are deterministic.
    public var writingOptions: JSONSerialization.WritingOptions {
        get { self.options.withLockedValue { $0 } }
        set { self.options.withLockedValue { $0 = newValue } }
    }

    public override var bodyEncoding: any ParameterEncoding {
        JSONEncoding(options: self.writingOptions)
    }
}

/// Writes parameters as a property list body (`application/x-plist`): AFNetworking's
/// `AFPropertyListRequestSerializer`. Parameters of `GET`, `HEAD` and `DELETE` still go in the query string.
///
/// ```swift
/// let serializer = PropertyListRequestSerializer()
/// serializer.format = .binary
/// manager.requestSerializer = serializer
/// ```
// @unchecked: a subclass of the open HTTPRequestSerializer; its own state is a lock-guarded box.
public final class PropertyListRequestSerializer: HTTPRequestSerializer, @unchecked Sendable {
    private let formatBox: NIOLockedValueBox<PropertyListSerialization.PropertyListFormat>

    /// Creates the serializer, writing XML property lists.
    public required init() {
        self.formatBox = NIOLockedValueBox(.xml)
        super.init()
    }

    /// The format written: `.xml` (the default) or `.binary`.
    public var format: PropertyListSerialization.PropertyListFormat {
        get { self.formatBox.withLockedValue { $0 } }
        set { self.formatBox.withLockedValue { $0 = newValue } }
    }

    public override var bodyEncoding: any ParameterEncoding {
        PropertyListEncoding(format: self.format)
    }
}
