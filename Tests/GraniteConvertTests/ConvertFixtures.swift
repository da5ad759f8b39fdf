import Foundation
import GraniteCodecs
import GraniteMedia
import GraniteTesting
import XCTest

/// Inputs made here (noisy photos-like images written with our encoder) and process helpers.
enum ConvertFixtures {
    /// A fresh temporary folder.
    static func folder(_ name: String) -> String {
        let path = NSTemporaryDirectory() + "granite-convert-\(name)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// An `rgba8` image of soft diagonal bands plus seeded noise.
    static func photo(width: Int, height: Int, seed: UInt64) -> Image {
        var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        var bytes = [UInt8](repeating: 255, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                state ^= state << 13; state ^= state >> 7; state ^= state << 17
                let noise = Int(state % 24)
                let i = (y * width + x) * 4
                bytes[i] = UInt8((x * 3 + y + noise + Int(seed) * 40) % 256)
                bytes[i + 1] = UInt8((y * 2 + noise) % 256)
                bytes[i + 2] = UInt8((x + y * 2 + noise) % 256)
            }
        }
        return try! Image(width: width, height: height, format: .rgba8, bytes: bytes)
    }

    /// Writes `count` JPEGs (and returns their paths) under `folder`, spread over sub-folders.
    @discardableResult
    static func writeJPEGs(_ count: Int, to folder: String, width: Int = 96, height: Int = 64) throws -> [String] {
        var paths = [String]()
        for i in 0..<count {
            let sub = folder + (i % 3 == 0 ? "" : "/set\(i % 3)")
            try FileManager.default.createDirectory(atPath: sub, withIntermediateDirectories: true)
            let path = sub + "/img\(i).jpg"
            try AtomicFile.write(try Codecs.encodeJPEG(photo(width: width, height: height, seed: UInt64(i)), quality: 90), to: path)
            paths.append(path)
        }
        return paths
    }

    /// Every regular file under `folder`, relative, sorted.
    static func files(_ folder: String) -> [String] {
        var result = [String]()
        guard let walker = FileManager.default.enumerator(atPath: folder) else { return [] }
        while let rel = walker.nextObject() as? String {
            if walker.fileAttributes?[.type] as? FileAttributeType == .typeRegular { result.append(rel) }
        }
        return result.sorted()
    }

    /// The project venv's Python when it can import `module` (an independent reader or writer from
    /// PyPI, installed by scripts/tiers/pre-media.sh), or a skip (a failure when CI=true) naming `what`.
    static func venvPython(importing module: String, _ what: String) throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let python = root.appendingPathComponent(".venv/bin/python").path
        guard FileManager.default.isExecutableFile(atPath: python), (try? ChildProgram.run(python, ["-c", "import \(module)"]))?.status == 0 else {
            try Prerequisite.unmet("\(module) not in .venv (run scripts/tiers/pre-media.sh): \(what)")
        }
        return python
    }

    /// The built `granite` executable, beside the test bundle in the build products folder.
    static func graniteBinary() throws -> String { try ChildProgram.built("granite") }

    /// Runs `granite` with arguments; returns status, stdout and stderr.
    static func runGranite(_ arguments: [String], environment: [String: String] = [:]) throws -> (status: Int32, stdout: String, stderr: String) {
        var env: [String: String?] = ["COLUMNS": "100"]
        for (k, v) in environment { env[k] = v }
        let result = try ChildProgram.run(try graniteBinary(), arguments, environment: env)
        return (result.status, result.out, result.err)
    }
}
