/// One event of a Server-Sent Events stream (`text/event-stream`).
///
/// ``ServerSentEventParser`` and ``ServerSentEventSequence`` produce these from a stream such as:
///
/// ```text
/// event: price
/// id: 42
/// data: {"symbol":"KITE",
/// data: "price":7}
///
/// ```
///
/// which is one event:
///
/// ```swift
/// let event = ServerSentEvent(event: "price", data: "{\"symbol\":\"KITE\",\n\"price\":7}", id: "42")
/// print(event.type)  // price
/// ```
public struct ServerSentEvent: Sendable, Hashable {
    /// The event type from the `event` field, or `nil` when the stream set none, which means `message`.
    public var event: String?

    /// The data: the values of the event's `data` fields joined with LF (`"\n"`).
    public var data: String

    /// The last event ID when the event was dispatched: the value of the most recent `id` field of the stream,
    /// whether in this event or an earlier one, or `nil` when there was none or it was reset with an empty `id`.
    public var id: String?

    /// The reconnection time from a `retry` field, when the stream set one since the previous event.
    ///
    /// A `retry` field in a block without data dispatches no event, so its value is carried to the next event.
    /// ``ServerSentEventParser/reconnectionTime`` always holds the latest value.
    public var retry: Duration?

    /// Creates an event.
    ///
    /// ```swift
    /// let event = ServerSentEvent(data: "hello")
    /// ```
    ///
    /// - Parameters:
    ///   - event: The event type, or `nil` for `message`.
    ///   - data: The data.
    ///   - id: The last event ID.
    ///   - retry: The reconnection time the stream set with this event.
    public init(event: String? = nil, data: String, id: String? = nil, retry: Duration? = nil) {
        self.event = event
        self.data = data
        self.id = id
        self.retry = retry
    }

    /// The event type as a browser's `EventSource` reports it: ``event``, or `message` when that is `nil`.
    ///
    /// ```swift
    /// print(ServerSentEvent(data: "hi").type)  // message
    /// ```
    public var type: String {
        self.event ?? "message"
    }
}
