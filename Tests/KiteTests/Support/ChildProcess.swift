import Dispatch
import Foundation
import NIOConcurrencyHelpers

/// An executable of this package run as a child process, as a user runs it (`kite`, `KiteProbe`). Shared by the test
/// targets (KiteCLITests links this file).
enum ChildProcess {
    /// How the child ended and what it printed.
    struct Outcome {
        /// The exit status, or the signal that ended it.
        let status: Int32
        let signalled: Bool
        let output: String
        let errors: String
    }

    /// `.build/<config>/NAME`, next to the test bundle.
    static func executable(named name: String) -> URL {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        if directory.pathExtension == "xctest" { directory.deleteLastPathComponent() }
        #if os(macOS)
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            return bundle.bundleURL.deletingLastPathComponent().appendingPathComponent(name)
        }
        #endif
        return directory.appendingPathComponent(name)
    }

    /// Runs `executable` with `arguments` and waits for it (blocking the calling thread: call it off the pool). A
    /// child still running after `timeLimit` is killed.
    static func run(
        _ executable: URL,
        _ arguments: [String],
        environment: [String: String]? = nil,
        timeLimit: Double = 300
    ) throws -> Outcome {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let environment { process.environment = environment }
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let pid = process.processIdentifier
        let reaped = NIOLockedValueBox(false)
        DispatchQueue.global().asyncAfter(deadline: .now() + timeLimit) {
            reaped.withLockedValue { if !$0 { kill(pid, SIGKILL) } }
        }
        // Both pipes at once: read one after the other, a child that fills the second pipe's buffer (64 KiB; an
        // AddressSanitizer report at exit does) waits forever for a reader, and so does the test.
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
        return Outcome(
            status: process.terminationStatus,
            signalled: process.terminationReason == .uncaughtSignal,
            output: String(decoding: outputData, as: UTF8.self),
            errors: String(decoding: errorData.withLockedValue { $0 }, as: UTF8.self)
        )
    }
}
