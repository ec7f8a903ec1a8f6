import Foundation

extension Process {
    /// Runs the process, and waits for its exit on a thread of its own, which then lets the `Process` go.
    ///
    /// swift-corelibs-foundation 6.3 keeps a `Process` and its run-loop source in a reference cycle that only
    /// `waitUntilExit()` breaks (SR-6450's fix sets the source to `nil` there and nowhere else): a `Process` that is
    /// watched through `terminationHandler`, or simply released, is never freed, with its pipes, file handles,
    /// arguments and environment. LeakSanitizer reported every child process the tests started that way (a
    /// three-line program shows it). `waitUntilExit()` spins a run loop until the child ends, so it runs on a
    /// plain `Thread`, never on a thread of the cooperative pool, which the in-process servers need.
    func runAndReap() throws {
        try self.run()
        Thread.detachNewThread { self.waitUntilExit() }
    }
}
