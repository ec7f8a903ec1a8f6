import Foundation

/// A user name and password for HTTP authentication (Basic or Digest).
///
/// Alamofire takes a `URLCredential(user:password:persistence:)`; on Linux that type lives in
/// FoundationNetworking, which Kite does not use, so Kite has this small value instead. It is never
/// stored anywhere, and neither its `description` nor its mirror shows the password.
///
/// ```swift
/// let credential = Credential(user: "Aladdin", password: "open sesame")
/// print(credential)  // Credential(user: "Aladdin", password: ***)
/// ```
public struct Credential: Sendable, Hashable {
    /// The user name.
    public var user: String
    /// The password.
    public var password: String

    /// Creates a credential.
    ///
    /// - Parameters:
    ///   - user: The user name. Basic authentication cannot carry a user name with a `:` in it.
    ///   - password: The password.
    public init(user: String, password: String) {
        self.user = user
        self.password = password
    }

    /// The `Authorization` value of Basic authentication (RFC 7617): `Basic` and the Base64 of
    /// `user:password` in UTF-8.
    func basicAuthorization() -> String {
        "Basic " + self.basicCredentials()
    }

    /// The Base64 of `user:password` in UTF-8, as Basic authentication sends it.
    func basicCredentials() -> String {
        Data("\(self.user):\(self.password)".utf8).base64EncodedString()
    }
}

extension Credential: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String {
        "Credential(user: \(String(reflecting: self.user)), password: ***)"
    }

    public var debugDescription: String {
        self.description
    }

    public var customMirror: Mirror {
        Mirror(self, children: ["user": self.user, "password": "***"], displayStyle: .struct)
    }
}
