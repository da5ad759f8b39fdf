import Foundation
import GraniteGPU

/// Stars (`stars.comp`): a hashed, twinkling star field.
struct Stars: FilterKernel {
    let cell, density, seed: Int
    let brightness, rate, time: Float

    static let description = FilterDescription(
        name: "stars", summary: "A twinkling star field over the image.",
        parameters: [
            .init("cell", .int(min: 4, max: 256, default: 24), "one possible star per cell of this size"),
            .init("density", .float(min: 0, max: 1, default: 0.3), "fraction of cells with a star"),
            .init("brightness", .float(min: 0, max: 1, default: 0.8), "peak star brightness"),
            .init("rate", .float(min: 0, max: 10, default: 1), "twinkles per second"),
            .init("seed", .int(min: 0, max: 65535, default: 7), "star layout"),
            .time,
        ])

    init(_ spec: FilterSpec) {
        (cell, seed) = (spec.int("cell"), spec.int("seed"))
        density = Int((spec.float("density") * 255).rounded())
        (brightness, rate, time) = (spec.float("brightness"), spec.float("rate"), spec.float("time"))
    }

    func floats(time now: Float, size: (width: Int, height: Int)) -> [Float] { [time + now, rate, brightness] }

    func cpu(_ input: RGBAPlane, _ env: CPUEnvironment) -> RGBAPlane {
        let f = env.floats
        return input.map { x, y, p in
            let gx = x / cell, gy = y / cell
            let h = Px.hash((UInt32(truncatingIfNeeded: gx) &* 73_856_093) ^ (UInt32(truncatingIfNeeded: gy) &* 19_349_663) ^ UInt32(seed))
            var o = SIMD3(Float(Px.r(p)), Float(Px.g(p)), Float(Px.b(p))) / 255
            if h & 255 < UInt32(density) {
                let sx = gx * cell + 1 + Int((h >> 8) % UInt32(cell - 2))
                let sy = gy * cell + 1 + Int((h >> 16) % UInt32(cell - 2))
                let phase = Float((h >> 24) & 255) / 256
                let v = f[0] * f[1] + phase
                let twinkle = abs((v - v.rounded(.down)) * 2 - 1)
                let b = f[2] * (0.35 + 0.65 * twinkle)
                let d = abs(x - sx) + abs(y - sy)
                if d == 0 { o += SIMD3(repeating: b) } else if d == 1 { o += SIMD3(repeating: b * 0.45) }
            }
            return Px.pack(Px.unit(o.x), Px.unit(o.y), Px.unit(o.z), Px.a(p))
        }
    }

    func record(_ recorder: inout CommandRecorder, _ io: StepIO) throws(GPUError) {
        try io.dispatch(&recorder, .stars, a: SIMD4(Int32(cell), Int32(seed), Int32(density), 0))
    }
}
