import Foundation

@testable import KiteUnderFuzz

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

/// The program's entry point. SwiftPM links an executable target's `main` to `KiteFuzz_main` (it renames an
/// executable's entry point so tests can import it), so libFuzzer's own `main` is never used: this one hands the
/// command line to libFuzzer's driver with the callback above, as that `main` would.
@_cdecl("KiteFuzz_main")
func kiteFuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv, fuzzOne)
}

/// libFuzzer's driver (`int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*)(const uint8_t *, size_t))`).
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt
