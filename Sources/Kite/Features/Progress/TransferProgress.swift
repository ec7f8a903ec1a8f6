/// How far a transfer (an upload or a download) has come.
///
/// Kite's own value type, not `Foundation.Progress`: plain, `Sendable` and cheap to copy. Values
/// reported for one transfer never go down, and a completed transfer's last value has
/// `completedBytes == totalBytes`.
///
/// ```swift
/// session.upload(fileURL, to: "http://127.0.0.1:8080/upload")
///     .uploadProgress { progress in
///         print("\(Int(progress.fractionCompleted * 100))% of \(progress.totalBytes ?? 0) bytes")
///     }
/// ```
public struct TransferProgress: Sendable, Hashable, CustomStringConvertible {
    /// Bytes transferred so far.
    public let completedBytes: Int64

    /// Bytes to transfer in all, when known.
    public let totalBytes: Int64?

    /// Creates a progress value.
    ///
    /// - Parameters:
    ///   - completedBytes: Bytes transferred so far.
    ///   - totalBytes: Bytes to transfer in all, or `nil` when unknown.
    public init(completedBytes: Int64, totalBytes: Int64?) {
        self.completedBytes = completedBytes
        self.totalBytes = totalBytes
    }

    /// The completed share between 0 and 1; 0 while the total is unknown, 1 for an empty transfer.
    public var fractionCompleted: Double {
        guard let totalBytes else { return 0 }
        guard totalBytes > 0 else { return 1 }
        return min(1, max(0, Double(self.completedBytes) / Double(totalBytes)))
    }

    /// Whether every byte of a known total has been transferred.
    public var isFinished: Bool {
        self.totalBytes.map { self.completedBytes >= $0 } ?? false
    }

    /// `1024 of 4096 bytes (25%)`, or `1024 bytes` when the total is unknown.
    public var description: String {
        guard let totalBytes else { return "\(self.completedBytes) bytes" }
        return "\(self.completedBytes) of \(totalBytes) bytes (\(Int((self.fractionCompleted * 100).rounded(.down)))%)"
    }
}
