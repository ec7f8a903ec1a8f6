import Dispatch
import Foundation
import HTTPTypes

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension HTTPSessionManager {
    /// What one request needs from the manager, read once under the lock when it is made.
    struct RequestContext: Sendable {
        let session: Session
        let url: URL
        let headers: HTTPFields
        let requestSerializer: HTTPRequestSerializer
        let responseSerializer: any ResponseAcceptingSerializer
        let queue: DispatchQueue
        let group: DispatchGroup

        /// Sets the request serializer's timeout and cache policy on the draft.
        var timeoutModifier: RequestModifier {
            let seconds = self.requestSerializer.timeoutInterval
            let cachePolicy = self.requestSerializer.cachePolicy
            return { draft in
                if seconds > 0 { draft.timeout = .milliseconds(Int64((seconds * 1000).rounded())) }
                if cachePolicy != .useProtocolCachePolicy { draft.cachePolicy = cachePolicy }
            }
        }
    }

    /// The context for a request to `urlString`, or why there can be none: an invalidated session, a URL
    /// that does not resolve, an invalid header field.
    func context(for urlString: String, headers: [String: String]?) -> Result<RequestContext, KiteError> {
        let state: State
        let session: Session
        switch self.snapshot() {
        case .failure(let error): return .failure(error)
        case .success(let value): (state, session) = value
        }
        let queue = state.completionQueue ?? session.callbackQueue
        let group = state.completionGroup ?? self.privateGroup
        guard let url = self.url(for: urlString) else {
            let base = self.baseURL.map { " relative to \($0.absoluteString)" } ?? ""
            return .failure(KiteError(code: .invalidURL, message: "\"\(urlString)\" is not a URL\(base)"))
        }
        let fields: HTTPFields
        do {
            fields = try state.requestSerializer.headerFields(adding: headers)
        } catch {
            return .failure(error)
        }
        return .success(
            RequestContext(
                session: session,
                url: url,
                headers: fields,
                requestSerializer: state.requestSerializer,
                responseSerializer: state.responseSerializer,
                queue: queue,
                group: group
            )
        )
    }

    /// The settings and the session for a new request, or `sessionShutDown` after an invalidation without reset.
    func snapshot() -> Result<(State, Session), KiteError> {
        self.state.withLockedValue { state -> Result<(State, Session), KiteError> in
            if state.invalidated {
                return .failure(
                    KiteError(
                        code: .sessionShutDown,
                        message: "the manager's session was invalidated (invalidateSessionCancelingTasks "
                            + "without resetSession), so it makes no more requests"
                    )
                )
            }
            return .success((state, self.currentSession(&state)))
        }
    }

    /// `urlString` resolved against ``baseURL`` with `URL(string:relativeTo:)`, as AFNetworking resolves it.
    func url(for urlString: String) -> URL? {
        // Foundation on Linux gives no URL for "" (Apple's gives the base URL).
        if urlString.isEmpty { return self.baseURL }
        return URL(string: urlString, relativeTo: self.baseURL)?.absoluteURL
    }

    /// Calls `failure` with no task on the completion queue, in the group, as AFNetworking does for a request
    /// that could not be made.
    func reportFailure<Request>(
        _ error: KiteError,
        failure: (@Sendable (Request?, KiteError) -> Void)?
    ) {
        let (queue, group) = self.state.withLockedValue { state in
            (state.completionQueue ?? state.session?.callbackQueue ?? DispatchQueue.global(), state.completionGroup)
        }
        queue.async(group: group ?? self.privateGroup) { failure?(nil, error) }
    }

    /// A data request with the context's URL, header fields, timeout and the encoding for `method`.
    func makeDataRequest(
        _ context: RequestContext,
        method: HTTPRequest.Method,
        parameters: Parameters?
    ) -> DataRequest {
        context.session.request(
            context.url,
            method: method,
            parameters: parameters,
            encoding: context.requestSerializer.encoding(for: method),
            headers: context.headers,
            requestModifier: context.timeoutModifier
        )
    }

    /// Tracks `request` until it is over, then serializes its response with the context's serializer and
    /// hands the result to `deliver` (on the session's serialization queue).
    func track<Request: DataRequest>(
        _ request: Request,
        _ context: RequestContext,
        deliver: @escaping @Sendable (DataResponse<any Sendable, KiteError>) -> Void
    ) {
        let id = ObjectIdentifier(request)
        self.state.withLockedValue { $0.requests[id] = request }
        let serializer = ErasedSerializer(base: context.responseSerializer)
        request.appendHandler { [self] outcome in
            let response = request.makeResponse(outcome, using: serializer)
            self.state.withLockedValue { _ = $0.requests.removeValue(forKey: id) }
            deliver(response)
        }
    }

    /// Tracks `request` and calls `success` or `failure` on the context's queue, in its group; the response
    /// object is made there.
    func track<Request: DataRequest>(
        _ request: Request,
        _ context: RequestContext,
        success: (@Sendable (Request, Any?) -> Void)?,
        failure: (@Sendable (Request?, KiteError) -> Void)?
    ) {
        context.group.enter()
        self.track(request, context) { response in
            context.queue.async {
                defer { context.group.leave() }
                switch Self.responseObject(from: response.result) {
                case .success(let object): success?(request, object)
                case .failure(let error): failure?(request, error)
                }
            }
        }
    }

    /// Tracks `request` and returns it with its response object, made in the caller's context.
    nonisolated(nonsending) func response<Request: DataRequest>(
        of request: Request,
        _ context: RequestContext
    ) async throws(KiteError) -> (task: Request, responseObject: Any?) {
        let response = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                self.track(request, context) { continuation.resume(returning: $0) }
            }
        } onCancel: {
            request.cancel()
        }
        return (request, try Self.responseObject(from: response.result).get())
    }

    /// The response object for a serialized value: a ``ResponseObjectConvertible`` converts itself, anything
    /// else is the object as it is.
    static func responseObject(from result: Result<any Sendable, KiteError>) -> Result<Any?, KiteError> {
        switch result {
        case .failure(let error):
            return .failure(error)
        case .success(let value as any ResponseObjectConvertible):
            do {
                return .success(try value.responseObject())
            } catch {
                return .failure(error)
            }
        case .success(let value):
            return .success(value)
        }
    }
}

/// Any serializer as one whose value is `any Sendable`, so the manager's serializer can be changed at run time.
struct ErasedSerializer: DataResponseSerializerProtocol {
    let base: any DataResponseSerializerProtocol

    func serialize(
        request: HTTPRequest?,
        response: HTTPResponse?,
        data: Data?,
        error: KiteError?
    ) throws -> any Sendable {
        try self.base.serialize(request: request, response: response, data: data, error: error)
    }
}
