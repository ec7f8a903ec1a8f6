import Foundation

/// Splits a stream of byte chunks into lines, keeping the unfinished line between chunks.
///
/// Lines are handed out as bytes without their terminator, so callers decide how to decode them. Splitting works on
/// bytes: CR and LF never occur inside a multi-byte UTF-8 sequence, so a character split across chunks is simply kept
/// in the pending line until its line ends.
struct LineSplitter: Sendable {
    /// Which bytes end a line.
    enum Terminators: Sendable {
        /// LF ends a line, and one CR before it is dropped, so LF and CRLF both work.
        case lineFeed
        /// CRLF, LF or CR each end a line, as in Server-Sent Events; a CR at the end of one chunk and an LF at the
        /// start of the next are one line ending.
        case anyNewline
    }

    private static let lineFeed: UInt8 = 0x0A
    private static let carriageReturn: UInt8 = 0x0D
    /// Pending capacity beyond this is released after a line, so one long line does not pin memory for the stream.
    private static let retainedCapacity = 64 * 1024

    let terminators: Terminators
    /// The longest line allowed, in bytes without the terminator.
    let maximumLineLength: Int
    /// The bytes of the line not yet terminated.
    private var pending: [UInt8] = []
    /// The previous chunk ended with CR, so an LF starting this chunk belongs to that line ending.
    private var skipsLeadingLineFeed = false
    /// The 1-based number of the pending line.
    private(set) var lineNumber = 1

    init(terminators: Terminators, maximumLineLength: Int) {
        self.terminators = terminators
        self.maximumLineLength = max(0, maximumLineLength)
    }

    /// Splits `chunk`, calling `emit` with `state`, each line it completes and that line's 1-based number, in order.
    ///
    /// The state is passed through so that a parser can keep it beside the splitter and update both at once.
    ///
    /// - Throws: A ``KiteError`` with code ``KiteError/Code-swift.struct/streamLineTooLong`` when a line exceeds the
    ///   maximum length, or whatever `emit` throws.
    mutating func split<State>(
        _ chunk: Data,
        into state: inout State,
        emit: (inout State, UnsafeRawBufferPointer, Int) throws -> Void
    ) throws {
        try chunk.withUnsafeBytes { bytes in
            var start = 0
            var index = 0
            if self.skipsLeadingLineFeed, !bytes.isEmpty {
                self.skipsLeadingLineFeed = false
                if bytes[0] == Self.lineFeed {
                    start = 1
                    index = 1
                }
            }
            while index < bytes.count {
                let byte = bytes[index]
                let endsLine =
                    byte == Self.lineFeed || (byte == Self.carriageReturn && self.terminators == .anyNewline)
                if endsLine {
                    try self.complete(UnsafeRawBufferPointer(rebasing: bytes[start..<index]), into: &state, emit: emit)
                    if byte == Self.carriageReturn {
                        if index + 1 < bytes.count {
                            if bytes[index + 1] == Self.lineFeed {
                                index += 1
                            }
                        } else {
                            self.skipsLeadingLineFeed = true
                        }
                    }
                    start = index + 1
                }
                index += 1
            }
            if start < bytes.count {
                self.pending.append(contentsOf: bytes[start...])
                try self.checkLength(of: self.pending.count, endsWithCarriageReturn: self.pending.last == 0x0D)
            }
        }
    }

    /// Ends the stream: calls `emit` with the unterminated last line when `emitsUnterminatedLine` is true and there is
    /// one, then resets the splitter for a new stream.
    ///
    /// - Throws: Whatever `emit` throws.
    mutating func finish<State>(
        emitsUnterminatedLine: Bool,
        into state: inout State,
        emit: (inout State, UnsafeRawBufferPointer, Int) throws -> Void
    ) throws {
        defer { self.reset() }
        guard emitsUnterminatedLine, !self.pending.isEmpty else { return }
        var line = self.pending
        if self.terminators == .lineFeed, line.last == Self.carriageReturn {
            line.removeLast()
        }
        try self.checkLength(of: line.count, endsWithCarriageReturn: false)
        let lineNumber = self.lineNumber
        try line.withUnsafeBytes { try emit(&state, $0, lineNumber) }
    }

    /// Forgets the pending line and starts counting lines again.
    mutating func reset() {
        self.pending = []
        self.skipsLeadingLineFeed = false
        self.lineNumber = 1
    }

    /// Emits the pending bytes followed by `tail` as one line.
    private mutating func complete<State>(
        _ tail: UnsafeRawBufferPointer,
        into state: inout State,
        emit: (inout State, UnsafeRawBufferPointer, Int) throws -> Void
    ) throws {
        if self.pending.isEmpty {
            var line = tail
            if self.terminators == .lineFeed, line.last == Self.carriageReturn {
                line = UnsafeRawBufferPointer(rebasing: line.dropLast())
            }
            try self.checkLength(of: line.count, endsWithCarriageReturn: false)
            try emit(&state, line, self.lineNumber)
        } else {
            self.pending.append(contentsOf: tail)
            if self.terminators == .lineFeed, self.pending.last == Self.carriageReturn {
                self.pending.removeLast()
            }
            try self.checkLength(of: self.pending.count, endsWithCarriageReturn: false)
            let lineNumber = self.lineNumber
            try self.pending.withUnsafeBytes { try emit(&state, $0, lineNumber) }
            self.pending.removeAll(keepingCapacity: self.pending.capacity <= Self.retainedCapacity)
        }
        self.lineNumber += 1
    }

    /// Throws when a line of `count` bytes is too long; a final CR may still turn out to be part of a CRLF.
    private func checkLength(of count: Int, endsWithCarriageReturn: Bool) throws {
        let length = endsWithCarriageReturn && self.terminators == .lineFeed ? count - 1 : count
        guard length > self.maximumLineLength else { return }
        throw KiteError(
            code: .streamLineTooLong,
            message:
                "line \(self.lineNumber) of the stream is longer than the maximum line length of "
                + "\(self.maximumLineLength) bytes"
        )
    }
}
