import Foundation
import GraniteGPU

/// God rays (`godray.comp`): light shafts from a (gently moving) light point.
struct GodRay: FilterKernel {
    static let samples = 24
    let x, y, decay, weight, exposure, density, wobble, time: Float

    static let description = FilterDescription(
        name: "godRay", summary: "Light shafts streaming from a light point through bright areas.",
        parameters: [
            .init("x", .float(min: 0, max: 1, default: 0.5), "light position, fraction of width"),
            .init("y", .float(min: 0, max: 1, default: 0.25), "light position, fraction of height"),
            .init("decay", .float(min: 0.5, max: 1, default: 0.95), "light falloff per step"),
            .init("weight", .float(min: 0, max: 4, default: 0.6), "strength of each step"),
            .init("exposure", .float(min: 0, max: 4, default: 1), "overall gain of the rays"),
            .init("density", .float(min: 0, max: 1, default: 0.6), "how far towards the light the rays reach"),
            .init("wobble", .float(min: 0, max: 0.2, default: 0.03), "how far the light sways with time"),
            .time,
        ])

    init(_ spec: FilterSpec) {
        (x, y, decay, weight) = (spec.float("x"), spec.float("y"), spec.float("decay"), spec.float("weight"))
        (exposure, density, wobble, time) = (spec.float("exposure"), spec.float("density"), spec.float("wobble"), spec.float("time"))
    }

    func floats(time now: Float, size: (width: Int, height: Int)) -> [Float] {
        let t = Double(time + now)
        let lx = (Double(x) + Double(wobble) * sin(t)) * Double(size.width) * 256
        let ly = (Double(y) + Double(wobble) * cos(t * 0.7)) * Double(size.height) * 256
        return [decay, weight, exposure, Float(lx.rounded(.down)), Float(ly.rounded(.down)), Float((Double(density) * 256).rounded(.down))]
    }

    func cpu(_ input: RGBAPlane, _ env: CPUEnvironment) -> RGBAPlane {
        let f = env.floats
        let samples = GodRay.samples
        return input.map { x, y, p in
            var px = x << 8, py = y << 8
            let density = Int(f[5])
            let stepX = ((px - Int(f[3])) / 256 * density) / samples
            let stepY = ((py - Int(f[4])) / 256 * density) / samples
            var acc = SIMD3<Float>.zero
            var illumination: Float = 1
            for _ in 0..<samples {
                px -= stepX
                py -= stepY
                let c = input.at(px >> 8, py >> 8)
                let l = Float(Px.luma(c)) / 255
                acc += SIMD3(Float(Px.r(c)), Float(Px.g(c)), Float(Px.b(c))) * (l * l * illumination * f[1])
                illumination *= f[0]
            }
            let r = SIMD3(Float(Px.r(p)), Float(Px.g(p)), Float(Px.b(p))) + acc * (f[2] / Float(samples))
            return Px.pack(Px.byte(r.x), Px.byte(r.y), Px.byte(r.z), Px.a(p))
        }
    }

    func record(_ recorder: inout CommandRecorder, _ io: StepIO) throws {
        try io.dispatch(&recorder, .godRay, spec: [UInt32(GodRay.samples)])
    }
}

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

    func record(_ recorder: inout CommandRecorder, _ io: StepIO) throws {
        try io.dispatch(&recorder, .stars, a: SIMD4(Int32(cell), Int32(seed), Int32(density), 0))
    }
}

/// Disco (`disco.comp`): palette tiles cycling with time and a sweeping spotlight.
struct Disco: FilterKernel {
    static let palette: [SIMD3<Float>] = [[1.0, 0.25, 0.35], [1.0, 0.8, 0.2], [0.3, 1.0, 0.4],
                                          [0.2, 0.8, 1.0], [0.45, 0.3, 1.0], [1.0, 0.35, 0.95]]
    let tile: Int
    let strength, speed, time: Float

    static let description = FilterDescription(
        name: "disco", summary: "Dance-floor light: colour tiles cycling in time and a sweeping spotlight.",
        parameters: [
            .init("strength", .float(min: 0, max: 1, default: 0.7), "mix with the original"),
            .init("tile", .int(min: 2, max: 512, default: 48), "tile size in pixels"),
            .init("speed", .float(min: 0, max: 30, default: 2), "palette steps per second"),
            .time,
        ])

    init(_ spec: FilterSpec) {
        tile = spec.int("tile")
        (strength, speed, time) = (spec.float("strength"), spec.float("speed"), spec.float("time"))
    }

    func floats(time now: Float, size: (width: Int, height: Int)) -> [Float] {
        let t = Double(max(0, time + now))
        let step = (t * Double(speed)).rounded(.down).truncatingRemainder(dividingBy: 6)
        let w = Double(size.width), h = Double(size.height)
        return [strength, Float(step), Float((w * (0.5 + 0.35 * sin(t * 1.3))).rounded(.down)),
                Float((h * (0.5 + 0.35 * cos(t * 0.9))).rounded(.down)), Float((min(w, h) * 0.25).rounded(.down))]
    }

    func cpu(_ input: RGBAPlane, _ env: CPUEnvironment) -> RGBAPlane {
        let f = env.floats
        return input.map { x, y, p in
            let index = ((x / tile) + (y / tile) + Int(f[1])) % 6
            let o = SIMD3(Float(Px.r(p)), Float(Px.g(p)), Float(Px.b(p))) / 255
            var e = o * Disco.palette[index] * 1.6
            let dx = x - Int(f[2]), dy = y - Int(f[3]), radius = Int(f[4])
            if dx * dx + dy * dy < radius * radius { e *= 1.35 }
            let r = o + (e - o) * f[0]
            return Px.pack(Px.unit(r.x), Px.unit(r.y), Px.unit(r.z), Px.a(p))
        }
    }

    func record(_ recorder: inout CommandRecorder, _ io: StepIO) throws {
        try io.dispatch(&recorder, .disco, a: SIMD4(Int32(tile), 0, 0, 0))
    }
}
