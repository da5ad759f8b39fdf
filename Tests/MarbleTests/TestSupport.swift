import Foundation
import GraniteGPU
import GraniteMedia
import GraniteTesting
import Testing
@testable import Marble

/// A fixed-seed generator (SplitMix64) so every run sees the same pixels.
struct SeededRandom: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

enum Fixtures {
    /// Random bytes for an image of `format`, smoothed a little so filters see structure, not only noise.
    static func image(_ width: Int, _ height: Int, format: PixelFormat = .rgba8, seed: UInt64 = 42) -> Image {
        var random = SeededRandom(seed: seed &+ UInt64(width * 7919 + height))
        let count = format.byteCount(width: width, height: height)
        var bytes = [UInt8](repeating: 0, count: count)
        for i in 0..<count { bytes[i] = UInt8.random(in: 0...255, using: &random) }
        if format == .rgba8 {
            // Keep some opaque and some transparent pixels, and a gradient so edges exist.
            for i in stride(from: 0, to: count, by: 4) {
                let pixel = i / 4
                let x = pixel % width
                bytes[i] = UInt8((Int(bytes[i]) + x * 255 / max(1, width - 1)) / 2)
                bytes[i + 3] = pixel % 5 == 0 ? 0 : 255
            }
        }
        return try! Image(width: width, height: height, format: format, bytes: bytes)
    }

    /// A smooth depth map in 0...1.
    static func depth(_ width: Int, _ height: Int) -> Image {
        let values = (0..<(width * height)).map { i -> Float in
            let x = Float(i % width) / Float(width), y = Float(i / width) / Float(height)
            return 0.25 + 0.5 * x * y + 0.2 * (x - y) * (x - y)
        }
        return try! Image(width: width, height: height, floats: values)
    }

    /// The shared context; without a Vulkan device the test is skipped (a failure when CI=true).
    static func gpu() throws -> GPUContext {
        do { return try GPUContext.shared() } catch { try Prerequisite.unmet("no Vulkan device: \(error)") }
    }
}

/// Where two rgba8 images differ and by how much.
struct Difference: CustomStringConvertible {
    var maxDelta = 0
    var differing = 0
    var first: (x: Int, y: Int, gpu: [UInt8], cpu: [UInt8])?
    var pixels = 0

    init(_ gpu: Image, _ cpu: Image) {
        precondition(gpu.width == cpu.width && gpu.height == cpu.height && gpu.format == cpu.format)
        pixels = gpu.pixelCount
        for p in 0..<gpu.pixelCount {
            var pixelDelta = 0
            for c in 0..<4 { pixelDelta = max(pixelDelta, abs(Int(gpu.bytes[p * 4 + c]) - Int(cpu.bytes[p * 4 + c]))) }
            if pixelDelta > 0 {
                differing += 1
                if first == nil || pixelDelta > maxDelta {
                    first = (p % gpu.width, p / gpu.width, Array(gpu.bytes[p * 4..<p * 4 + 4]), Array(cpu.bytes[p * 4..<p * 4 + 4]))
                }
            }
            maxDelta = max(maxDelta, pixelDelta)
        }
    }

    var description: String {
        guard let first else { return "identical" }
        return "max delta \(maxDelta) at \(differing)/\(pixels) pixels; worst at \(first.x),\(first.y): gpu \(first.gpu) cpu \(first.cpu)"
    }
}
