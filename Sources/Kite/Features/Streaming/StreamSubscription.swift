import Foundation
import NIOConcurrencyHelpers

/// One async consumer of a data stream: a small bounded buffer between the pipeline (which
/// `send`s) and the consumer (which calls `next`). When the buffer is full the pipeline waits, so a
/// slow consumer slows the download and memory stays bounded.
final class StreamSubscription: Sendable {
    private struct State {
        var buffer: [Data] = []
        var end: KiteError?? = nil
        var consumer: CheckedContinuation<Data?, any Error>?
        var producers: [CheckedContinuation<Void, Never>] = []
        var consumerGone = false
    }

    private let capacity: Int
    private let state = NIOLockedValueBox(State())

    init(capacity: Int = 4) {
        self.capacity = max(1, capacity)
    }

    var isConsumerGone: Bool {
        self.state.withLockedValue { $0.consumerGone }
    }

    /// Whether ``send(_:)`` would return without waiting for the consumer: its buffer has room for one more
    /// chunk (or the consumer waits, or is gone).
    var acceptsWithoutWaiting: Bool {
        self.state.withLockedValue { state in
            state.consumerGone || state.end != nil || state.consumer != nil || state.buffer.count + 1 < self.capacity
        }
    }

    /// Hands `data` to the consumer; waits while its buffer is full. Returns at once if it is gone.
    func send(_ data: Data) async {
        enum Action {
            case done
            case wake(CheckedContinuation<Data?, any Error>)
            case wait
        }
        let action = self.state.withLockedValue { state -> Action in
            if state.consumerGone || state.end != nil { return .done }
            if let consumer = state.consumer {
                state.consumer = nil
                return .wake(consumer)
            }
            state.buffer.append(data)
            return state.buffer.count >= self.capacity ? .wait : .done
        }
        switch action {
        case .done:
            return
        case .wake(let consumer):
            consumer.resume(returning: data)
        case .wait:
            await withCheckedContinuation { continuation in
                let ready = self.state.withLockedValue { state -> Bool in
                    if state.consumerGone || state.buffer.count < self.capacity { return true }
                    state.producers.append(continuation)
                    return false
                }
                if ready { continuation.resume() }
            }
        }
    }

    /// Ends the stream after the buffered data: normally, or with `error`.
    func finish(with error: KiteError?) {
        let consumer = self.state.withLockedValue { state -> CheckedContinuation<Data?, any Error>? in
            guard state.end == nil else { return nil }
            state.end = .some(error)
            guard state.buffer.isEmpty, let consumer = state.consumer else { return nil }
            state.consumer = nil
            return consumer
        }
        guard let consumer else { return }
        if let error { consumer.resume(throwing: error) } else { consumer.resume(returning: nil) }
    }

    /// The consumer stopped reading: drop its buffer and never wait for it again.
    func consumerLeft() {
        let (producers, consumer) = self.state.withLockedValue { state in
            state.consumerGone = true
            state.buffer = []
            let producers = state.producers
            state.producers = []
            let consumer = state.consumer
            state.consumer = nil
            return (producers, consumer)
        }
        for producer in producers { producer.resume() }
        consumer?.resume(throwing: CancellationError())
    }

    /// The next chunk; `nil` at the end; throws the request's error.
    func next() async throws -> Data? {
        enum Action {
            case chunk(Data, CheckedContinuation<Void, Never>?)
            case end(KiteError?)
            case wait
        }
        let action = self.state.withLockedValue { state -> Action in
            if !state.buffer.isEmpty {
                let chunk = state.buffer.removeFirst()
                let producer = state.producers.isEmpty ? nil : state.producers.removeFirst()
                return .chunk(chunk, producer)
            }
            if let end = state.end { return .end(end) }
            return .wait
        }
        switch action {
        case .chunk(let chunk, let producer):
            producer?.resume()
            return chunk
        case .end(let error):
            if let error { throw error }
            return nil
        case .wait:
            return try await withCheckedThrowingContinuation { continuation in
                let (immediate, producer) = self.state.withLockedValue {
                    state -> (Result<Data?, any Error>?, CheckedContinuation<Void, Never>?) in
                    if state.consumerGone { return (.failure(CancellationError()), nil) }
                    if !state.buffer.isEmpty {
                        let producer = state.producers.isEmpty ? nil : state.producers.removeFirst()
                        return (.success(state.buffer.removeFirst()), producer)
                    }
                    if let end = state.end { return (end.map { .failure($0) } ?? .success(nil), nil) }
                    state.consumer = continuation
                    return (nil, nil)
                }
                producer?.resume()
                if let immediate { continuation.resume(with: immediate) }
            }
        }
    }
}
