import Foundation
import GraniteMedia
import GraniteTesting
import XCTest

/// Deterministic test images and a runner for the independent decoder (ImageMagick).
enum TestSupport {
    /// An `rgba8` image with smooth gradients (JPEG-friendly) and a varying alpha.
    static func gradient(width: Int, height: Int, alpha: Bool = false) -> Image {
        var bytes = [UInt8](repeating: 0, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let i = (y * width + x) * 4
                bytes[i] = UInt8(x * 255 / max(width - 1, 1))
                bytes[i + 1] = UInt8(y * 255 / max(height - 1, 1))
                bytes[i + 2] = UInt8((x + y) * 127 / max(width + height - 2, 1) + 64)
                bytes[i + 3] = alpha ? UInt8((x * 7 + y * 3) % 256) : 255
            }
        }
        return try! Image(width: width, height: height, format: .rgba8, bytes: bytes)
    }

    /// A seeded pseudo-random byte generator (SplitMix64), so corpora are the same every run.
    struct Random {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
    }

    /// A fresh temporary folder.
    static func temporaryDirectory(_ name: String) -> String {
        let path = NSTemporaryDirectory() + "granite-\(name)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Runs a program; returns status and stdout.
    @discardableResult
    static func run(_ program: String, _ arguments: [String], stdin: [UInt8]? = nil) throws -> (status: Int32, stdout: [UInt8]) {
        let result = try ChildProgram.run(program, arguments, stdin: stdin)
        return (result.status, result.stdout)
    }

    /// ImageMagick's `convert`, or a skip (a failure when CI=true) naming why.
    static func imageMagick() throws -> String {
        for candidate in ["/usr/bin/convert", "/usr/local/bin/convert", "/usr/bin/magick"]
        where FileManager.default.isExecutableFile(atPath: candidate) {
            return candidate
        }
        let why = "ImageMagick `convert` not found (Debian package imagemagick): it is the independent decoder for these tests"
        try Prerequisite.unmet(why)
    }

    /// exiftool, or a skip (a failure when CI=true) naming why: it reads the metadata we wrote.
    static func exiftool() throws -> String {
        let path = "/usr/bin/exiftool"
        try Prerequisite.require(FileManager.default.isExecutableFile(atPath: path),
                                 "exiftool not found (Debian package libimage-exiftool-perl): it reads back the metadata these tests write")
        return path
    }

    /// The project venv's Python when it can import `module` (an independent decoder from PyPI,
    /// installed by scripts/tiers/pre-media.sh), or a skip (a failure when CI=true) naming `what`.
    static func venvPython(importing module: String, _ what: String) throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let python = root.appendingPathComponent(".venv/bin/python").path
        guard FileManager.default.isExecutableFile(atPath: python),
              (try? ChildProgram.run(python, ["-c", "import \(module)"]))?.status == 0 else {
            try Prerequisite.unmet("\(module) not in .venv (run scripts/tiers/pre-media.sh): \(what)")
        }
        return python
    }

    /// Pillow, with `plugin` imported (and registered, for pillow-heif), decodes `path` upright
    /// (its Exif orientation applied) to raw 8-bit RGBA.
    static func pillowRGBA(_ python: String, _ path: String, plugin: String? = nil) throws -> [UInt8] {
        let load = plugin == "pillow_heif" ? "import pillow_heif; pillow_heif.register_heif_opener(); " : plugin.map { "import \($0); " } ?? ""
        let script = load + "import sys; from PIL import Image, ImageOps; "
            + "sys.stdout.buffer.write(ImageOps.exif_transpose(Image.open(sys.argv[1])).convert('RGBA').tobytes())"
        let r = try ChildProgram.run(python, ["-c", script, path])
        XCTAssertEqual(r.status, 0, "Pillow could not decode \(path): \(r.err)")
        return r.stdout
    }

    /// Decodes a file with ImageMagick to raw 8-bit RGBA.
    static func magickRGBA(_ path: String) throws -> [UInt8] {
        let r = try run(try imageMagick(), [path, "-depth", "8", "rgba:-"])
        XCTAssertEqual(r.status, 0, "ImageMagick could not decode \(path)")
        return r.stdout
    }

    /// The mean absolute difference of two equal-length byte arrays.
    static func meanAbsoluteError(_ a: [UInt8], _ b: [UInt8]) -> Double {
        precondition(a.count == b.count)
        var total = 0
        for i in a.indices { total += abs(Int(a[i]) - Int(b[i])) }
        return Double(total) / Double(max(a.count, 1))
    }

    /// Writes bytes to a file.
    static func write(_ bytes: [UInt8], _ path: String) {
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
    }
}
