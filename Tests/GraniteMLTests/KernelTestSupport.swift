import CGraniteKernels
@testable import GraniteML

/// What the C kernel tests share: the instruction-set levels to run and a deterministic generator.
enum KernelTestSupport {
    /// Levels to test (portable C up to the best this CPU has); prints the ones it cannot run.
    static func levels(for suite: String) -> [Int] {
        let top = Int(gk_cpu_level())
        if top < KernelLevel.avx512vnni { print("\(suite): CPU level \(top); higher SIMD levels not tested here") }
        return Array(KernelLevel.portable...top)
    }

    /// A small deterministic generator (no Foundation randomness, same values every run).
    struct Numbers {
        var state: UInt64
        mutating func next(_ range: ClosedRange<Int>) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return range.lowerBound + Int((state >> 33) % UInt64(range.count))
        }
    }
}
