import Logging
import NIOConcurrencyHelpers

/// A swift-log handler that keeps every entry, for tests (swift-log's test handler pattern).
struct RecordingLogHandler: LogHandler {
    struct Entry: Sendable {
        let level: Logger.Level
        let message: String
        let metadata: Logger.Metadata
    }

    /// The entries of every handler made from one recorder.
    final class Recorder: Sendable {
        let entries = NIOLockedValueBox<[Entry]>([])

        /// A logger at `level` whose entries this recorder keeps.
        func logger(level: Logger.Level) -> Logger {
            var logger = Logger(label: "kite.test") { _ in RecordingLogHandler(recorder: self) }
            logger.logLevel = level
            return logger
        }

        var all: [Entry] { self.entries.withLockedValue { $0 } }
    }

    let recorder: Recorder
    var logLevel: Logger.Level = .trace
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { self.metadata[key] }
        set { self.metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var metadata = self.metadata
        if let more = event.metadata { metadata.merge(more) { _, new in new } }
        self.recorder.entries.withLockedValue {
            $0.append(Entry(level: event.level, message: event.message.description, metadata: metadata))
        }
    }
}
