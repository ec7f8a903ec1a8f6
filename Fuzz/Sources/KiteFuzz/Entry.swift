import Foundation

@testable import Kite

/// libFuzzer's entry point: runs the chosen target on one input and checks its time bound.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    let start = ContinuousClock.now
    FuzzTarget.selected.run(input)
    let elapsed = start.duration(to: .now)
    if elapsed > FuzzTarget.timeBound {
        fatalError("\(FuzzTarget.selected.rawValue) took \(elapsed) for \(size) bytes (bound \(FuzzTarget.timeBound))")
    }
    return 0
}
