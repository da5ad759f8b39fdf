import Foundation
import GraniteGPU

/// Vibes (`vibes.comp`): vibrance, a pulsing warm/cool push and a vignette.
struct Vibes: FilterKernel {
    let warmth, vignette, saturation, pulse, time: Float

    static let description = FilterDescription(
        name: "vibes", summary: "Mood grading: vibrance, a warm/cool push pulsing in time, vignette.",
        parameters: [
            .init("warmth", .float(min: -1, max: 1, default: 0.5), "warm (positive) or cool (negative)"),
            .init("vignette", .float(min: 0, max: 1, default: 0.4), "darkening towards the corners"),
            .init("saturation", .float(min: 0, max: 3, default: 1.3), "color intensity"),
            .init("pulse", .float(min: 0, max: 10, default: 1), "warmth pulses per second"),
            .time,
        ])

    init(_ spec: FilterSpec) {
        (warmth, vignette, saturation) = (spec.float("warmth"), spec.float("vignette"), spec.float("saturation"))
        (pulse, time) = (spec.float("pulse"), spec.float("time"))
    }

    func floats(time now: Float, size: (width: Int, height: Int)) -> [Float] {
        let t = Double(time + now)
        return [Float(Double(warmth) * (0.75 + 0.25 * sin(2 * Double.pi * Double(pulse) * t))), vignette, saturation]
    }

    func cpu(_ input: RGBAPlane, _ env: CPUEnvironment) -> RGBAPlane {
        let f = env.floats
        let w = Float(input.width), h = Float(input.height)
        return input.map { x, y, p in
            let o = SIMD3(Float(Px.r(p)), Float(Px.g(p)), Float(Px.b(p))) / 255
            let l = 0.299 * o.x + 0.587 * o.y + 0.114 * o.z
            var s = l + (o - l) * f[2]
            s.x += f[0] * 0.1
            s.z -= f[0] * 0.1
            let dx = (Float(x) + 0.5) / w - 0.5, dy = (Float(y) + 0.5) / h - 0.5
            s *= 1 - f[1] * (dx * dx + dy * dy) * 2
            return Px.pack(Px.unit(s.x), Px.unit(s.y), Px.unit(s.z), Px.a(p))
        }
    }

    func record(_ recorder: inout CommandRecorder, _ io: StepIO) throws(GPUError) {
        try io.dispatch(&recorder, .vibes)
    }
}
