import Foundation
import NIOConcurrencyHelpers

/// The async handle of a serialized response: await its ``value``, ``result`` or ``response``.
///
/// Cancelling the task that awaits cancels the request (unless it was made with
/// `automaticallyCancelling: false`).
///
/// ```swift
/// let task = session.request("http://127.0.0.1:8080/get").serializingDecodable(Echo.self)
/// let echo = try await task.value          // throws KiteError
/// let response = await task.response       // never throws; the whole DataResponse
/// ```
public struct DataTask<Value: Sendable>: Sendable {
    /// The request being serialized.
    public let request: DataRequest
    private let promise: Promise<DataResponse<Value, KiteError>>
    private let automaticallyCancelling: Bool

    init(request: DataRequest, promise: Promise<DataResponse<Value, KiteError>>, automaticallyCancelling: Bool) {
        self.request = request
        self.promise = promise
        self.automaticallyCancelling = automaticallyCancelling
    }

    /// The whole response, once the request is over and serialized.
    public var response: DataResponse<Value, KiteError> {
        get async { await self.promise.value(cancelling: self.automaticallyCancelling ? self.request : nil) }
    }

    /// The serialized value or the error.
    public var result: Result<Value, KiteError> {
        get async { await self.response.result }
    }

    /// The serialized value.
    ///
    /// - Throws: ``KiteError`` when the request, validation or serialization failed.
    public var value: Value {
        get async throws(KiteError) { try await self.result.get() }
    }

    /// Cancels the request.
    public func cancel() {
        self.request.cancel()
    }

    /// Resumes the request.
    public func resume() {
        self.request.resume()
    }

    /// Suspends the request.
    public func suspend() {
        self.request.suspend()
    }
}

/// A value that arrives once, awaited by any number of tasks. A struct over its lock box: copies
/// share the state, and making one costs a single allocation.
struct Promise<Value: Sendable>: Sendable {
    private enum State {
        /// Awaited by `first` (the usual single awaiter) and then `others`.
        case pending(first: UnsafeContinuation<Value, Never>?, others: [UnsafeContinuation<Value, Never>])
        case fulfilled(Value)
    }

    private let state = NIOLockedValueBox(State.pending(first: nil, others: []))

    func fulfill(_ value: Value) {
        let (first, others) = self.state.withLockedValue {
            state -> (UnsafeContinuation<Value, Never>?, [UnsafeContinuation<Value, Never>]) in
            guard case .pending(let first, let others) = state else { return (nil, []) }
            state = .fulfilled(value)
            return (first, others)
        }
        first?.resume(returning: value)
        for waiter in others { waiter.resume(returning: value) }
    }

    /// The value; when the awaiting task is cancelled, `request` (if any) is cancelled too.
    func value(cancelling request: BaseRequest?) async -> Value {
        guard let request else { return await self.value }
        return await withTaskCancellationHandler {
            await self.value
        } onCancel: {
            request.cancel()
        }
    }

    var value: Value {
        get async {
            if case .fulfilled(let value) = self.state.withLockedValue({ $0 }) { return value }
            // Unsafe (no checking canary to allocate): `fulfill` resumes each stored waiter exactly once.
            return await withUnsafeContinuation { continuation in
                let ready = self.state.withLockedValue { state -> Value? in
                    switch state {
                    case .pending(nil, let others):
                        state = .pending(first: continuation, others: others)
                        return nil
                    case .pending(let first, var others):
                        others.append(continuation)
                        state = .pending(first: first, others: others)
                        return nil
                    case .fulfilled(let value):
                        return value
                    }
                }
                if let ready { continuation.resume(returning: ready) }
            }
        }
    }
}

/// The async handle of a serialized download: await its ``value``, ``result`` or ``response``.
///
/// Cancelling the task that awaits cancels the download (unless made with `automaticallyCancelling: false`).
///
/// ```swift
/// let fileURL = try await session.download("http://127.0.0.1:8080/bytes/64").serializingDownloadedFileURL().value
/// ```
public struct DownloadTask<Value: Sendable>: Sendable {
    /// The download being serialized.
    public let request: DownloadRequest
    private let promise: Promise<DownloadResponse<Value, KiteError>>
    private let automaticallyCancelling: Bool

    init(
        request: DownloadRequest,
        promise: Promise<DownloadResponse<Value, KiteError>>,
        automaticallyCancelling: Bool
    ) {
        self.request = request
        self.promise = promise
        self.automaticallyCancelling = automaticallyCancelling
    }

    /// The whole response, once the download is over and serialized.
    public var response: DownloadResponse<Value, KiteError> {
        get async { await self.promise.value(cancelling: self.automaticallyCancelling ? self.request : nil) }
    }

    /// The serialized value or the error.
    public var result: Result<Value, KiteError> {
        get async { await self.response.result }
    }

    /// The serialized value.
    ///
    /// - Throws: ``KiteError`` when the download, validation or serialization failed.
    public var value: Value {
        get async throws(KiteError) { try await self.result.get() }
    }

    /// Cancels the download.
    public func cancel() {
        self.request.cancel()
    }

    /// Cancels the download, keeping its bytes for resuming when the server allows it.
    public func cancelProducingResumeData() {
        self.request.cancel(producingResumeData: true)
    }

    /// Resumes the download.
    public func resume() {
        self.request.resume()
    }

    /// Suspends the download.
    public func suspend() {
        self.request.suspend()
    }
}
