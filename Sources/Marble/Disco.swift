import Foundation
import GraniteGPU

/// Disco (`disco.comp`): palette tiles cycling with time and a sweeping spotlight.
struct Disco: FilterKernel {
    static let palette: [SIMD3<Float>] = [[1.0, 0.25, 0.35], [1.0, 0.8, 0.2], [0.3, 1.0, 0.4],
                                          [0.2, 0.8, 1.0], [0.45, 0.3, 1.0], [1.0, 0.35, 0.95]]
    let tile: Int
    let strength, speed, time: Float

    static let description = FilterDescription(
        name: "disco", summary: "Dance-floor light: color tiles cycling in time and a sweeping spotlight.",
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

    func record(_ recorder: inout CommandRecorder, _ io: StepIO) throws(GPUError) {
        try io.dispatch(&recorder, .disco, a: SIMD4(Int32(tile), 0, 0, 0))
    }
}
