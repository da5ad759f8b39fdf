import ArgumentParser
import Foundation

/// Helpers for the benchmarks: test data, medians, the programs built beside granite-bench.
enum BenchData {
    /// Writes `bytes` pseudo-random bytes (xorshift64*, seeded) to `path`, 1 MiB at a time.
    static func writeRandomFile(_ path: String, bytes: Int, seed: UInt64 = 42) throws {
        guard FileManager.default.createFile(atPath: path, contents: nil),
              let handle = FileHandle(forWritingAtPath: path) else { throw ValidationError("cannot write \(path)") }
        defer { try? handle.close() }
        var random = Random(seed: seed)
        var left = bytes
        var block = [UInt64](repeating: 0, count: max(1, min(1 << 17, (bytes + 7) / 8)))
        while left > 0 {
            for i in block.indices { block[i] = random.next() }
            let n = min(left, block.count * 8)
            try handle.write(contentsOf: block.withUnsafeBytes { Data($0.prefix(n)) })
            left -= n
        }
    }

    /// A seeded pseudo-random generator (xorshift64*): the same data every run.
    struct Random: RandomNumberGenerator {
        private var state: UInt64

        init(seed: UInt64) { state = seed &* 0x9E37_79B9_7F4A_7C15 | 1 }

        mutating func next() -> UInt64 {
            state ^= state >> 12; state ^= state << 25; state ^= state >> 27
            return state &* 0x2545_F491_4F6C_DD1D
        }
    }

    /// The program `name` built beside this one (`granite` next to `granite-bench`).
    static func siblingExecutable(_ name: String) -> String {
        let me = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        return me.deletingLastPathComponent().appendingPathComponent(name).path
    }

    /// The median of `values`.
    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return .nan }
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }
}
