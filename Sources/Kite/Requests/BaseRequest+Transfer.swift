import Dispatch
import Foundation
import NIOCore
import NIOFoundationCompat

extension BaseRequest {
    /// Calls `handler` on `queue` as the request body is sent. Values never go down; the last one of a
    /// completed upload has `completedBytes == totalBytes`.
    ///
    /// ```swift
    /// session.upload(Data(count: 1_000_000), to: "http://127.0.0.1:8080/upload")
    ///     .uploadProgress { progress in print(progress) }
    ///     .responseData { _ in }
    /// ```
    ///
    /// - Parameters:
    ///   - queue: Where `handler` runs, one call at a time and in order (also on a concurrent queue);
    ///     the session's ``Session/callbackQueue`` by default.
    ///   - handler: Receives each progress value.
    /// - Returns: The request.
    @discardableResult
    public func uploadProgress(
        queue: DispatchQueue? = nil,
        _ handler: @escaping @Sendable (TransferProgress) -> Void
    ) -> Self {
        self.uploadReporter.addHandler(queue: queue ?? self.context.callbackQueue, handler)
        return self
    }

    /// The upload progress as an async sequence that ends when the request does.
    ///
    /// ```swift
    /// let request = session.upload(fileURL, to: "http://127.0.0.1:8080/upload")
    /// let task = request.serializingData()
    /// for await progress in request.uploadProgress() { print(progress.fractionCompleted) }
    /// ```
    ///
    /// - Parameter bufferingPolicy: How many values to keep for a slow reader.
    /// - Returns: The sequence.
    public func uploadProgress(
        bufferingPolicy: AsyncStream<TransferProgress>.Continuation.BufferingPolicy = .unbounded
    ) -> AsyncStream<TransferProgress> {
        self.uploadReporter.makeStream(bufferingPolicy: bufferingPolicy)
    }

    /// Calls `handler` on `queue` as the response body arrives. The total comes from `Content-Length`
    /// only when the body is not content-encoded; the last value of a completed download has
    /// `completedBytes == totalBytes`.
    ///
    /// ```swift
    /// session.request("http://127.0.0.1:8080/bytes/100000")
    ///     .downloadProgress { progress in print(progress) }
    ///     .responseData { _ in }
    /// ```
    ///
    /// - Parameters:
    ///   - queue: Where `handler` runs, one call at a time and in order (also on a concurrent queue);
    ///     the session's ``Session/callbackQueue`` by default.
    ///   - handler: Receives each progress value.
    /// - Returns: The request.
    @discardableResult
    public func downloadProgress(
        queue: DispatchQueue? = nil,
        _ handler: @escaping @Sendable (TransferProgress) -> Void
    ) -> Self {
        self.downloadReporter.addHandler(queue: queue ?? self.context.callbackQueue, handler)
        return self
    }

    /// The download progress as an async sequence that ends when the request does.
    ///
    /// ```swift
    /// let request = session.request("http://127.0.0.1:8080/drip?numbytes=5&duration=1")
    /// let task = request.serializingData()
    /// for await progress in request.downloadProgress() { print(progress.completedBytes) }
    /// ```
    ///
    /// - Parameter bufferingPolicy: How many values to keep for a slow reader.
    /// - Returns: The sequence.
    public func downloadProgress(
        bufferingPolicy: AsyncStream<TransferProgress>.Continuation.BufferingPolicy = .unbounded
    ) -> AsyncStream<TransferProgress> {
        self.downloadReporter.makeStream(bufferingPolicy: bufferingPolicy)
    }

    /// Sends this request's body no faster than `bytesPerSecond` (a token bucket), on top of the
    /// session's ``Session/Configuration/maximumUploadRate``. Call it before the request starts.
    ///
    /// ```swift
    /// session.upload(fileURL, to: "http://127.0.0.1:8080/upload").limitUploadRate(to: 64 * 1024)
    /// ```
    ///
    /// - Parameter bytesPerSecond: The rate.
    /// - Returns: The request.
    @discardableResult
    public func limitUploadRate(to bytesPerSecond: Int) -> Self {
        self.machine.withLockedValue { $0.record.uploadLimiter = RateLimiter(bytesPerSecond: bytesPerSecond) }
        return self
    }

    /// Reads this request's response body no faster than `bytesPerSecond` (a token bucket), on top
    /// of the session's ``Session/Configuration/maximumDownloadRate``. Reading slower makes the
    /// server send slower. Call it before the request starts.
    ///
    /// ```swift
    /// session.download("http://127.0.0.1:8080/bytes/1000000").limitDownloadRate(to: 256 * 1024)
    /// ```
    ///
    /// - Parameter bytesPerSecond: The rate.
    /// - Returns: The request.
    @discardableResult
    public func limitDownloadRate(to bytesPerSecond: Int) -> Self {
        self.machine.withLockedValue { $0.record.downloadLimiter = RateLimiter(bytesPerSecond: bytesPerSecond) }
        return self
    }

    var uploadLimiters: [RateLimiter] {
        let own = self.machine.withLockedValue { $0.record.uploadLimiter }
        guard own != nil || self.context.uploadLimiter != nil else { return [] }
        return [own, self.context.uploadLimiter].compactMap { $0 }
    }

    var downloadLimiters: [RateLimiter] {
        let own = self.machine.withLockedValue { $0.record.downloadLimiter }
        guard own != nil || self.context.downloadLimiter != nil else { return [] }
        return [own, self.context.downloadLimiter].compactMap { $0 }
    }

    /// `body` with its bytes counted as the engine pulls them: suspension and the upload rate limits
    /// are honoured per chunk, and upload progress is reported. A body that is one write in memory (at most
    /// one slice, no rate limit: ``RequestBodySource/makeBody(for:sliced:summary:)``) is returned as it is;
    /// its progress is reported as it is handed to the engine.
    ///
    /// What the engine is given holds the request only weakly, and the body's source and iterator live in the
    /// request's ``UploadFeed``. async-http-client 1.37 keeps the task that streams a body forever when an answer
    /// of 300 or more ends the exchange while it waits to write a chunk (RELIABILITY.md). ``UploadWatch`` keeps it
    /// from waiting in all but a narrow race; a task that still does keeps one chunk, not the request, the body or
    /// an open file.
    func observingUpload(_ body: TransportRequestBody) -> TransportRequestBody {
        guard case .stream(let length, let replayable, let makeChunks) = body else { return body }
        self.machine.withLockedValue { $0.record.uploadFeed = UploadFeed(makeChunks: makeChunks) }
        return .stream(length: length, replayable: replayable) { [weak self] in
            guard let self else { return ByteChunks(chunks: []) }
            let limiters = self.uploadLimiters
            return ByteChunks(makeNext: { [weak self] in
                let iteration = self?.startUploadIteration()
                var sent: Int64 = 0
                return { [weak self] () async throws -> ByteBuffer? in
                    guard let self, let iteration else { return nil }
                    switch await self.pass() {
                    case .proceed, .park: break
                    case .stop(let reason): throw reason
                    // The engine may pull the body after the response has ended (a server that
                    // answers before reading it all): the body ends here.
                    case .over: return nil
                    }
                    let taken = self.machine.withLockedValue { $0.record.uploadFeed?.take(iteration) }
                    guard var iterator = taken, let chunk = try await iterator.next() else { return nil }
                    if !limiters.isEmpty {
                        try await limiters.acquire(chunk.readableBytes)
                    }
                    sent += Int64(chunk.readableBytes)
                    self.countUpload(sent, total: length, puttingBack: (iterator, iteration))
                    return chunk
                }
            })
        }
    }

    /// Starts an iteration of the attempt's upload body from its beginning (``UploadFeed/start(_:)``).
    private func startUploadIteration() -> Int? {
        guard let makeChunks = self.machine.withLockedValue({ $0.record.uploadFeed?.makeChunks }) else { return nil }
        let iterator = makeChunks().makeAsyncIterator()
        return self.machine.withLockedValue { $0.record.uploadFeed?.start(iterator) }
    }

    /// Records that `sent` body bytes of this attempt went to the engine.
    @inline(never)
    func countUpload(
        _ sent: Int64,
        total: Int64?,
        puttingBack feed: (iterator: ByteChunks.AsyncIterator, iteration: Int)? = nil
    ) {
        // One lock round trip per chunk: the reporters' state and the upload's iterator live in the same box.
        let observed = self.machine.withLockedValue { machine in
            machine.record.bytesSent = sent
            if let feed { machine.record.uploadFeed?.putBack(feed.iterator, feed.iteration) }
            return machine.record.progress.upload.hasObservers
        }
        if let monitor = self.context.eventMonitor {
            if let progress = self.uploadReporter.report(completed: sent, total: total) {
                monitor.request(self, didUpdateUploadProgress: progress)
            }
        } else if observed {
            self.uploadReporter.report(completed: sent, total: total)
        }
    }
}
