import Foundation

/// Suspends the calling test's task every `every` iterations of a long synchronous loop, so that other tests' tasks
/// run in between.
///
/// The seeded-mutation tests parse thousands of inputs, seconds of CPU in a debug build. Run as synchronous tests,
/// two of them held both threads of the cooperative pool (one per core, two on CI) for tens of seconds, while the
/// in-process servers waited and no awaiting test resumed: in the fresh-clone CI runs of 2026-11-29, a 300 ms connect
/// timeout and a refused connection each took 20–60 s to be reported. A stack dump of the run in that state showed
/// those two tests on the pool's two threads.
func yieldNowAndThen(_ iteration: Int, every: Int = 20) async {
    if iteration % every == 0 { await Task.yield() }
}

/// Runs `body` on a thread of its own and waits for it without holding a thread of the cooperative pool: for work
/// that blocks (waiting for a `kite` process, reading a server's first line) or takes seconds of CPU in a debug build
/// (compressing 200 MiB for a decompression bomb). The pool has one thread per core, two on CI; a blocked one held up
/// other suites' timers, continuations and the in-process servers. `body` records no expectations: they would be
/// made outside the test's task. (KiteCLITests and KiteOpenAPITests compile this file through links.)
func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
    }
}
