import CFuzzer

#if canImport(Glibc)
import Glibc
#endif

/// What each fuzz target runs on one input. Set once by ``fuzzMain(_:)`` before libFuzzer starts.
nonisolated(unsafe) private var target: ((UnsafeBufferPointer<UInt8>) -> Void)?

/// libFuzzer's entry point: one input, handed to the target's body.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    target?(UnsafeBufferPointer(start: size == 0 ? nil : data, count: size))
    return 0
}

/// Runs libFuzzer with the process's arguments, calling `body` for every input; never returns.
/// A target's `main.swift` is `fuzzMain { bytes in ... }`.
public func fuzzMain(_ body: @escaping (UnsafeBufferPointer<UInt8>) -> Void) -> Never {
    target = body
    var argc = CommandLine.argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
    exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzOne(data, size) })
}
