import Foundation

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

    /// Runs the probe: `kind` (`data`, `download`, `stream`, `upload`) of `url`, with `options`.
    static func run(_ kind: String, _ url: String, _ options: [String] = []) async throws -> Outcome {
        var environment = ProcessInfo.processInfo.environment
        // A trap's backtrace takes seconds to symbolicate; the message is enough.
        environment["SWIFT_BACKTRACE"] = "enable=no"
        let executable = ChildProcess.executable(named: "KiteProbe")
        // The probe's own total timeout is 10 s; a child still running at 60 s hangs, and is stopped.
        let childEnvironment = environment
        let child = try await offThePool {
            try ChildProcess.run(executable, [kind, url] + options, environment: childEnvironment, timeLimit: 60)
        }
        var text = child.output
        if text.hasSuffix("\n") { text.removeLast() }
        return Outcome(status: child.status, signalled: child.signalled, output: text, errors: child.errors)
    }
}
