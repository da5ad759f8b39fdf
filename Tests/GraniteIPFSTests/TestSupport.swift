import Foundation
import GraniteIPFSTesting
import GraniteTesting
import XCTest

/// Paths, fixtures and the `aleph-cid` oracle shared by the IPFS tests.
enum TestSupport {
    /// The package root (two levels above this file's folder).
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// The project venv's python (made by scripts/tiers/pre-ipfs.sh).
    static var python: String { root.appendingPathComponent(".venv/bin/python").path }

    /// Skips (locally) or fails (CI=true) when `reason` says a prerequisite is missing.
    static func requirement(_ ok: Bool, _ reason: String, filePath: StaticString = #filePath, line: UInt = #line) throws {
        try Prerequisite.require(ok, "\(reason) (run scripts/tiers/pre-ipfs.sh)", filePath: filePath, line: line)
    }

    /// A fresh temporary folder, removed by the caller's `addTeardownBlock`.
    static func tempDir(_ test: XCTestCase) throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("granite-ipfs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        test.addTeardownBlock { try? FileManager.default.removeItem(at: dir) }
        return dir
    }

    /// `count` deterministic pseudo-random bytes (xorshift64*, seeded).
    static func bytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        var out = [UInt8](repeating: 0, count: count)
        out.withUnsafeMutableBytes { buf in
            var i = 0
            while i < count {
                state ^= state >> 12; state ^= state << 25; state ^= state >> 27
                var word = state &* 0x2545_F491_4F6C_DD1D
                let n = min(8, count - i)
                withUnsafeBytes(of: &word) { buf.baseAddress!.advanced(by: i).copyMemory(from: $0.baseAddress!, byteCount: n) }
                i += n
            }
        }
        return out
    }

    /// Writes `bytes` to `dir/name` (creating folders) and returns the path.
    @discardableResult
    static func write(_ bytes: [UInt8], to dir: URL, _ name: String) throws -> String {
        let url = dir.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(bytes).write(to: url)
        return url.path
    }

    /// Runs the oracle: a Python snippet with `aleph_cid` imported and `args` in `sys.argv[1:]`;
    /// returns its stdout lines. Skips (fails in CI) when aleph-cid is not installed.
    static func oracle(_ script: String, _ args: [String]) throws -> [String] {
        let ok = FileManager.default.isExecutableFile(atPath: python)
            && (try? run(python, ["-c", "import aleph_cid"])) != nil
        try requirement(ok, "the oracle aleph-cid is not installed in \(python)")
        return try run(python, ["-c", "import aleph_cid, sys\n" + script] + args)
            .split(separator: "\n").map(String.init)
    }

    /// Runs a program, returns its stdout; throws if it exits non-zero.
    static func run(_ program: String, _ args: [String]) throws -> String {
        try ChildProgram.output(program, args)
    }
}
