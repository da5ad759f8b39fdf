import Crypto
import Foundation
import GraniteTesting
import XCTest
@testable import GraniteML

/// Where the tests find models and ONNX Runtime fixtures, and how they refuse to skip in CI.
enum TestEnvironment {
    /// The repository root (two folders above this file's folder).
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Where models are looked for, in order: the repository's `Models/`, then the test-only
    /// models that scripts/tiers/pre-ml.sh copies out of a PyPI package into the fixtures folder.
    static var modelDirectories: [URL] {
        [root.appendingPathComponent("Models"), fixturesDirectory.appendingPathComponent("models")]
    }

    /// Fixtures written by scripts/tiers/pre-ml.sh.
    static var fixturesDirectory: URL { root.appendingPathComponent(".build-ml-fixtures") }

    /// The path of a model, or a skip (a failure in CI) when it is missing. A test-only model
    /// listed in scripts/ml/test-models.json must have its SHA-256: anything else fails the test.
    static func model(_ file: String, testFile: StaticString = #filePath, line: UInt = #line) throws -> String {
        guard let url = modelDirectories.map({ $0.appendingPathComponent(file) })
            .first(where: { FileManager.default.fileExists(atPath: $0.path) }) else {
            try unavailable("model \(file) is in none of \(modelDirectories.map(\.path)) (run scripts/tiers/pre-ml.sh)")
        }
        if let expected = try ModelChecksums.sha256(of: file) {
            let actual = try ModelChecksums.verifiedDigest(url.path)
            guard actual == expected else {
                throw FixtureError(description: "\(url.path) has SHA-256 \(actual), expected \(expected) (scripts/ml/test-models.json)")
            }
        }
        return url.path
    }

    /// Prints why a test cannot run; fails under CI, skips otherwise.
    static func unavailable(_ why: String, filePath: StaticString = #filePath, line: UInt = #line) throws -> Never {
        try Prerequisite.unmet(why, filePath: filePath, line: line)
    }
}

/// A fixture or model that is there but wrong: the test fails (never a skip; only a missing
/// prerequisite skips, through `Prerequisite`).
struct FixtureError: Error, CustomStringConvertible {
    let description: String
}

/// The test-only models' expected SHA-256 (scripts/ml/test-models.json), and each file's digest
/// computed once per test run.
enum ModelChecksums {
    private struct Manifest: Decodable {
        struct Model: Decodable { let file: String; let sha256: String }
        let models: [Model]
    }

    private static let lock = NSLock()
    nonisolated(unsafe) private static var digests: [String: String] = [:]

    /// The expected digest of `file`, or nil when it is not a test-only model.
    static func sha256(of file: String) throws -> String? {
        let url = TestEnvironment.root.appendingPathComponent("scripts/ml/test-models.json")
        let manifest = try JSONDecoder().decode(Manifest.self, from: Data(contentsOf: url))
        return manifest.models.first { $0.file == file }?.sha256
    }

    /// The SHA-256 of the file at `path`, lower-case hex.
    static func verifiedDigest(_ path: String) throws -> String {
        if let known = lock.withLock({ digests[path] }) { return known }
        let digest = SHA256.hash(data: try Data(contentsOf: URL(fileURLWithPath: path), options: .mappedIfSafe))
        let hex = digest.map { String(format: "%02x", $0) }.joined()
        lock.withLock { digests[path] = hex }
        return hex
    }
}

/// One ONNX Runtime reference case: the model, the inputs it saw and the outputs it gave.
struct Fixture {
    struct Entry: Decodable {
        let name: String
        let shape: [Int]
        let dtype: String
        let file: String
    }

    private struct Manifest: Decodable {
        let model: String
        let inputs: [Entry]
        let outputs: [Entry]
        let exact_int8: Bool?
    }

    let model: String
    let inputs: [String: Tensor]
    let outputs: [String: Tensor]
    /// ONNX Runtime's u8×s8 GEMM summed exactly on the CPU that made the fixture (VNNI); without,
    /// its AVX2 kernel saturates 16-bit pair sums and an int8 model's reference is off by a step here and there.
    let exactInt8: Bool

    /// Loads CASE.json and its binaries; skips (fails in CI) when the fixtures were not made.
    static func load(_ name: String) throws -> Fixture {
        let dir = TestEnvironment.fixturesDirectory
        let json = dir.appendingPathComponent("\(name).json")
        guard let data = try? Data(contentsOf: json) else {
            try TestEnvironment.unavailable("fixture \(json.path) is missing: run scripts/tiers/pre-ml.sh")
        }
        let manifest = try JSONDecoder().decode(Manifest.self, from: data)
        func read(_ entries: [Entry]) throws -> [String: Tensor] {
            var result: [String: Tensor] = [:]
            for e in entries {
                let bytes = try Data(contentsOf: dir.appendingPathComponent(e.file))
                switch e.dtype {
                case "uint8": result[e.name] = try Tensor(shape: e.shape, uint8: [UInt8](bytes))
                case "float32":
                    let floats = bytes.withUnsafeBytes { raw in
                        (0..<(raw.count / 4)).map { Float(bitPattern: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: $0 * 4, as: UInt32.self))) }
                    }
                    result[e.name] = try Tensor(shape: e.shape, values: floats)
                default: throw FixtureError(description: "\(json.path): \(e.name) has dtype \(e.dtype), expected uint8 or float32")
                }
            }
            return result
        }
        return Fixture(model: manifest.model, inputs: try read(manifest.inputs), outputs: try read(manifest.outputs),
                       exactInt8: manifest.exact_int8 ?? false)
    }
}
