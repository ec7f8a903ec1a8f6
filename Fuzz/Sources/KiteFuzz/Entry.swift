import Foundation

@testable import Kite

#if canImport(Glibc)
import Glibc
#endif

/// libFuzzer's entry point: runs the chosen target on one input and checks its time bound.
///
/// The bound is on the process's CPU time, not the wall clock: with two fuzzers and other work on two cores, an
/// input whose parse takes 5 ms can wait 100 ms for a core (seen), which says nothing about the parser.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    let start = processCPUTime()
    FuzzTarget.selected.run(input)
    let elapsed = processCPUTime() - start
    if elapsed > FuzzTarget.selected.timeBound {
        fatalError(
            "\(FuzzTarget.selected.rawValue) took \(elapsed) of CPU for \(size) bytes (bound \(FuzzTarget.selected.timeBound))"
        )
    }
    return 0
}

/// The CPU time all of the process's threads have used.
func processCPUTime() -> Duration {
    var time = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
    return .seconds(time.tv_sec) + .nanoseconds(time.tv_nsec)
}
