import Foundation
import HTTPTypes
import NIOCore

/// Where a request's response body goes: what differs between the kinds of request, given to the pipeline
/// as a value. Memory (``MemorySink``: data and upload requests), a file (``FileSink``: downloads) or the
/// caller (``StreamSink``: stream requests).
///
/// A sink keeps no mutable state of its own: what it must remember across attempts lives in the request's
/// state machine (``RequestRecord``), under the request's one lock.
protocol ResponseSink: Sendable {
    /// How the engine hands the body over.
    var bodyDelivery: BodyDelivery { get }

    /// The receive stage's loop: reads the body of `response` into `outcome`, each chunk through
    /// ``BaseRequest/nextChunk(_:counter:)`` (suspension, rate limits, progress).
    nonisolated(nonsending) func receive(
        _ response: TransportResponse,
        into outcome: inout RequestOutcome,
        counter: inout BodyCounter,
        for request: BaseRequest
    ) async throws(KiteError)

    /// Cleans up after a failed attempt before the next (a download removes its partial file).
    func prepareForRetry(of request: BaseRequest) async

    /// Whether ``finalize(_:of:)`` does anything: the deliver stage skips the async call when not.
    var finalizes: Bool { get }

    /// The last step before the handlers run, after validation (a download moves its file into place).
    func finalize(_ outcome: RequestOutcome, of request: BaseRequest) async -> RequestOutcome

    /// The outcome of a request that ended before a response head arrived; for a request cancelled before it
    /// started, in place of ``finalize(_:of:)`` (no stage ran). Called under the request's lock, so it does no
    /// I/O: a file to remove is returned for the caller to remove after the lock.
    func settleUnstarted(
        _ outcome: RequestOutcome,
        producingResumeData: Bool
    ) -> (outcome: RequestOutcome, discard: URL?)
}

extension ResponseSink {
    func prepareForRetry(of request: BaseRequest) async {}

    var finalizes: Bool { false }

    func finalize(_ outcome: RequestOutcome, of request: BaseRequest) async -> RequestOutcome { outcome }

    func settleUnstarted(
        _ outcome: RequestOutcome,
        producingResumeData: Bool
    ) -> (outcome: RequestOutcome, discard: URL?) { (outcome, nil) }
}

/// The body collected in memory, within the request's response size limit (data and upload requests).
struct MemorySink: ResponseSink {
    var bodyDelivery: BodyDelivery { .asRead }

    nonisolated(nonsending) func receive(
        _ response: TransportResponse,
        into outcome: inout RequestOutcome,
        counter: inout BodyCounter,
        for request: BaseRequest
    ) async throws(KiteError) {
        let limit = request.responseSizeLimit
        try counter.checkAnnounced(against: limit, for: request)
        var iterator = response.body.makeAsyncIterator()
        var collected: ByteBuffer?
        while var chunk = try await request.nextChunk(&iterator, counter: &counter) {
            try counter.checkReceived(against: limit, for: request)
            if collected == nil {
                collected = chunk
            } else {
                collected?.writeBuffer(&chunk)
            }
        }
        outcome.data = collected.map { Data(buffer: $0, byteTransferStrategy: .noCopy) } ?? Data()
    }
}

/// The body handed to the caller's readers as it arrives, after the validators checked the head
/// (stream requests). A stream that delivered bytes is not retried: its readers would see them twice.
struct StreamSink: ResponseSink {
    /// Each part as it arrives, with the engine paused (and the idle-read timeout not counting) while the
    /// readers hold the stream back, so a suspended or slow reader does not time the stream out.
    var bodyDelivery: BodyDelivery { .gathered(batched: false) }

    /// A reader of the stream.
    enum Reader: Sendable {
        /// An async sequence's buffer.
        case subscription(StreamSubscription)
        /// A closure, called on its queue with each chunk; the next waits until it returned.
        case closure(DispatchQueue, @Sendable (Data) -> Void)
    }

    nonisolated(nonsending) func receive(
        _ response: TransportResponse,
        into outcome: inout RequestOutcome,
        counter: inout BodyCounter,
        for request: BaseRequest
    ) async throws(KiteError) {
        // The validators added so far check the head before any body is delivered.
        let pending = request.machine.withLockedValue { $0.takePendingValidators() }
        for validator in pending {
            if let error = validator(outcome) { throw error }
        }
        // A transport that waits for the head gets it before the pipeline would wait for the server or the
        // reader, or fails; parts already there are buffered first, and a body that ends without a wait leaves
        // the head to the request's end, so the caller wakes once (RequestRecord.responseHeadHandler). The
        // request is answered from here on: no attempt follows.
        // A stream has no size limit unless it asks for one (DataStreamRequest.limitResponseSize(to:)): it does not
        // hold its body, so the session's limit, which is for bodies held in memory, does not apply.
        // One lock for both: the limit, and the head's handler unless the head announces too much (the handler
        // then gets the error).
        let head = outcome.response
        typealias PendingHead = (handler: @Sendable (HTTPResponse) -> Void, head: HTTPResponse)
        let (limit, taken) = request.machine.withLockedValue { machine -> (Int64?, PendingHead?) in
            let limit = machine.record.maximumResponseSize ?? nil
            if counter.announcesMore(than: limit) { return (limit, nil) }
            guard let head, let handler = machine.record.responseHeadHandler.take() else { return (limit, nil) }
            machine.bodyDelivered()
            return (limit, (handler: handler, head: head))
        }
        try counter.checkAnnounced(against: limit, for: request)
        var pendingHead = taken
        func deliverHead() {
            if let pending = pendingHead.take() { pending.handler(pending.head) }
        }
        var iterator = response.body.makeAsyncIterator()
        while true {
            // A throttled body may wait for its limiter, so the head goes first.
            if pendingHead != nil, response.body.isReady?() != true || !counter.limiters.isEmpty {
                deliverHead()
            }
            let next: ByteBuffer?
            do {
                next = try await request.nextChunk(&iterator, counter: &counter)
            } catch {
                deliverHead()
                throw error
            }
            guard let chunk = next else { break }
            do throws(KiteError) {
                try counter.checkReceived(against: limit, for: request)
            } catch {
                deliverHead()
                throw error
            }
            let data = Data(buffer: chunk, byteTransferStrategy: .noCopy)
            let readers = request.machine.withLockedValue { machine in
                machine.bodyDelivered()
                return machine.record.streamReaders
            }
            for reader in readers {
                switch reader {
                case .subscription(let subscription):
                    if pendingHead != nil, !subscription.acceptsWithoutWaiting { deliverHead() }
                    await subscription.send(data)
                case .closure(let queue, let handler):
                    await withCheckedContinuation { continuation in
                        queue.async {
                            handler(data)
                            continuation.resume()
                        }
                    }
                }
            }
        }
    }
}
