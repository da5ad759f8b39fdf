import Foundation
import XCTest
@testable import GraniteML

/// Where the tests find models and ONNX Runtime fixtures, and how they refuse to skip in CI.
enum TestEnvironment {
    /// The repository root (two folders above this file's folder).
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// True when running under CI (CI=true), where a missing prerequisite is a failure.
    static var isCI: Bool { ProcessInfo.processInfo.environment["CI"] == "true" }

    /// The shared model folder (GRANITE_SHARED/models or ../shared/models).
    static var modelsDirectory: URL {
        if let shared = ProcessInfo.processInfo.environment["GRANITE_SHARED"] {
            return URL(fileURLWithPath: shared).appendingPathComponent("models")
        }
        return root.deletingLastPathComponent().appendingPathComponent("shared/models")
    }

    /// Fixtures written by scripts/tiers/pre-ml.sh.
    static var fixturesDirectory: URL { root.appendingPathComponent(".build-ml-fixtures") }

    /// The path of a shared model, or a skip (a failure in CI) when it is missing.
    static func model(_ file: String) throws -> String {
        let url = modelsDirectory.appendingPathComponent(file)
        guard FileManager.default.fileExists(atPath: url.path) else {
            try unavailable("model \(url.path) is missing")
        }
        return url.path
    }

    /// Prints why a test cannot run; fails under CI, skips otherwise.
    static func unavailable(_ why: String, file: StaticString = #filePath, line: UInt = #line) throws -> Never {
        print("GraniteMLTests: cannot run: \(why)")
        if isCI {
            XCTFail("required in CI: \(why)", file: file, line: line)
            throw XCTSkip("failed above: \(why)")
        }
        throw XCTSkip(why)
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
    }

    let model: String
    let inputs: [String: Tensor]
    let outputs: [String: Tensor]

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
                default: throw XCTSkip("unexpected fixture dtype \(e.dtype)")
                }
            }
            return result
        }
        return Fixture(model: manifest.model, inputs: try read(manifest.inputs), outputs: try read(manifest.outputs))
    }
}
