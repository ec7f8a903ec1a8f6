import Foundation
import HTTPTypes
import NIOCore

/// Answers a request's `401` challenges with its credential: Digest (RFC 7616) when offered, else Basic
/// (RFC 7617). Only for the origin of the request's own URL; one answer, plus one more for a Digest
/// `stale=true`; a `401` after that ends the request with `authenticationFailed`.
struct ChallengeAnswerer {
    private let credential: Credential
    private let origin: String
    private var answers = 0
    private var answeredStale = false

    init(credential: Credential, origin request: HTTPRequest) {
        self.credential = credential
        self.origin = Redirect.origin(of: request)
    }

    /// The `Authorization` value answering `response`, or `nil` when it is not answered (another origin, or
    /// no Basic or supported Digest challenge): the `401` is then the response.
    ///
    /// - Throws: `authenticationFailed` when the server refuses an answer.
    mutating func answer(
        _ response: HTTPResponse,
        to request: HTTPRequest,
        body: TransportRequestBody?
    ) throws(KiteError) -> String? {
        let credential = self.credential
        guard Redirect.origin(of: request) == self.origin else { return nil }
        let challenges = AuthenticationChallenge.parse(response.headerFields[values: .wwwAuthenticate])
        let digest = challenges.lazy.compactMap(DigestAuthorization.init(challenge:)).first
        if self.answers > 0 {
            guard var digest, digest.isStale, !self.answeredStale else {
                throw KiteError(
                    code: .authenticationFailed,
                    message: "the server refused the credentials of user \"\(credential.user)\" "
                        + "(status 401 after answering its challenge)",
                    response: response
                )
            }
            self.answeredStale = true
            return Self.authorize(&digest, credential: credential, request: request, body: body)
        }
        self.answers += 1
        if var digest {
            return Self.authorize(&digest, credential: credential, request: request, body: body)
        }
        if challenges.contains(where: { $0.scheme == "basic" }) {
            return credential.basicAuthorization()
        }
        return nil
    }

    private static func authorize(
        _ digest: inout DigestAuthorization,
        credential: Credential,
        request: HTTPRequest,
        body: TransportRequestBody?
    ) -> String {
        // Only `qop=auth-int` hashes the body; `auth` (preferred when offered) needs no copy of it.
        var bytes: [UInt8] = []
        if digest.qop == .authInt, case .bytes(let buffer) = body {
            bytes = Array(buffer.readableBytesView)
        }
        return digest.authorization(
            username: credential.user,
            password: credential.password,
            method: request.method.rawValue,
            uri: request.path ?? "/",
            body: bytes
        )
    }
}
