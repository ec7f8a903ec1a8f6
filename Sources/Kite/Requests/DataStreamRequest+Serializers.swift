import Dispatch
import Foundation
import NIOConcurrencyHelpers

/// Turns each chunk of a streamed body into a value, for
/// ``DataStreamRequest/responseStream(using:on:stream:)``, as Alamofire's `DataStreamSerializer` does.
///
/// Each chunk is serialized on its own, as it arrives: the network decides where chunks begin and end, so a
/// serializer that needs whole values (text, JSON) belongs in ``DataStreamRequest/responseStreamString(on:stream:)``
/// or ``DataStreamRequest/responseStreamDecodable(of:on:using:stream:)``, which carry what a chunk leaves
/// unfinished over to the next.
///
/// ```swift
/// struct ByteCount: DataStreamSerializer {
///     func serialize(_ data: Data) throws -> Int { data.count }
/// }
/// session.streamRequest("http://127.0.0.1:8080/stream/3").responseStream(using: ByteCount()) { stream in
///     if case .stream(.success(let count)) = stream.event { print(count) }
/// }
/// ```
public protocol DataStreamSerializer<SerializedObject>: Sendable {
    /// What a chunk becomes.
    associatedtype SerializedObject: Sendable

    /// Serializes one chunk.
    ///
    /// - Parameter data: The chunk.
    /// - Returns: The value.
    /// - Throws: Why the chunk could not be serialized; the handler gets it as `streamDecodingFailed`, and the
    ///   stream goes on.
    func serialize(_ data: Data) throws -> SerializedObject
}

/// Passes each chunk on as it is, as Alamofire's `PassthroughStreamSerializer` does.
///
/// ```swift
/// session.streamRequest("http://127.0.0.1:8080/stream/3").responseStream(using: PassthroughStreamSerializer()) {
///     print($0.value?.count as Any)
/// }
/// ```
public struct PassthroughStreamSerializer: DataStreamSerializer {
    /// Creates the serializer.
    public init() {}

    /// Returns `data`.
    ///
    /// - Parameter data: The chunk.
    /// - Returns: The chunk.
    public func serialize(_ data: Data) throws -> Data { data }
}

extension DataStreamRequest {
    /// One delivery to a serializing closure reader (``responseStreamString(on:stream:)``,
    /// ``responseStreamDecodable(of:on:using:stream:)``, ``responseStream(using:on:stream:)``): a value, a failure
    /// or the end, as Alamofire's `DataStreamRequest.Stream<Success, Failure>`.
    public struct SerializedStream<Success: Sendable, Failure: Error>: Sendable {
        /// What happened.
        public let event: Event
        private let request: DataStreamRequest

        /// What a serializing reader is told.
        public enum Event: Sendable {
            /// A value made from the body, or why one could not be made.
            case stream(Result<Success, Failure>)
            /// The request is over.
            case complete(Completion)
        }

        init(event: Event, request: DataStreamRequest) {
            self.event = event
            self.request = request
        }

        /// The value this event carries, if it carries one.
        public var value: Success? {
            guard case .stream(.success(let value)) = self.event else { return nil }
            return value
        }

        /// The failure this event carries, if it carries one.
        public var error: Failure? {
            guard case .stream(.failure(let error)) = self.event else { return nil }
            return error
        }

        /// How the request ended, when this event is its end.
        public var completion: Completion? {
            guard case .complete(let completion) = self.event else { return nil }
            return completion
        }

        /// Cancels the request from inside the handler.
        public func cancel() {
            self.request.cancel()
        }
    }

    /// Calls `handler` on `queue` with the body as text, decoded as UTF-8 as it arrives, and once more when the
    /// request is over, as Alamofire's `responseStreamString` does.
    ///
    /// A character whose bytes are split between two chunks is delivered whole, with the later chunk's text
    /// (Alamofire decodes each chunk on its own and turns the halves into two U+FFFD). Bytes that are not UTF-8 are
    /// replaced by U+FFFD. A chunk that completes no character delivers nothing.
    ///
    /// ```swift
    /// session.streamRequest("http://127.0.0.1:8080/stream/3").responseStreamString { stream in
    ///     switch stream.event {
    ///     case .stream(.success(let text)): print(text)
    ///     case .complete(let completion): print(completion.error as Any)
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - queue: Where `handler` runs; the session's ``Session/callbackQueue`` by default.
    ///   - handler: Receives the text and the completion.
    /// - Returns: The request.
    @discardableResult
    public func responseStreamString(
        on queue: DispatchQueue? = nil,
        stream handler: @escaping @Sendable (SerializedStream<String, Never>) -> Void
    ) -> Self {
        let pending = NIOLockedValueBox(UTF8Carry())
        return self.responseSerializedStream(
            on: queue,
            handler,
            chunk: { data in
                let text = pending.withLockedValue { $0.decode(data) }
                return text.isEmpty ? [] : [.success(text)]
            },
            end: { _ in
                let text = pending.withLockedValue { $0.finish() }
                return text.isEmpty ? [] : [.success(text)]
            }
        )
    }

    /// Calls `handler` on `queue` with each value of a newline-delimited JSON body (JSON Lines) as its line
    /// arrives, and once more when the request is over: Alamofire's `responseStreamDecodable`, decoding lines.
    ///
    /// Alamofire decodes each chunk as one value, which fails whenever the network splits a value between chunks
    /// or joins two in one; Kite splits the body into lines across chunks (``JSONLinesParser``), skips blank ones
    /// and decodes each other line, and the last line even without a final newline once the body ended whole. A
    /// line that does not decode (or is longer than 1 MiB) is delivered as a `streamDecodingFailed` (or
    /// `streamLineTooLong`) failure naming its number, and the request is cancelled with that error: the lines
    /// after it are not read.
    ///
    /// ```swift
    /// struct Item: Decodable, Sendable { let id: Int }
    /// session.streamRequest("http://127.0.0.1:8080/stream/3").responseStreamDecodable(of: Item.self) { stream in
    ///     switch stream.event {
    ///     case .stream(.success(let item)): print(item.id)
    ///     case .stream(.failure(let error)): print(error)
    ///     case .complete(let completion): print(completion.error as Any)
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - type: The type of each line's value.
    ///   - queue: Where `handler` runs; the session's ``Session/callbackQueue`` by default.
    ///   - decoder: The decoder of each line; `JSONDecoder` by default.
    ///   - handler: Receives the values, a failure and the completion.
    /// - Returns: The request.
    @discardableResult
    public func responseStreamDecodable<Value: Decodable & Sendable>(
        of type: Value.Type = Value.self,
        on queue: DispatchQueue? = nil,
        using decoder: any DataDecoder = JSONDecoder(),
        stream handler: @escaping @Sendable (SerializedStream<Value, KiteError>) -> Void
    ) -> Self {
        let parser = NIOLockedValueBox(JSONLinesParser(of: type, decoder: decoder))
        let failed = NIOLockedValueBox(false)
        return self.responseSerializedStream(
            on: queue,
            handler,
            chunk: { [weak self] data in
                self?.parsing(failed) { try parser.withLockedValue { try $0.parse(data) } } ?? []
            },
            end: { [weak self] completion in
                guard completion.error == nil else { return [] }
                return self?.parsing(failed) { try parser.withLockedValue { try $0.finish() } } ?? []
            }
        )
    }

    /// Calls `handler` on `queue` with what `serializer` makes of each chunk as it arrives, and once more when the
    /// request is over, as Alamofire's `responseStream(using:)` does. A chunk the serializer refuses is delivered as
    /// a `streamDecodingFailed` failure, and the stream goes on.
    ///
    /// ```swift
    /// session.streamRequest("http://127.0.0.1:8080/stream/3").responseStream(using: PassthroughStreamSerializer()) {
    ///     stream in
    ///     print(stream.value?.count as Any)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - serializer: Makes a value of each chunk.
    ///   - queue: Where `handler` runs; the session's ``Session/callbackQueue`` by default.
    ///   - handler: Receives the values, the failures and the completion.
    /// - Returns: The request.
    @discardableResult
    public func responseStream<Serializer: DataStreamSerializer>(
        using serializer: Serializer,
        on queue: DispatchQueue? = nil,
        stream handler: @escaping @Sendable (SerializedStream<Serializer.SerializedObject, KiteError>) -> Void
    ) -> Self {
        let summary = self.summary
        return self.responseSerializedStream(
            on: queue,
            handler,
            chunk: { data in
                do {
                    return [.success(try serializer.serialize(data))]
                } catch {
                    let failure =
                        (error as? KiteError)?.naming(summary)
                        ?? KiteError(
                            code: .streamDecodingFailed,
                            message: "a chunk could not be serialized: \(error)",
                            request: summary,
                            underlyingError: error
                        )
                    return [.failure(failure)]
                }
            },
            end: { _ in [] }
        )
    }

    /// Runs `parse`; a failure is delivered once, and cancels the request with it. Chunks that arrive after it
    /// (already on their way when the request was cancelled) deliver nothing.
    private func parsing<Value>(
        _ failed: NIOLockedValueBox<Bool>,
        _ parse: () throws -> [Value]
    ) -> [Result<Value, KiteError>] {
        guard !failed.withLockedValue({ $0 }) else { return [] }
        do {
            return try parse().map { .success($0) }
        } catch {
            failed.withLockedValue { $0 = true }
            let failure = (error as? KiteError ?? KiteError(code: .streamDecodingFailed, message: "\(error)"))
                .naming(self.summary)
            self.cancel(with: failure)
            return [.failure(failure)]
        }
    }

    /// A closure reader that delivers what `chunk` makes of each chunk, and what `end` makes at the end before the
    /// completion; both run on `queue`, one at a time.
    private func responseSerializedStream<Success, Failure>(
        on queue: DispatchQueue?,
        _ handler: @escaping @Sendable (SerializedStream<Success, Failure>) -> Void,
        chunk: @escaping @Sendable (Data) -> [Result<Success, Failure>],
        end: @escaping @Sendable (Completion) -> [Result<Success, Failure>]
    ) -> Self {
        let queue = queue ?? self.context.callbackQueue
        let reader = StreamSink.Reader.closure(queue) { [weak self] data in
            guard let self else { return }
            for result in chunk(data) {
                handler(SerializedStream(event: .stream(result), request: self))
            }
        }
        self.machine.withLockedValue { $0.record.streamReaders.append(reader) }
        self.appendHandler { [self] outcome in
            let completion = Completion(outcome)
            queue.async {
                for result in end(completion) {
                    handler(SerializedStream(event: .stream(result), request: self))
                }
                handler(SerializedStream(event: .complete(completion), request: self))
            }
        }
        return self
    }
}

/// UTF-8 decoding across chunks: the bytes of a character a chunk leaves unfinished wait for the next chunk.
struct UTF8Carry: Sendable {
    private var carried: [UInt8] = []

    /// The text of `chunk` after the carried bytes, up to the last complete character. Without carried bytes (the
    /// usual case) the chunk is decoded where it is, not copied first.
    mutating func decode(_ chunk: Data) -> String {
        if self.carried.isEmpty {
            let end = chunk.startIndex + Self.completePrefixLength(of: chunk)
            self.carried = Array(chunk[end...])
            return String(decoding: chunk[..<end], as: UTF8.self)
        }
        var bytes = self.carried
        bytes.append(contentsOf: chunk)
        let end = Self.completePrefixLength(of: bytes)
        self.carried = Array(bytes[end...])
        return String(decoding: bytes[..<end], as: UTF8.self)
    }

    /// The carried bytes of an unfinished last character, each replaced by U+FFFD as `String(decoding:)` does.
    mutating func finish() -> String {
        defer { self.carried = [] }
        return String(decoding: self.carried, as: UTF8.self)
    }

    /// How many of `bytes` end before a last character that is not complete yet: a lead byte in the last three
    /// whose sequence runs past the end, with only continuation bytes after it. Anything else (complete, or not
    /// UTF-8) is decoded now.
    static func completePrefixLength(of bytes: some RandomAccessCollection<UInt8>) -> Int {
        var index = bytes.count - 1
        while index >= 0, index >= bytes.count - 3 {
            let byte = bytes[bytes.index(bytes.startIndex, offsetBy: index)]
            if byte & 0xC0 != 0x80 {
                let length =
                    switch byte {
                    case 0xC2...0xDF: 2
                    case 0xE0...0xEF: 3
                    case 0xF0...0xF4: 4
                    default: 1
                    }
                return bytes.count - index < length ? index : bytes.count
            }
            index -= 1
        }
        return bytes.count
    }
}
