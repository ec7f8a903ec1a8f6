import Dispatch
import Foundation
import NIOConcurrencyHelpers

/// `KiteProbe` (Tests/KiteProbe): one request in a child process, so that a trap fails the test that caused it
/// instead of ending the test run.
enum Probe {
    /// How the child ended and what it printed.
    struct Outcome: CustomStringConvertible {
        /// The exit status, or the signal that ended it.
        let status: Int32
        let signalled: Bool
        /// Standard output, without its last newline.
        let output: String
        /// Standard error (a trap's message).
        let errors: String

        /// Whether the child ran to its end (exit status 0).
        var exitedNormally: Bool { !self.signalled && self.status == 0 }

        var description: String {
            let ending = self.signalled ? "killed by signal \(self.status)" : "exited with \(self.status)"
            return "\(ending); output: \(self.output); errors: \(self.errors.suffix(2_000))"
        }
    }

    /// `.build/<config>/KiteProbe`, next to the test bundle.
    static var executable: URL {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        if directory.pathExtension == "xctest" { directory.deleteLastPathComponent() }
        #if os(macOS)
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            return bundle.bundleURL.deletingLastPathComponent().appendingPathComponent("KiteProbe")
        }
        #endif
        return directory.appendingPathComponent("KiteProbe")
    }

    /// Runs the probe: `kind` (`data`, `download`, `stream`, `upload`) of `url`, with `options`.
    static func run(_ kind: String, _ url: String, _ options: [String] = []) async throws -> Outcome {
        try await offThePool { try Self.runBlocking([kind, url] + options) }
    }

    private static func runBlocking(_ arguments: [String]) throws -> Outcome {
        let process = Process()
        process.executableURL = Self.executable
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        // A trap's backtrace takes seconds to symbolicate; the message is enough.
        environment["SWIFT_BACKTRACE"] = "enable=no"
        process.environment = environment
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        // The probe's own total timeout is 10 s; a child still running at 60 s hangs, and is stopped.
        let pid = process.processIdentifier
        let reaped = NIOLockedValueBox(false)
        DispatchQueue.global().asyncAfter(deadline: .now() + 60) {
            reaped.withLockedValue { if !$0 { kill(pid, SIGKILL) } }
        }
        // Both pipes at once (a child that fills one while the other is read would wait forever).
        let errorData = NIOLockedValueBox(Data())
        let errorsRead = DispatchGroup()
        errorsRead.enter()
        DispatchQueue.global().async {
            let data = errors.fileHandleForReading.readDataToEndOfFile()
            errorData.withLockedValue { $0 = data }
            errorsRead.leave()
        }
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        errorsRead.wait()
        process.waitUntilExit()
        reaped.withLockedValue { $0 = true }
        var text = String(decoding: outputData, as: UTF8.self)
        if text.hasSuffix("\n") { text.removeLast() }
        return Outcome(
            status: process.terminationStatus,
            signalled: process.terminationReason == .uncaughtSignal,
            output: text,
            errors: String(decoding: errorData.withLockedValue { $0 }, as: UTF8.self)
        )
    }
}
