import Dispatch
import Foundation

extension Process {
    /// Runs the process, and once it has exited, lets the `Process` go (on a thread of its own).
    ///
    /// swift-corelibs-foundation 6.3 keeps a `Process` and its run-loop source in a reference cycle that only
    /// `waitUntilExit()` breaks (SR-6450's fix sets the source to `nil` there and nowhere else): a `Process` that is
    /// watched through `terminationHandler`, or simply released, is never freed, with its pipes, file handles,
    /// arguments and environment. LeakSanitizer reported every child process the tests started that way (a
    /// three-line program shows it).
    ///
    /// `waitUntilExit()` is called only after the process has exited. Before that, it runs the calling thread's run
    /// loop in 50 ms steps, and a thread's run loop with no source returns at once: the wait spun at full speed. With
    /// one such thread for each server a test started (tinyproxy, Squid, nginx, the fault server) for as long as
    /// it lived, the 2 cores were busy spinning, the in-process servers starved and some 200 tests failed in a
    /// parallel run (2026-11-29; a stack dump showed 20 threads in `_CFRunLoopFinished`). The thread now sleeps on a
    /// semaphore that the termination handler signals (after the caller's own handler, if it set one).
    func runAndReap() throws {
        let exited = DispatchSemaphore(value: 0)
        let handler = self.terminationHandler
        self.terminationHandler = { process in
            handler?(process)
            exited.signal()
        }
        try self.run()
        Thread.detachNewThread {
            exited.wait()
            self.waitUntilExit()
        }
    }
}
