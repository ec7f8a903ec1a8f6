import Dispatch
import Foundation
import HTTPTypes
import NIOConcurrencyHelpers

/// AFNetworking's `AFHTTPSessionManager` over a Kite ``Session``: `GET`, `HEAD`, `POST`, `PUT`, `PATCH` and
/// `DELETE` against a base URL, with `success` and `failure` closures, so AFNetworking code ports line by line.
///
/// ```swift
/// let manager = HTTPSessionManager(baseURL: URL(string: "http://127.0.0.1:8080/"))
/// manager.get("get", parameters: ["q": "kite"], headers: nil, progress: nil,
///     success: { task, responseObject in
///         let json = responseObject as? [String: Any]
///         print(json?["args"] ?? "")
///     },
///     failure: { task, error in print(error) })
/// ```
///
/// Every method also has an `async` form that returns the task and the response object:
///
/// ```swift
/// let (_, object) = try await manager.get("get", parameters: ["q": "kite"])
/// ```
///
/// What is the same as AFNetworking:
/// - Relative paths resolve with `URL(string:relativeTo:)` against ``baseURL``, which gets a trailing slash when
///   its path has none: with `http://h/v1`, `users` is `http://h/v1/users` and `/users` is `http://h/users`.
/// - ``requestSerializer`` (form by default; ``JSONRequestSerializer``, ``PropertyListRequestSerializer``) writes
///   parameters and header fields; ``responseSerializer`` (JSON with AFNetworking's acceptance by default) turns
///   the response into the `responseObject`: JSON as `[String: Any]` / `[Any]` with `NSNull`, property lists as
///   Foundation objects, XML as `XMLDocument` or `XMLParser`, images as `ImageInfo` on Linux.
/// - A response the serializer does not accept calls `failure` with a `responseValidationFailed` ``KiteError``
///   whose ``KiteError/response`` and ``KiteError/responseBody`` hold what AFNetworking puts in the error's
///   `userInfo`.
/// - Completions run on ``completionQueue`` inside ``completionGroup``; ``tasks`` lists the requests in flight.
///
/// What differs, and why:
/// - Without a ``completionQueue`` completions run on the session's callback queue, not the main queue: on Linux
///   the main queue only runs when the main thread hands it control (`dispatchMain()`, a `RunLoop`), which
///   servers and tools often never do. Set `completionQueue = .main` for AFNetworking's behaviour.
/// - Tasks are Kite requests (``DataRequest``, ``UploadRequest``), progress is ``TransferProgress`` and errors
///   are ``KiteError``.
/// - The group is entered when a request starts (AFNetworking enters it when the completion is queued), so
///   `completionGroup.notify` waits for every request started before it.
public final class HTTPSessionManager: Sendable {
    /// The URL relative paths resolve against, with a trailing slash added when its path has none.
    public let baseURL: URL?
    /// The configuration of the sessions the manager makes.
    public let configuration: Session.Configuration

    let state: NIOLockedValueBox<State>
    let privateGroup = DispatchGroup()

    struct State {
        var session: Session?
        var invalidated = false
        var requestSerializer: HTTPRequestSerializer = HTTPRequestSerializer()
        var responseSerializer: any ResponseAcceptingSerializer = JSONResponseSerializer.serializer()
        var completionQueue: DispatchQueue?
        var completionGroup: DispatchGroup?
        var securityPolicy: SecurityPolicy?
        var requests: [ObjectIdentifier: BaseRequest] = [:]
    }

    /// Creates a manager.
    ///
    /// ```swift
    /// let manager = HTTPSessionManager(baseURL: URL(string: "https://api.example.com/v1"))
    /// ```
    ///
    /// - Parameters:
    ///   - baseURL: The URL relative paths resolve against.
    ///   - configuration: The session configuration.
    public init(baseURL: URL? = nil, configuration: Session.Configuration = Session.Configuration()) {
        self.baseURL = baseURL.map(Self.withTrailingSlash)
        self.configuration = configuration
        self.state = NIOLockedValueBox(State())
    }

    /// A manager without a base URL: AFNetworking's `+manager`.
    ///
    /// - Returns: The manager.
    public static func manager() -> HTTPSessionManager {
        HTTPSessionManager()
    }

    /// The session requests go through; made on first use, and again after
    /// ``invalidateSessionCancelingTasks(_:resetSession:)`` with `resetSession` or a new ``securityPolicy``.
    public var session: Session {
        self.state.withLockedValue { state in self.currentSession(&state) }
    }

    /// Writes parameters and header fields; a form ``HTTPRequestSerializer`` by default.
    public var requestSerializer: HTTPRequestSerializer {
        get { self.state.withLockedValue { $0.requestSerializer } }
        set { self.state.withLockedValue { $0.requestSerializer = newValue } }
    }

    /// Turns responses into response objects; ``JSONResponseSerializer/serializer()`` by default.
    ///
    /// ```swift
    /// manager.responseSerializer.acceptableContentTypes?.insert("text/html")
    /// ```
    public var responseSerializer: any ResponseAcceptingSerializer {
        get { self.state.withLockedValue { $0.responseSerializer } }
        set { self.state.withLockedValue { $0.responseSerializer = newValue } }
    }

    /// Where `success` and `failure` run; `nil` uses the session's callback queue.
    public var completionQueue: DispatchQueue? {
        get { self.state.withLockedValue { $0.completionQueue } }
        set { self.state.withLockedValue { $0.completionQueue = newValue } }
    }

    /// The group `success` and `failure` run in; `nil` uses a private group.
    public var completionGroup: DispatchGroup? {
        get { self.state.withLockedValue { $0.completionGroup } }
        set { self.state.withLockedValue { $0.completionGroup = newValue } }
    }

    /// How servers are trusted: ``SecurityPolicy/default`` (the system's roots and the host name) unless set.
    /// Setting it makes the next request use a new session with the policy; requests in flight finish on
    /// the old one.
    public var securityPolicy: SecurityPolicy {
        get { self.state.withLockedValue { $0.securityPolicy } ?? .default }
        set {
            self.state.withLockedValue { state in
                state.securityPolicy = newValue
                state.session = nil
            }
        }
    }

    /// The requests in flight: data, upload and download.
    public var tasks: [BaseRequest] {
        self.state.withLockedValue { Array($0.requests.values) }
    }

    /// The data requests in flight, without uploads.
    public var dataTasks: [DataRequest] {
        self.tasks.compactMap { $0 is UploadRequest ? nil : $0 as? DataRequest }
    }

    /// The upload requests in flight.
    public var uploadTasks: [UploadRequest] {
        self.tasks.compactMap { $0 as? UploadRequest }
    }

    /// The download requests in flight.
    public var downloadTasks: [DownloadRequest] {
        self.tasks.compactMap { $0 as? DownloadRequest }
    }

    /// Stops the session: cancels the requests in flight or lets them finish, and refuses new ones with
    /// `sessionShutDown` unless `resetSession` makes a new session for them.
    ///
    /// ```swift
    /// manager.invalidateSessionCancelingTasks(true, resetSession: false)
    /// ```
    ///
    /// - Parameters:
    ///   - cancelPendingTasks: Whether the requests in flight are cancelled.
    ///   - resetSession: Whether later requests get a new session.
    public func invalidateSessionCancelingTasks(_ cancelPendingTasks: Bool, resetSession: Bool) {
        let (inFlight, old) = self.state.withLockedValue { state in
            let old = state.session
            state.session = nil
            state.invalidated = !resetSession
            return (Array(state.requests.values), old)
        }
        if cancelPendingTasks {
            for request in inFlight { request.cancel() }
        }
        // Without a reference from the manager the old session closes its connections when its last request
        // is over (Session's deinit); shut it down now when nothing runs on it.
        if let old, cancelPendingTasks || inFlight.isEmpty {
            Task { try? await old.shutdown() }
        }
    }

    /// The session for a new request, made when there is none.
    func currentSession(_ state: inout State) -> Session {
        if let session = state.session { return session }
        let session = Session(
            configuration: self.configuration,
            serverTrustManager: state.securityPolicy.map { ServerTrustManager(evaluatingEveryHostWith: $0) }
        )
        state.session = session
        return session
    }

    /// `url` with a trailing slash when its path is not empty and has none (AFNetworking's rule).
    static func withTrailingSlash(_ url: URL) -> URL {
        guard !url.path.isEmpty, !url.absoluteString.hasSuffix("/") else { return url }
        return url.appendingPathComponent("")
    }
}
